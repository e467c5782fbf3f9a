package plan_test

import (
	"testing"
	"time"

	"github.com/tenon-sh/tenon/pkg/manifest"
	"github.com/tenon-sh/tenon/pkg/plan"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

const ec2Manifests = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: aws}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: small-pods}
      requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [m5.large, m5.xlarge]}]
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: small-pods}
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  kubelet: {maxPods: 7, systemReserved: {cpu: 500m}}
`

// A NodePool referencing an EC2NodeClass of the manifests is priced with the embedded catalog
// and that NodeClass's kubelet settings, not the catalog's defaults.
func TestPlanPricesEC2NodeClassNodePoolsWithTheirKubeletSettings(t *testing.T) {
	set, err := manifest.Parse("aws.yaml", []byte(ec2Manifests))
	if err != nil {
		t.Fatal(err)
	}
	in, err := plan.Build(set, nil, plan.Options{Region: "us-east-1", InstanceTypes: plan.FirstOf(plan.SimulatedInstanceTypes(time.Now()), plan.EC2NodeClassInstanceTypes("us-east-1"))})
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Snapshot.NodePools) != 1 {
		t.Fatalf("%d NodePools", len(in.Snapshot.NodePools))
	}
	seen := 0
	for _, it := range in.Snapshot.NodePools[0].InstanceTypes {
		if it.Name != "m5.large" && it.Name != "m5.xlarge" {
			continue
		}
		seen++
		if it.Capacity[scheduling.Pods] != 7 || it.Overhead.SystemReserved[scheduling.CPU] != 500 {
			t.Errorf("%s: %d pods, %dm system-reserved; want the NodeClass's 7 and 500m", it.Name, it.Capacity[scheduling.Pods], it.Overhead.SystemReserved[scheduling.CPU])
		}
		if len(it.Offerings) == 0 {
			t.Errorf("%s has no offerings", it.Name)
		}
	}
	if seen != 2 {
		t.Fatalf("%d of the two m5 types listed", seen)
	}
}

package sim

import (
	"strings"
	"testing"

	"github.com/tenon-sh/tenon/pkg/manifest"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// A NodePool referencing an EC2NodeClass of the manifests buys from the embedded catalog with
// that NodeClass's kubelet settings, and the simulation says so.
func TestEC2NodeClassPoolsBuyWithTheirKubeletSettings(t *testing.T) {
	set, err := manifest.Parse("aws.yaml", []byte(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: aws}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: small-pods}
      requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}]
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: small-pods}
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  kubelet: {maxPods: 7}
`))
	if err != nil {
		t.Fatal(err)
	}
	env, err := NewEnv(set, &Workload{}, EnvOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := env.Pools[0]
	if p.Class != EC2NodeClassPrefix+"small-pods" || len(p.Types) == 0 {
		t.Fatalf("class %q with %d types", p.Class, len(p.Types))
	}
	for _, it := range p.Types {
		if it.Capacity[scheduling.Pods] != 7 {
			t.Fatalf("%s: %d pods, want the NodeClass's 7", it.Name, it.Capacity[scheduling.Pods])
		}
	}
	if !strings.Contains(strings.Join(env.Notes, "\n"), "EC2NodeClass small-pods: priced with the embedded us-east-1 catalog") {
		t.Fatalf("notes: %v", env.Notes)
	}
}

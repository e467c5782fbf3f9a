package sim

import (
	"fmt"
	"strings"

	"github.com/tenon-sh/tenon/pkg/catalog"
)

// sharedGPUCounts are the GPU counts of the catalog's GPU instance types: one NodeOverlay each
// gives a shared node its GPUs' replicas.
var sharedGPUCounts = []int{1, 2, 4, 6, 8, 12, 16}

// SharedGPUNodePools returns the manifests that serve fractions of a GPU from GPUs shared
// shares ways, beside examples/simulate/gpu-nodepools.yaml (whose SimNodeClass gpu they use):
// a NodePool gpu-shared of the same GPU types, tainted nvidia.com/gpu.shared so that only pods
// asking for shares land there (a shared node's GPUs are all shared: the device plugin's
// time-slicing with renameByDefault advertises them as nvidia.com/gpu.shared alone), and one
// NodeOverlay per GPU count giving its types shares × GPUs of nvidia.com/gpu.shared.
func SharedGPUNodePools(shares int64) string {
	var b strings.Builder
	b.WriteString(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu-shared
spec:
  template:
    spec:
      nodeClassRef: {group: sim.tenon.sh, kind: SimNodeClass, name: gpu}
      taints:
      - {key: nvidia.com/gpu, effect: NoSchedule}
      - {key: nvidia.com/gpu.shared, effect: NoSchedule}
      requirements:
      - {key: karpenter.k8s.aws/instance-gpu-manufacturer, operator: In, values: [nvidia]}
      - {key: kubernetes.io/arch, operator: In, values: [amd64]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}
      expireAfter: 720h
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
`)
	for _, n := range sharedGPUCounts {
		fmt.Fprintf(&b, `---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata:
  name: gpu-shared-%d
spec:
  requirements:
  - {key: karpenter.sh/nodepool, operator: In, values: [gpu-shared]}
  - {key: karpenter.k8s.aws/instance-gpu-count, operator: In, values: ["%d"]}
  capacity:
    %s: "%d"
`, n, n, ResourceGPUShared, int64(n)*shares)
	}
	return b.String()
}

// MIGNodePool returns the manifest that serves fractions of a GPU from MIG instances of a
// profile, beside examples/simulate/gpu-nodepools.yaml (whose SimNodeClass gpu it uses): a
// NodePool gpu-mig of the GPU types that have the profile, its nodes labelled
// nvidia.com/mig.config all-<profile> (so their GPUs are partitioned: catalog.PartitionGPUs)
// and tainted with the profile's resource, so that only pods asking for its instances land
// there.
func MIGNodePool(profile string) string {
	res := catalog.MIG{Profile: profile}.Resource()
	return fmt.Sprintf(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu-mig
spec:
  template:
    metadata:
      labels:
        %s: all-%s
    spec:
      nodeClassRef: {group: sim.tenon.sh, kind: SimNodeClass, name: gpu}
      taints:
      - {key: nvidia.com/gpu, effect: NoSchedule}
      - {key: %s, effect: NoSchedule}
      requirements:
      - {key: karpenter.k8s.aws/instance-gpu-manufacturer, operator: In, values: [nvidia]}
      - {key: karpenter.k8s.aws/instance-gpu-name, operator: In, values: [%s]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}
      expireAfter: 720h
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
`, catalog.LabelMIGConfig, profile, res, strings.Join(catalog.MIGGPUs(profile), ", "))
}

package dra

import (
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// NodeGPUs is what the cluster's DRA objects say of one node's GPUs: how many devices
// NVIDIA's driver publishes for it, and how many allocated claims hold.
type NodeGPUs struct {
	Published, Allocated int64
}

// GPUsByNode reads, by node name, the GPUs published in ResourceSlices (driver
// gpu.nvidia.com, for one node) and those allocated claims hold on a node (their results of
// that driver, administrative access left out, on the node their allocation's node selector
// names by metadata.name).
func GPUsByNode(slices []*resourcev1.ResourceSlice, claims []*resourcev1.ResourceClaim) map[string]NodeGPUs {
	out := map[string]NodeGPUs{}
	for _, s := range slices {
		if s.Spec.Driver != DriverNVIDIA || s.Spec.NodeName == nil {
			continue
		}
		g := out[*s.Spec.NodeName]
		g.Published += int64(len(s.Spec.Devices))
		out[*s.Spec.NodeName] = g
	}
	for _, c := range claims {
		a := c.Status.Allocation
		if a == nil {
			continue
		}
		node, ok := allocatedNode(a.NodeSelector)
		if !ok {
			continue
		}
		g := out[node]
		for _, r := range a.Devices.Results {
			if r.Driver == DriverNVIDIA && (r.AdminAccess == nil || !*r.AdminAccess) {
				g.Allocated++
			}
		}
		out[node] = g
	}
	return out
}

// allocatedNode returns the one node a claim's allocation is on, as kube-scheduler writes it
// (a term selecting metadata.name In [node]).
func allocatedNode(sel *corev1.NodeSelector) (string, bool) {
	if sel == nil || len(sel.NodeSelectorTerms) != 1 {
		return "", false
	}
	t := sel.NodeSelectorTerms[0]
	for _, f := range t.MatchFields {
		if f.Key == "metadata.name" && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
			return f.Values[0], true
		}
	}
	return "", false
}

// CountNodeGPUs sets each node's allocatable GPUs to what the DRA objects say of it (gpus, from
// GPUsByNode): the more of its allocatable nvidia.com/gpu and the devices published for it, less
// those its allocated claims hold (never below zero). Nodes the objects do not name keep theirs.
func CountNodeGPUs(nodes []solver.Node, gpus map[string]NodeGPUs) {
	for i := range nodes {
		n := &nodes[i]
		g, ok := gpus[n.Name]
		if !ok {
			continue
		}
		have := max(n.Allocatable[scheduling.NvidiaGPU], g.Published)
		n.Allocatable[scheduling.NvidiaGPU] = max(have-g.Allocated, 0)
	}
}

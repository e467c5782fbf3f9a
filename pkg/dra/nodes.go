package dra

import (
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// DeviceCount is what the cluster's DRA objects say of one kind of a node's devices: how many
// NVIDIA's driver publishes for it, and how many allocated claims hold.
type DeviceCount struct {
	Published, Allocated int64
}

// NodeDevices counts a node's NVIDIA devices by the resource they are counted as
// (nvidia.com/gpu for whole GPUs, nvidia.com/mig-<profile> for MIG instances: ResourceOf).
type NodeDevices map[corev1.ResourceName]DeviceCount

// DevicesByNode reads, by node name, the NVIDIA devices published in ResourceSlices (driver
// gpu.nvidia.com, for one node) and those allocated claims hold on a node (their results of
// that driver, administrative access left out, on the node their allocation's node selector
// names by metadata.name), each counted as its resource. An allocated device no slice
// publishes counts as a whole GPU.
func DevicesByNode(rslices []*resourcev1.ResourceSlice, claims []*resourcev1.ResourceClaim) map[string]NodeDevices {
	out := map[string]NodeDevices{}
	type device struct{ pool, name string }
	kinds := map[device]corev1.ResourceName{}
	count := func(node string, res corev1.ResourceName, published, allocated int64) {
		nd := out[node]
		if nd == nil {
			nd = NodeDevices{}
			out[node] = nd
		}
		c := nd[res]
		c.Published += published
		c.Allocated += allocated
		nd[res] = c
	}
	for _, s := range rslices {
		if s.Spec.Driver != DriverNVIDIA || s.Spec.NodeName == nil {
			continue
		}
		for i := range s.Spec.Devices {
			d := &s.Spec.Devices[i]
			res := ResourceOf(d)
			kinds[device{s.Spec.Pool.Name, d.Name}] = res
			count(*s.Spec.NodeName, res, 1, 0)
		}
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
		for _, r := range a.Devices.Results {
			if r.Driver != DriverNVIDIA || (r.AdminAccess != nil && *r.AdminAccess) {
				continue
			}
			res, ok := kinds[device{r.Pool, r.Device}]
			if !ok {
				res = scheduling.ResourceNvidiaGPU
			}
			count(node, res, 0, 1)
		}
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

// CountNodeDevices sets each node's allocatable devices to what the DRA objects say of it
// (from DevicesByNode): per resource, the more of its allocatable amount and the devices
// published for it, less those its allocated claims hold (never below zero). Nodes and
// resources the objects do not name keep theirs; a resource tenon has no slot left for is
// left out.
func CountNodeDevices(nodes []solver.Node, devs map[string]NodeDevices) {
	for i := range nodes {
		n := &nodes[i]
		for res, c := range devs[n.Name] {
			slot, err := scheduling.InternResource(res)
			if err != nil {
				continue
			}
			have := max(n.Allocatable[slot], c.Published)
			n.Allocatable[slot] = max(have-c.Allocated, 0)
		}
	}
}

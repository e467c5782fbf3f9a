package solver

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// Snapshot is everything a solve looks at. Solve never modifies it.
type Snapshot struct {
	// NodePools that may launch capacity. Order does not matter: pools are tried by weight
	// (highest first), then by the price of what they would buy, then by name.
	NodePools []NodePool
	// Nodes are the nodes that exist and the NodeClaims in flight (InFlight set), with the pods
	// bound to them.
	Nodes []Node
	// DaemonSets whose pods would land on new nodes; their requests are reserved on every claim
	// and node they would land on.
	DaemonSets []DaemonSet
	// Pods are the pending pods to place.
	Pods []*corev1.Pod
	// NamespaceLabels holds the labels of namespaces, for pod affinity terms that select
	// namespaces by label. A namespace missing here has no labels.
	NamespaceLabels map[string]map[string]string
	// Gangs are the PodGroups with a gang policy; pods name theirs in spec.schedulingGroup
	// (gang.go).
	Gangs []Gang
	// Devices holds what the dynamic resource claims (DRA) of pods with claims need, as
	// pkg/dra resolves them. A pod with claims and no entry is unschedulable (ReasonDevices):
	// tenon does not plan a pod whose devices it has not matched.
	Devices map[*corev1.Pod]*DeviceNeed
}

// DeviceNeed is what a pod's dynamic resource claims need of its node: Count devices, counted
// as the extended resource Resource (a GPU claimed through DRA takes the node's nvidia.com/gpu
// as a device-plugin request would), on a node that meets Requirements (the instance types
// whose devices satisfy every request, or the node a claim is already allocated on). Reason,
// when set, says why no node can serve the claims instead. Key identifies the need among the
// pods (pods with equal keys need the same); pkg/dra fills it.
type DeviceNeed struct {
	Resource     corev1.ResourceName
	Count        int64
	Requirements scheduling.Requirements
	Reason       *Reason
	Key          string
}

// addTo adds the devices to a pod's requests; false when no instance type has the resource
// they are counted as. A nil need adds nothing.
func (n *DeviceNeed) addTo(req *scheduling.Resources) bool {
	if n == nil || n.Count <= 0 {
		return true
	}
	slot, ok := scheduling.ResourceIndex(n.Resource)
	if ok {
		req[slot] = scheduling.SatAdd(req[slot], n.Count)
	}
	return ok
}

// narrow intersects each of a pod's node alternatives with the need's requirements.
func (n *DeviceNeed) narrow(alts []scheduling.Requirements) {
	if n == nil || n.Requirements.Len() == 0 {
		return
	}
	for i := range alts {
		alts[i] = alts[i].Intersect(n.Requirements)
	}
}

// NodePool is a NodePool as the solver needs it.
type NodePool struct {
	Name string
	// Weight orders pools: a higher weight is tried first.
	Weight int32
	// Requirements of the pool's template (custom keys, instance shape, zones, capacity types).
	// The solver adds karpenter.sh/nodepool In [Name] itself.
	Requirements scheduling.Requirements
	// Labels of the pool's template; nodes carry them.
	Labels map[string]string
	// Taints every node of the pool carries; StartupTaints are removed after start and do not
	// keep pods off a claim.
	Taints        []corev1.Taint
	StartupTaints []corev1.Taint
	// InstanceTypes the pool may launch (typically the cloud's types for its NodeClass). The
	// solver keeps those compatible with Requirements.
	InstanceTypes []*catalog.InstanceType
	// Limits caps the pool's total capacity; HasLimit says which slots of Limits apply.
	// NodeLimit caps its node count (negative: no limit).
	Limits    scheduling.Resources
	HasLimit  [scheduling.NumResources]bool
	NodeLimit int
	// Usage is the capacity of the pool's existing nodes and in-flight claims, and Nodes their
	// count; new claims may only add what the limits leave.
	Usage scheduling.Resources
	Nodes int
	// ZoneMaxSkew, when positive, keeps the pool's nodes balanced across the zones it can
	// launch in: each new claim whose pods leave it a choice of zone is pinned to the cheapest
	// zone where one more node keeps the most and least filled zones within ZoneMaxSkew nodes of
	// each other, or else to the least filled one (see balanceZones).
	ZoneMaxSkew int
}

// PoolTaken is capacity and a node count held against a NodePool's limits (Options.PoolsTaken).
type PoolTaken struct {
	Capacity scheduling.Resources
	Nodes    int
}

// Node is an existing node, or a NodeClaim in flight (InFlight) whose node has not registered.
type Node struct {
	Name string
	// NodePool that owns the node ("" for nodes tenon does not manage).
	NodePool string
	// Labels of the node; for an in-flight claim, those its requirements decide.
	Labels map[string]string
	Taints []corev1.Taint
	// Allocatable is what pods may request on the node; for an in-flight claim, that of the
	// instance type it will most likely launch.
	Allocatable scheduling.Resources
	// Pods bound to the node (DaemonSet pods included); they count against Allocatable, towards
	// topology domains, and their anti-affinity terms repel pending pods.
	Pods []*corev1.Pod
	// Initialized nodes are tried before uninitialized ones, which are tried before claims in
	// flight.
	Initialized bool
	InFlight    bool
	// MarkedForDeletion nodes take no pods (their own pods should be in Snapshot.Pods).
	MarkedForDeletion bool
	// Price is what the node costs per hour (for reports and disruption; 0 when unknown).
	Price float64
}

// DaemonSet is a DaemonSet's pod template, as a pod.
type DaemonSet struct {
	Namespace, Name string
	Pod             *corev1.Pod
}

// Reschedulable reports whether a bound pod would need a new node if its node went away: it is
// not finished or being deleted, not owned by a DaemonSet (it goes with the node), and not a
// static (mirror) pod.
func Reschedulable(p *corev1.Pod) bool {
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.DeletionTimestamp != nil {
		return false
	}
	if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return false
	}
	for _, r := range p.OwnerReferences {
		if r.Kind == "DaemonSet" {
			return false
		}
	}
	return true
}

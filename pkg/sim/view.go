package sim

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// View is what a policy sees of a run: the nodes, the pods, the workload's shapes and the
// cloud's current offerings. Everything it returns is read-only.
type View struct {
	r     *run
	types map[int]poolTypes
	// counts caches, for the event being handled, each pool's nodes and disrupting nodes.
	counts     [][2]int
	countsSeen int
	nodes      []*Node
	nodesVer   int
}

type poolTypes struct {
	from    []*catalog.InstanceType // the cloud's slice they were filtered from
	out     []*catalog.InstanceType
	version int
}

// Env returns the simulation's environment.
func (v *View) Env() *Env { return v.r.env }

// Now returns the virtual time.
func (v *View) Now() time.Duration { return v.r.now }

// Nodes returns the nodes not gone (launching, ready, disrupting), in launch order. The slice
// is shared: it stays valid until the next node launches or goes.
func (v *View) Nodes() []*Node {
	if v.nodes == nil || v.nodesVer != v.r.aliveVer {
		v.nodes = v.nodes[:0]
		for _, id := range v.r.alive {
			v.nodes = append(v.nodes, v.r.nodes[id])
		}
		v.nodesVer = v.r.aliveVer
	}
	return v.nodes
}

// Pending returns the pods waiting for a node (not nominated), oldest first.
func (v *View) Pending() []PodID { return v.r.pend.list(v.r) }

// FreeRoom returns the free room of the nodes not gone or disrupting, together.
func (v *View) FreeRoom() scheduling.Resources { return v.r.free }

// Node returns a node by ID.
func (v *View) Node(id NodeID) *Node { return v.r.nodes[id] }

// Pod returns a pod by ID.
func (v *View) Pod(id PodID) *Pod { return &v.r.pods[id] }

// Shape returns the shape of a pod.
func (v *View) Shape(id PodID) *Shape { return &v.r.env.Workload.Shapes[v.r.pods[id].Shape] }

// Requests returns what a pod requests.
func (v *View) Requests(id PodID) *scheduling.Resources { return v.r.requests(&v.r.pods[id]) }

// Compatible reports whether pods of a shape tolerate a node's taints and match its labels.
func (v *View) Compatible(shape int, n *Node) bool { return v.r.compatible(shape, n) }

// RoomEpoch counts the events that can give pods more room (a pod leaving a node, a launch,
// an instance shutting down): a placement that failed is worth trying again only once it
// changed.
func (v *View) RoomEpoch() uint64 { return v.r.roomEpoch }

// CountSolve counts a call to the solver, for the run's statistics.
func (v *View) CountSolve() { v.r.stats.SolverCalls++ }

// APIPod returns the pod as a Kubernetes object, for the solver: a shallow copy of its shape's
// template, named after its job and replica. The object is kept while the pod lives.
func (v *View) APIPod(id PodID) *corev1.Pod {
	if api, ok := v.r.api[id]; ok {
		return api
	}
	p := &v.r.pods[id]
	cp := *v.r.env.Workload.Shapes[p.Shape].Pod
	cp.Name = fmt.Sprintf("job-%d-%d", p.Job, p.ID-v.r.firstPod[p.Job])
	if v.r.isGang(p.Job) {
		group := gangName(p.Job)
		cp.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &group}
	}
	v.r.api[id] = &cp
	return &cp
}

// provisionPod is the pod as a provisioner sees it: APIPod, but a pod of a gang whose other
// pods run or are nominated to nodes names no PodGroup: capacity for it completes the gang
// (kube-scheduler counts the running pods towards minCount; a launch for the gang that failed
// is bought again alone, as the controller buys a failed member again beside the claims in
// flight that hold the others), and the snapshot the solver sees need not hold the nodes of
// the others.
func (v *View) provisionPod(id PodID) *corev1.Pod {
	api := v.APIPod(id)
	if api.Spec.SchedulingGroup == nil || !v.r.gangOnNodes(v.r.pods[id].Job) {
		return api
	}
	return withoutGang(api)
}

// withoutGang returns the pod as one that names no PodGroup.
func withoutGang(p *corev1.Pod) *corev1.Pod {
	if p.Spec.SchedulingGroup == nil {
		return p
	}
	cp := *p
	cp.Spec.SchedulingGroup = nil
	return &cp
}

// Gangs returns the PodGroups of the workload's gangs (Options.Gangs), which the pods of
// gangs name in spec.schedulingGroup (APIPod).
func (v *View) Gangs() []solver.Gang { return v.r.gangs() }

// ExpendableCutoff is the priority below which pods are expendable (Options).
func (v *View) ExpendableCutoff() int32 {
	if c := v.r.opts.ExpendablePriorityCutoff; c != nil {
		return *c
	}
	return scheduling.DefaultExpendableCutoff
}

// NotExpendable returns the pods of ids that are not expendable.
func (v *View) NotExpendable(ids []PodID) []PodID {
	cut := v.ExpendableCutoff()
	for i, id := range ids {
		if scheduling.Expendable(v.APIPod(id), cut) {
			out := slices.Clone(ids[:i])
			for _, id := range ids[i+1:] {
				if !scheduling.Expendable(v.APIPod(id), cut) {
					out = append(out, id)
				}
			}
			return out
		}
	}
	return ids // the common case: none is expendable, nothing is copied
}

// InstanceTypes returns the pool's instance types as the cloud sells them now: an offering with
// no room (a full capacity pool, a spent reservation) is not Available.
func (v *View) InstanceTypes(pool int) []*catalog.InstanceType {
	types, _ := v.instanceTypes(pool)
	return types
}

// instanceTypes is InstanceTypes with a version that changes whenever the result does.
func (v *View) instanceTypes(pool int) ([]*catalog.InstanceType, int) {
	p := v.r.env.Pools[pool]
	cur, err := v.r.cloud.InstanceTypes(p.Class, v.r.wall(v.r.now))
	if err != nil {
		return p.Types, 0
	}
	if v.types == nil {
		v.types = map[int]poolTypes{}
	}
	c, ok := v.types[pool]
	if ok && len(c.from) == len(cur) && (len(cur) == 0 || &c.from[0] == &cur[0]) {
		return c.out, c.version
	}
	want := make(map[string]bool, len(p.Types))
	for _, it := range p.Types {
		want[it.Name] = true
	}
	out := make([]*catalog.InstanceType, 0, len(p.Types))
	for _, it := range cur {
		if want[it.Name] {
			// As the pool's nodes have it: its GPUs in the pool's MIG layout, if any (the
			// layout was checked when the pool was read).
			it, _ = catalog.PartitionGPUs(it, p.Labels[catalog.LabelMIGConfig])
			out = append(out, it)
		}
	}
	out = v.r.env.overlay(pool, out)
	v.types[pool] = poolTypes{from: cur, out: out, version: c.version + 1}
	return out, c.version + 1
}

// Usage returns the capacity and the number of a pool's nodes (launching and ready), as its
// limits count them.
func (v *View) Usage(pool int) (scheduling.Resources, int) {
	var capacity scheduling.Resources
	n := 0
	for _, id := range v.r.alive {
		if nd := v.r.nodes[id]; nd.Pool == pool {
			capacity = capacity.Add(nd.Type.Capacity)
			n++
		}
	}
	return capacity, n
}

// Allowed returns how many more of a pool's nodes its disruption budgets let be disrupted now
// for reason: the budgets' allowance for the pool's node count, less the nodes already
// disrupting.
func (v *View) Allowed(pool int, reason apisv1.DisruptionReason) int {
	if v.counts == nil || v.countsSeen != v.r.stats.Events {
		v.counts = make([][2]int, len(v.r.env.Pools))
		for _, id := range v.r.alive {
			n := v.r.nodes[id]
			v.counts[n.Pool][0]++
			if n.Disrupting {
				v.counts[n.Pool][1]++
			}
		}
		v.countsSeen = v.r.stats.Events
	}
	total, disrupting := v.counts[pool][0], v.counts[pool][1]
	np := v.r.env.Pools[pool].NodePool
	return max(np.AllowedDisruptions(v.r.wall(v.r.now), total, reason)-disrupting, 0)
}

// SolverNode returns a node as the solver's snapshot takes it. When no shape of the workload
// has topology terms (Shape.Simple), running pods matter to the solver only through the room
// they take: the node comes with its free room as allocatable and no pods, which is much
// cheaper to compile. Otherwise it carries its pods. The solver subtracts the DaemonSets'
// requests itself.
func (v *View) SolverNode(n *Node) solver.Node {
	out := solver.Node{
		Name:        n.Name,
		NodePool:    v.r.env.Pools[n.Pool].Name,
		Labels:      n.snapLbls,
		Taints:      v.r.env.Pools[n.Pool].Taints,
		Allocatable: n.Free().Add(n.daemons),
		Initialized: n.State == NodeReady,
		InFlight:    n.State == NodeLaunching,
		Price:       n.Price,
	}
	if v.r.env.topology {
		out.Allocatable = n.Alloc.Add(n.daemons)
		out.Pods = make([]*corev1.Pod, 0, len(n.Pods))
		for _, id := range n.Pods {
			out.Pods = append(out.Pods, v.APIPod(id))
		}
	}
	return out
}

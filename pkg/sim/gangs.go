package sim

import (
	"slices"
	"strconv"

	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// Gangs (Options.Gangs). A job of more than one replica is a gang: a PodGroup whose minCount
// is its replicas. The simulated kube-scheduler binds a gang as its gang scheduling does: the
// pods of the gang not running yet bind together, once each has room on a ready node at the
// same time (a pod nominated to a node, on that node), or none binds. A gang's pods nominated
// to nodes still booting keep their room while the gang can still complete there; once every
// node they were nominated to is ready and the gang still cannot bind (some pod of it got no
// node), they let the room go and wait pending with the rest. After a gang has bound, a pod of
// it evicted later binds alone (the running pods count towards minCount).
//
// Capacity bought for a gang that does not complete is paid for and idle: the report's
// stranded GPU-hours count it.

// isGang reports whether job j is a gang.
func (r *run) isGang(j int32) bool {
	return r.gangTried != nil && r.env.Workload.Jobs[j].Replicas > 1
}

// gangName is the name of job j's PodGroup (in its pods' namespace).
func gangName(j int32) string { return "job-" + strconv.Itoa(int(j)) }

// gangWaits notes that gang j has a pod waiting: it is tried again after this event.
func (r *run) gangWaits(j int32) {
	r.gangTried[j] = 0
	if i, found := slices.BinarySearch(r.gangsWaiting, j); !found {
		r.gangsWaiting = slices.Insert(r.gangsWaiting, i, j)
	}
}

// tryGangs tries every waiting gang, oldest first, that something may have let bind since
// it last failed.
func (r *run) tryGangs() {
	kept := r.gangsWaiting[:0]
	for _, j := range r.gangsWaiting {
		if r.gangTried[j] != r.gangEpoch+1 && !r.tryGang(j) {
			r.gangTried[j] = r.gangEpoch + 1
		}
		if r.gangWaiting(j) {
			kept = append(kept, j)
		}
	}
	r.gangsWaiting = kept
}

// gangWaiting reports whether gang j has a pod pending or nominated.
func (r *run) gangWaiting(j int32) bool { return r.gangHas(j, PodPending, PodNominated) }

// gangOnNodes reports whether a pod of gang j runs or is nominated to a node.
func (r *run) gangOnNodes(j int32) bool { return r.gangHas(j, PodRunning, PodNominated) }

// gangHas reports whether a pod of gang j is in state a or b.
func (r *run) gangHas(j int32, a, b PodState) bool {
	for id := r.firstPod[j]; id < r.firstPod[j+1]; id++ {
		if s := r.pods[id].State; s == a || s == b {
			return true
		}
	}
	return false
}

// tryGang binds the pods of gang j that are pending or nominated, together, when each has room
// on a ready node at once; else it binds none, and reports whether it bound them. A gang that
// cannot bind and has no pod nominated to a node still booting releases its nominations.
func (r *run) tryGang(j int32) bool {
	var (
		members []*Pod
		need    scheduling.Resources // of the members on no node yet
		booting bool                 // a member is nominated to a node not ready yet
	)
	for id := r.firstPod[j]; id < r.firstPod[j+1]; id++ {
		p := &r.pods[id]
		switch p.State {
		case PodPending:
			members = append(members, p)
			need = need.Add(*r.requests(p))
		case PodNominated:
			members = append(members, p)
			booting = booting || r.nodes[p.Node].State != NodeReady
		}
	}
	if len(members) == 0 {
		return false
	}
	if !booting && need.Fits(&r.free) {
		if place := r.placeGang(members); place != nil {
			for i, p := range members {
				r.bind(p, place[i])
			}
			return true
		}
	}
	released := false
	if !booting {
		for _, p := range members {
			if p.State == PodNominated {
				r.detach(p)
				p.State = PodPending
				p.stuck = 0
				r.pend.add(p, true)
				released = true
			}
		}
	}
	if released {
		r.trigger()
	}
	return false
}

// placeGang finds a ready node for each member at once (a nominated member on its node, the
// others as bindAnywhere would choose, counting the members placed before them), or nil.
func (r *run) placeGang(members []*Pod) []*Node {
	place := make([]*Node, len(members))
	var taken []scheduling.Resources // by position in r.alive
	for i, p := range members {
		if p.State == PodNominated {
			place[i] = r.nodes[p.Node]
			continue
		}
		if taken == nil {
			taken = make([]scheduling.Resources, len(r.alive))
		}
		best := r.bestNode(p, taken)
		if best < 0 {
			return nil
		}
		taken[best] = taken[best].Add(*r.requests(p))
		place[i] = r.nodes[r.alive[best]]
	}
	return place
}

// gangs lists the PodGroups of the workload's gangs, for the solver (nil without
// Options.Gangs).
func (r *run) gangs() []solver.Gang {
	if r.gangTried == nil {
		return nil
	}
	if r.gangList == nil {
		r.gangList = []solver.Gang{}
		w := r.env.Workload
		for j := range w.Jobs {
			if r.isGang(int32(j)) {
				r.gangList = append(r.gangList, solver.Gang{Namespace: w.Shapes[w.Jobs[j].Shape].Pod.Namespace, Name: gangName(int32(j)), MinCount: w.Jobs[j].Replicas})
			}
		}
	}
	return r.gangList
}

// Gangs are disrupted whole (a PodGroup's disruption mode All, which tenon's controller honours:
// pkg/disruption's WholeGroups): evicting part of a running training job stops all of it.

// splitsGang reports whether taking node n away alone would split a gang: a pod of a gang runs
// (or is nominated) on it and another of the same gang on another node.
func (r *run) splitsGang(n *Node) bool {
	if r.gangTried == nil {
		return false
	}
	for _, id := range n.Pods {
		j := r.pods[id].Job
		if !r.isGang(j) {
			continue
		}
		for m := r.firstPod[j]; m < r.firstPod[j+1]; m++ {
			if p := &r.pods[m]; p.Node != NoNode && p.Node != n.ID && (p.State == PodRunning || p.State == PodNominated) {
				return true
			}
		}
	}
	return false
}

// wholeGroups names the gangs with pods on nodes, namespace/name, for pkg/disruption.
func (r *run) wholeGroups() []string {
	if r.gangTried == nil {
		return nil
	}
	var out []string
	for j := range r.env.Workload.Jobs {
		if j := int32(j); r.isGang(j) && r.gangOnNodes(j) {
			ns := r.env.Workload.Shapes[r.pods[r.firstPod[j]].Shape].Pod.Namespace
			out = append(out, ns+"/"+gangName(j))
		}
	}
	return out
}

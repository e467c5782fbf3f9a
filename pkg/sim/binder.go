package sim

import (
	"cmp"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// The simulated kube-scheduler: it binds a pending pod to a ready node with room as soon as
// one exists (when the pod arrives, when a node becomes ready, when room frees up), scoring
// nodes by Options.Scheduler. It checks resources, taints and required node affinity; it does
// not model topology spread or inter-pod affinity. Every policy shares it: tenon never binds a
// pod, kube-scheduler does.

// bindAnywhere binds a pending pod to the best ready node with room, if any.
func (r *run) bindAnywhere(p *Pod) bool {
	k := r.bestNode(p, nil)
	if k < 0 {
		return false
	}
	r.bind(p, r.nodes[r.alive[k]])
	return true
}

// bestNode returns the position in r.alive of the ready node, not disrupting, with room for
// pod p that scores best, or -1. taken, when not nil, is room already promised on each node
// of r.alive (by position), which the pod cannot have.
func (r *run) bestNode(p *Pod, taken []scheduling.Resources) int {
	req := r.requests(p)
	best, bestScore := -1, 0.0
	for k, id := range r.alive {
		n := r.nodes[id]
		if n.State != NodeReady || n.Disrupting {
			continue
		}
		free := n.Free()
		if taken != nil {
			free = free.Sub(taken[k])
		}
		if !req.Fits(&free) || !r.compatible(int(p.Shape), n) {
			continue
		}
		if s := r.score(n, &free, req); best < 0 || s > bestScore {
			best, bestScore = k, s
		}
	}
	return best
}

// score rates a node for a pod: the share of CPU and memory left free after binding
// (LeastAllocated), or its opposite (MostAllocated).
func (r *run) score(n *Node, free, req *scheduling.Resources) float64 {
	s := 0.0
	k := 0
	for _, i := range [...]int{scheduling.CPU, scheduling.Memory} {
		if a := n.Alloc[i]; a > 0 {
			s += float64(free[i]-req[i]) / float64(a)
			k++
		}
	}
	if k > 0 {
		s /= float64(k)
	}
	if r.opts.Scheduler == MostAllocated {
		return -s
	}
	return s
}

// fillNode binds pending pods, oldest first, to a ready node while they fit.
func (r *run) fillNode(n *Node) {
	if n.State != NodeReady || n.Disrupting || r.pend.size == 0 {
		return
	}
	shapes := r.env.Workload.Shapes
	excluded := make([]bool, len(shapes))
	for {
		free := n.Free()
		best := -1
		var bestSince time.Duration
		for s := range shapes {
			if excluded[s] {
				continue
			}
			id, since, ok := r.pend.head(r, s)
			if !ok {
				excluded[s] = true
				continue
			}
			if !shapes[s].Requests.Fits(&free) || !r.compatible(s, n) {
				excluded[s] = true
				continue
			}
			if best < 0 || since < bestSince || since == bestSince && id < r.pend.q[best][r.pend.headIdx[best]].id {
				best, bestSince = s, since
			}
		}
		if best < 0 {
			return
		}
		id, _, _ := r.pend.head(r, best)
		r.bind(&r.pods[id], n)
	}
}

// compatible reports whether pods of a shape may run on a node: they tolerate its taints and
// one of their node-affinity alternatives matches its labels. Answers are cached per node
// signature.
func (r *run) compatible(shape int, n *Node) bool {
	row := r.compat[shape]
	if int(n.sig) < len(row) && row[n.sig] != 0 {
		return row[n.sig] == 1
	}
	sh := &r.env.Workload.Shapes[shape]
	ok := scheduling.UntoleratedTaint(sh.tolerations, r.env.Pools[n.Pool].Taints) == nil
	if ok {
		ok = false
		for _, a := range sh.alts {
			if a.Matches(n.labels) == nil {
				ok = true
				break
			}
		}
	}
	if nodeSpecific(sh) {
		return ok
	}
	for len(row) <= int(n.sig) {
		row = append(row, 0)
	}
	row[n.sig] = 2
	if ok {
		row[n.sig] = 1
	}
	r.compat[shape] = row
	return ok
}

// nodeSpecific reports whether a shape's requirements name hostnames, so that nodes with equal
// signatures may still differ for it.
func nodeSpecific(sh *Shape) bool {
	for _, a := range sh.alts {
		if a.Has(corev1.LabelHostname) || a.Has(scheduling.FieldNodeName) {
			return true
		}
	}
	return false
}

// signature numbers nodes by what decides their labels (but the hostname) and taints.
func (r *run) signature(n *Node) int32 {
	key := n.Type.Name + "|" + n.Offering.Zone + "|" + n.Offering.CapacityType + "|" + n.Offering.ReservationID + "|" + r.env.Pools[n.Pool].Name
	if s, ok := r.sigs[key]; ok {
		return s
	}
	s := int32(len(r.sigs))
	r.sigs[key] = s
	return s
}

// pendingQueue keeps the pending pods in line per shape, oldest first, and the pending pods of
// gangs in a line of their own after the shapes' (the binder places a gang whole, gangs.go,
// never pod by pod). Entries go stale when a pod leaves pending; they are skipped and
// compacted away.
type pendingQueue struct {
	q       [][]pendEntry
	headIdx []int
	size    int // pods pending and queued
}

type pendEntry struct {
	id    PodID
	since time.Duration
	seq   uint32
}

func (q *pendingQueue) init(shapes int) {
	q.q = make([][]pendEntry, shapes+1)
	q.headIdx = make([]int, shapes+1)
}

// add queues a pending pod: in its shape's line, or in the gangs' line when gang is set.
func (q *pendingQueue) add(p *Pod, gang bool) {
	p.pendSeq++
	p.queued = true
	line := int(p.Shape)
	if gang {
		line = len(q.q) - 1
	}
	q.q[line] = append(q.q[line], pendEntry{id: p.ID, since: p.PendingSince, seq: p.pendSeq})
	q.size++
}

// leave notes that a queued pod is no longer pending.
func (q *pendingQueue) leave(p *Pod) {
	if p.queued {
		p.queued = false
		q.size--
	}
}

func (q *pendingQueue) valid(r *run, e *pendEntry) bool {
	p := &r.pods[e.id]
	return p.queued && p.pendSeq == e.seq
}

// head returns the oldest pending pod of a shape.
func (q *pendingQueue) head(r *run, s int) (PodID, time.Duration, bool) {
	es := q.q[s]
	h := q.headIdx[s]
	for h < len(es) && !q.valid(r, &es[h]) {
		h++
	}
	if h == len(es) {
		q.q[s], q.headIdx[s] = es[:0], 0
		return 0, 0, false
	}
	q.headIdx[s] = h
	return es[h].id, es[h].since, true
}

// list returns every pending pod, oldest first (then by ID), compacting the queues.
func (q *pendingQueue) list(r *run) []PodID {
	var all []pendEntry
	for s, es := range q.q {
		kept := es[:0]
		for _, e := range es[q.headIdx[s]:] {
			if q.valid(r, &e) {
				kept = append(kept, e)
			}
		}
		q.q[s], q.headIdx[s] = kept, 0
		all = append(all, kept...)
	}
	slices.SortFunc(all, func(a, b pendEntry) int {
		return cmp.Or(cmp.Compare(a.since, b.since), cmp.Compare(a.id, b.id))
	})
	out := make([]PodID, len(all))
	for i, e := range all {
		out[i] = e.id
	}
	return out
}

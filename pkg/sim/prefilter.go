package sim

import (
	"cmp"
	"slices"
	"sort"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// ladder ranks instance types by price, for consolidation's necessary condition: a node's pods
// can move only into the other nodes' free room plus one new node cheaper than it, so what the
// others cannot hold (the residual) must fit in a single cheaper type.
type ladder struct {
	rungs []rung
	// most[i] is the element-wise maximum room of rungs[:i+1]: a residual that does not fit
	// it fits no rung up to i.
	most []scheduling.Resources
}

type rung struct {
	price float64
	room  scheduling.Resources
}

func newLadder(rungs []rung) *ladder {
	slices.SortStableFunc(rungs, func(a, b rung) int { return cmp.Compare(a.price, b.price) })
	l := &ladder{rungs: rungs, most: make([]scheduling.Resources, len(rungs))}
	var m scheduling.Resources
	for i := range rungs {
		m = m.Max(rungs[i].room)
		l.most[i] = m
	}
	return l
}

// holding counts the types priced under p whose room holds need, up to limit.
func (l *ladder) holding(p float64, need *scheduling.Resources, limit int) int {
	k := sort.Search(len(l.rungs), func(i int) bool { return l.rungs[i].price >= p })
	if k == 0 || !need.Fits(&l.most[k-1]) {
		return 0
	}
	n := 0
	for i := range l.rungs[:k] {
		r := &l.rungs[i]
		if r.price >= p {
			break
		}
		if need.Fits(&r.room) {
			if n++; n >= limit {
				break
			}
		}
	}
	return n
}

// ladders rank the types of every pool by their cheapest offering the pool allows, and by
// their cheapest offering that is not spot.
func ladders(pools []*Pool) (all, notSpot *ladder) {
	var rungs, ns []rung
	for _, p := range pools {
		q := catalog.NewQuery(p.Solver.Requirements)
		for _, it := range p.Types {
			if o := q.Cheapest(it); o >= 0 {
				rungs = append(rungs, rung{price: it.Offerings[o].Price, room: it.Allocatable()})
			}
			best := -1.0
			for i := range it.Offerings {
				o := &it.Offerings[i]
				if o.CapacityType != apisv1.CapacityTypeSpot && o.Usable() && q.OfferingMatches(o) && (best < 0 || o.Price < best) {
					best = o.Price
				}
			}
			if best >= 0 {
				ns = append(ns, rung{price: best, room: it.Allocatable()})
			}
		}
	}
	return newLadder(rungs), newLadder(ns)
}

// replaceable is the necessary condition for replacing nodes priced price, holding need,
// when the other nodes have room others and stuck is what no other node can take: the
// residual (what the others cannot hold, and at least stuck) fits one type cheaper than the
// nodes; for spot nodes, one that is not spot, or (with spotToSpot) at least
// SpotToSpotMinTypes types.
func replaceable(price float64, spot, spotToSpot bool, need, others, stuck scheduling.Resources, all, notSpot *ladder) bool {
	var residual scheduling.Resources
	for i := range need {
		residual[i] = max(need[i]-max(others[i], 0), stuck[i], 0)
	}
	if !spot {
		return all.holding(price, &residual, 1) > 0
	}
	return notSpot.holding(price, &residual, 1) > 0 || spotToSpot && all.holding(price, &residual, SpotToSpotMinTypes) >= SpotToSpotMinTypes
}

// roomIndex is what one disruption pass knows of the room on nodes: the total free room of the
// nodes not disrupting and, per shape (computed when first asked), the first two of them that
// could take a pod of it. nodes must be the nodes not gone. A policy keeps one and resets it
// each pass (reset): its per-shape memory, as long as the workload's shapes, is reused.
type roomIndex struct {
	v     *View
	nodes []*Node
	total scheduling.Resources
	first [][2]NodeID
	// at is the pass (epoch) in which first[s] was computed.
	at    []uint32
	epoch uint32
	// roomy are the nodes not disrupting with room for the smallest pod (element-wise), found
	// when first needed: the only ones worth looking at; free is their free room.
	roomy []*Node
	free  []scheduling.Resources
	found bool
}

// reset makes ri (nil: a new one) the index of this pass's nodes and returns it.
func (ri *roomIndex) reset(v *View, nodes []*Node) *roomIndex {
	if ri == nil {
		ri = &roomIndex{}
	}
	if shapes := len(v.Env().Workload.Shapes); len(ri.first) < shapes {
		ri.first, ri.at, ri.epoch = make([][2]NodeID, shapes), make([]uint32, shapes), 0
	}
	if ri.epoch++; ri.epoch == 0 {
		clear(ri.at)
		ri.epoch = 1
	}
	ri.v, ri.nodes, ri.total = v, nodes, v.FreeRoom()
	ri.roomy, ri.free, ri.found = ri.roomy[:0], ri.free[:0], false
	return ri
}

// elsewhere reports whether a node other than not has room for a pod of shape s.
func (ri *roomIndex) elsewhere(s int, not NodeID) bool {
	f := ri.first[s]
	if ri.at[s] != ri.epoch {
		ri.at[s] = ri.epoch
		f = [2]NodeID{NoNode, NoNode}
		if !ri.found {
			ri.found = true
			least := ri.v.Env().Workload.least
			for _, n := range ri.nodes {
				if free := n.Free(); !n.Disrupting && least.Fits(&free) {
					ri.roomy = append(ri.roomy, n)
					ri.free = append(ri.free, free)
				}
			}
		}
		req := &ri.v.Env().Workload.Shapes[s].Requests
		k := 0
		for i, n := range ri.roomy {
			if req.Fits(&ri.free[i]) && ri.v.Compatible(s, n) {
				f[k] = n.ID
				if k++; k == 2 {
					break
				}
			}
		}
		ri.first[s] = f
	}
	return f[0] != NoNode && f[0] != not || f[1] != NoNode
}

// movable applies the necessary conditions for taking nodes away: their pods fit in the room
// of the others (delete), or in that room plus one node cheaper than price (replace, see
// replaceable). Pods no other node has room for count fully towards the new node.
func (ri *roomIndex) movable(nodes []*Node, price float64, spot, spotToSpot bool, all, notSpot *ladder) (del, repl bool) {
	var need, theirs, stuck scheduling.Resources
	if len(nodes) == 1 {
		n := nodes[0]
		need, theirs = n.Used, n.Free()
		// Pods of one shape share the answer: ask once per shape.
		last, lastStuck := int32(-1), false
		for _, id := range n.Pods {
			p := ri.v.Pod(id)
			if p.Shape != last {
				last, lastStuck = p.Shape, !ri.elsewhere(int(p.Shape), n.ID)
			}
			if lastStuck {
				stuck = stuck.Add(*ri.v.Requests(id))
			}
		}
	} else {
		for _, n := range nodes {
			need = need.Add(n.Used)
			theirs = theirs.Add(n.Free())
		}
	}
	others := ri.total.Sub(theirs)
	if stuck.IsZero() && need.Fits(&others) {
		return true, true
	}
	if all == nil {
		return false, false
	}
	return false, replaceable(price, spot, spotToSpot, need, others, stuck, all, notSpot)
}

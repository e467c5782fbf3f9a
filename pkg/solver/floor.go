package solver

import (
	"math"
	"slices"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// Floor is CapacityFloor's answer.
type Floor struct {
	// Price is the lower bound on the price of the new claims.
	Price float64
	// Homeless are the requests of the pods that fit no single counted node (with
	// FloorOptions.Homeless): in every plan the bound speaks of, each is on a new claim, whose
	// instance type holds it.
	Homeless []scheduling.Resources
}

// FloorOptions shape the question CapacityFloor answers.
type FloorOptions struct {
	// ExcludeNodes are treated as gone, as Options.ExcludeNodes.
	ExcludeNodes []string
	// InitializedOnly counts room only on initialized nodes, not on uninitialized ones or
	// claims in flight: the floor is then one under the plans that put none of the pods there.
	InitializedOnly bool
	// OneClaim bounds the plans that buy at most one new claim.
	OneClaim bool
	// Homeless asks for Floor.Homeless (left nil otherwise).
	Homeless bool
}

// CapacityFloor returns a lower bound on the price of the new claims that any plan placing
// every one of a set of pods (by their requests) on the prepared snapshot buys, when they are
// all the solve places (no
// other pod is pending), from room and prices alone: what the other nodes' free room cannot hold
// in some resource (and every pod that fits no single other node) must go to new claims, which
// cost at least the cheapest price per unit of that resource; each pod that fits no other node
// costs at least its share of that resource at the cheapest price per unit among the types
// that hold it (the shares of a claim's pods add up to no more than the claim's price), and
// the whole claim of the dearest such pod at least the cheapest type that holds it. It ignores everything else that constrains a plan (labels, taints,
// affinity, spreads, limits, zones, reservations), each of which can only make a plan dearer,
// so the floor holds for every plan a solve can return.
//
// The floor is +Inf when no such plan exists: what must go to new claims (with OneClaim, all of
// it on one) fits no instance type. This is the cheap necessary condition the disruption loop
// asks before simulating a candidate: a node whose pods cost at least its price elsewhere is
// not worth a solve.
func (p *Prepared) CapacityFloor(requests []scheduling.Resources, opts FloorOptions) Floor {
	f := p.floorState(opts.InitializedOnly)
	var excluded []int32
	others := f.total
	for _, name := range opts.ExcludeNodes {
		if i, ok := f.byName[name]; ok {
			excluded = append(excluded, i)
			others = others.Sub(f.free[i])
		}
	}
	var need, stuck scheduling.Resources
	var out Floor
	// each[r] prices the homeless pods' share of resource r on the types that hold them.
	var each [scheduling.NumResources]float64
	for _, req := range requests {
		need = need.Add(req)
		if f.housed(req, excluded) {
			continue
		}
		stuck = stuck.Add(req)
		if opts.Homeless {
			out.Homeless = append(out.Homeless, req)
		}
		h := p.holding(&req)
		if !opts.OneClaim {
			out.Price = max(out.Price, h.cheapest)
		}
		for r, v := range req {
			if v > 0 {
				each[r] += float64(v) * h.unit[r] // +Inf when no type holds it
			}
		}
	}
	for _, v := range each {
		out.Price = max(out.Price, v)
	}
	var residual scheduling.Resources
	for r := range need {
		residual[r] = max(need[r]-max(others[r], 0), stuck[r], 0)
	}
	if residual.IsZero() {
		return out
	}
	if opts.OneClaim {
		out.Price = max(out.Price, p.cheapestHolding(&residual))
		return out
	}
	for r, v := range residual {
		if v > 0 {
			out.Price = max(out.Price, float64(v)*f.unit[r]) // +Inf when no type has the resource
		}
	}
	return out
}

// floorRoom is what CapacityFloor knows of a prepared snapshot, built on its first question.
type floorRoom struct {
	// byName indexes free by node name; free is each counted node's room (never negative),
	// total their sum.
	byName map[string]int32
	free   []scheduling.Resources
	total  scheduling.Resources
	// unit is, per resource, the least price per unit any pool's type asks (+Inf when none
	// has the resource).
	unit [scheduling.NumResources]float64
	// fit caches, by request, the first two counted nodes with room for it (-1: none).
	fit map[scheduling.Resources][2]int32
}

func (p *Prepared) floorState(initializedOnly bool) *floorRoom {
	slot := 0
	if initializedOnly {
		slot = 1
	}
	if f := p.floor[slot]; f != nil {
		return f
	}
	b := p.base
	f := &floorRoom{byName: make(map[string]int32, len(b.targets)),
		fit: map[scheduling.Resources][2]int32{}}
	for _, t := range b.targets {
		if initializedOnly && (!t.node.Initialized || t.node.InFlight) {
			continue
		}
		var free scheduling.Resources
		for r, v := range t.free0 {
			free[r] = max(v, 0)
		}
		f.byName[t.node.Name] = int32(len(f.free))
		f.free = append(f.free, free)
		f.total = f.total.Add(free)
	}
	for r := range f.unit {
		f.unit[r] = math.Inf(1)
	}
	for _, pl := range b.pools {
		for _, t := range pl.types {
			price := t.offers[0].price
			for r, v := range t.alloc {
				if v > 0 {
					f.unit[r] = min(f.unit[r], price/float64(v))
				}
			}
		}
	}
	p.floor[slot] = f
	return f
}

// housed reports whether a counted node not in excluded has room for req.
func (f *floorRoom) housed(req scheduling.Resources, excluded []int32) bool {
	first, ok := f.fit[req]
	if !ok {
		first = [2]int32{-1, -1}
		k := 0
		for i := range f.free {
			if req.Fits(&f.free[i]) {
				first[k] = int32(i)
				if k++; k == len(first) {
					break
				}
			}
		}
		f.fit[req] = first
	}
	for _, i := range first {
		if i < 0 {
			return false
		}
		if !slices.Contains(excluded, i) {
			return true
		}
	}
	// Both are excluded: look further.
	for i := range f.free {
		if !slices.Contains(excluded, int32(i)) && req.Fits(&f.free[i]) {
			return true
		}
	}
	return false
}

// cheapestHolding is the least price of a type of any pool whose allocatable (less its
// DaemonSets) holds need, +Inf when there is none.
func (p *Prepared) cheapestHolding(need *scheduling.Resources) float64 {
	best := math.Inf(1)
	want := indexedWant(need)
	for _, pl := range p.base.pools {
		for ti := pl.fits.first(0, &want); ti >= 0; ti = pl.fits.first(ti+1, &want) {
			t := pl.types[ti]
			if t.offers[0].price >= best {
				break
			}
			if need.Fits(&t.alloc) {
				best = t.offers[0].price
				break
			}
		}
	}
	return best
}

// TypesHolding counts, up to limit, the instance types of the pools (a type in two pools
// counts twice) whose allocatable (less their DaemonSets) holds need and that the pool offers
// under price: by any usable offering, or with notSpot by one that is not spot.
func (p *Prepared) TypesHolding(need *scheduling.Resources, price float64, notSpot bool, limit int) int {
	n := 0
	want := indexedWant(need)
	for _, pl := range p.base.pools {
		for ti := pl.fits.first(0, &want); ti >= 0 && n < limit; ti = pl.fits.first(ti+1, &want) {
			t := pl.types[ti]
			if t.offers[0].price >= price {
				break
			}
			if !need.Fits(&t.alloc) {
				continue
			}
			for _, o := range t.offers {
				if o.price >= price {
					break
				}
				if !notSpot || o.ct != ctSpot {
					n++
					break
				}
			}
		}
	}
	return n
}

// holdingPrices are what the types that hold a request ask: per resource, the least price
// per unit, and the least price of all (+Inf where none has the resource or none holds it).
type holdingPrices struct {
	unit     [scheduling.NumResources]float64
	cheapest float64
}

// holding returns the holdingPrices of need over the types of every pool, cached by request
// with the compiled pools.
func (p *Prepared) holding(need *scheduling.Resources) *holdingPrices {
	if h, ok := p.base.units[*need]; ok {
		return h
	}
	if p.base.units == nil {
		p.base.units = map[scheduling.Resources]*holdingPrices{}
	}
	h := &holdingPrices{cheapest: math.Inf(1)}
	for r := range h.unit {
		h.unit[r] = math.Inf(1)
	}
	want := indexedWant(need)
	for _, pl := range p.base.pools {
		for ti := pl.fits.first(0, &want); ti >= 0; ti = pl.fits.first(ti+1, &want) {
			t := pl.types[ti]
			if !need.Fits(&t.alloc) {
				continue
			}
			price := t.offers[0].price
			h.cheapest = min(h.cheapest, price)
			for r, v := range t.alloc {
				if v > 0 {
					h.unit[r] = min(h.unit[r], price/float64(v))
				}
			}
		}
	}
	p.base.units[*need] = h
	return h
}

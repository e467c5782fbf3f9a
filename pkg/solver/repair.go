package solver

import (
	"cmp"
	"slices"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// Repair. First-fit and the guide's rounding leave claims that a different split of the same
// pods would buy for less: a claim a little too full for the next smaller type, beside claims
// with room to spare. After placing, and before the claims settle on their types, the solve
// takes the new claims from the least utilised up and moves what it can of each claim's pods
// into the free room other claims of the same pool have at the type they would launch as; the
// move is kept when the emptied claim then launches a cheaper type (or nothing at all).
//
// A move never changes what the receiving claim launches or where anything counts: it only
// moves pods whose classes have no host ports and no hostname-level topology, between claims
// that lie in the same domain of every dimension the class's topology groups count, onto a claim
// whose offerings and types the pods' requirements keep (its zones and capacity types as they
// are, its launch type among the pods' types). The emptied claim keeps its types; its new type
// must hold no more of any resource than its old one, so the pool's limits are never nearer.
// Pools with minValues and snapshots with reservations are left as they are (their counts
// depend on which claims launch what).

// repairWorkFactor bounds the repair's work: pod-class × claim checks, per pending pod.
const repairWorkFactor = 32

// pairWorkFactor bounds the pair repair's work (repairpairs.go) the same way.
const pairWorkFactor = 8

// mergeWorkFactor bounds the merge repair's work (repairmerge.go): members looked at, per
// pending pod.
const mergeWorkFactor = 8

// repairClaim is a new claim as the repair sees it: what it launches now, and how full that is.
type repairClaim struct {
	cl    *newClaim
	ti    int
	price float64
	util  float64
}

// repair moves pods off the least utilised new claims (see above).
func (s *solve) repair() {
	if s.opts.NoRepair || len(s.claims) < 2 || len(s.reservations) > 0 {
		return
	}
	work := int64(repairWorkFactor) * int64(max(len(s.pending), 64))
	pairWork := int64(pairWorkFactor) * int64(max(len(s.pending), 256))
	mergeWork := int64(mergeWorkFactor) * int64(max(len(s.pending), 256))
	var rcs []repairClaim
	for _, p := range s.pools {
		if p.reason != nil || len(p.minValues) > 0 || s.openClaims[p.index] < 2 {
			continue
		}
		rcs = slices.Grow(rcs[:0], s.openClaims[p.index])
		for _, cl := range s.claims {
			if cl.pool != p || len(cl.members) == 0 {
				continue
			}
			ti, price := s.launchType(cl, &cl.used, nil)
			if ti < 0 {
				continue
			}
			rcs = append(rcs, repairClaim{cl: cl, ti: ti, price: price, util: utilisation(&cl.used, &p.types[ti].alloc)})
		}
		if len(rcs) < 2 {
			continue
		}
		slices.SortStableFunc(rcs, func(a, b repairClaim) int {
			if c := cmp.Compare(a.util, b.util); c != 0 {
				return c
			}
			return cmp.Compare(a.cl.index, b.cl.index)
		})
		for xi := range rcs {
			if work <= 0 || s.opts.repairLimit > 0 && s.repaired >= s.opts.repairLimit {
				return
			}
			work -= s.repairClaim(rcs, xi)
		}
		if !s.opts.noPairRepair {
			pairWork = s.repairPairs(rcs, pairWork)
		}
		if !s.opts.noMergeRepair {
			mergeWork = s.repairMerges(rcs, mergeWork)
		}
	}
}

// repairClaim tries to empty rcs[xi] into the other claims, or to split what stays on it
// between two cheaper claims, and reports the work it spent.
func (s *solve) repairClaim(rcs []repairClaim, xi int) int64 {
	x := &rcs[xi]
	if len(x.cl.members) == 0 || x.price <= 0 {
		return 1
	}
	p := x.cl.pool
	var work int64
	moved := scheduling.Resources{}
	// Tentative moves: (member, destination, pods), members from the last (smallest pods).
	moves := s.repairMoves[:0]
	defer func() { s.repairMoves = moves[:0] }()
	for mi := len(x.cl.members) - 1; mi >= 0; mi-- {
		m := &x.cl.members[mi]
		if !s.movable(m.c) {
			continue
		}
		left := len(m.pods)
		// Destinations most utilised first (the end of rcs), so that the free room of full
		// claims is used before that of claims that may empty next.
		req := &m.c.requests
		for yi := len(rcs) - 1; yi >= 0 && left > 0; yi-- {
			work++
			y := &rcs[yi]
			if yi == xi || y.ti < 0 {
				continue
			}
			alloc := &p.types[y.ti].alloc
			// CPU and memory first: most claims have no room for the pod at all.
			if alloc[scheduling.CPU]-y.cl.used[scheduling.CPU] < req[scheduling.CPU] ||
				alloc[scheduling.Memory]-y.cl.used[scheduling.Memory] < req[scheduling.Memory] ||
				len(y.cl.members) == 0 || !s.accepts(y.cl, y.ti, x.cl, m) {
				continue
			}
			free := alloc.Sub(y.cl.used)
			for _, mv := range moves {
				// What the moves planned so far put there.
				if mv.y == yi {
					free = free.Sub(x.cl.members[mv.m].c.requests.Scale(int64(mv.n)))
				}
			}
			n := min(left, m.c.fit(&free))
			if n <= 0 {
				continue
			}
			moved = moved.Add(m.c.requests.Scale(int64(n)))
			moves = append(moves, repairMove{m: mi, y: yi, n: n})
			left -= n
		}
	}
	rest := x.cl.used.Sub(moved)
	// A: what is left on the claim, on its cheapest type.
	bestTI, bestPrice := -1, 0.0
	if !rest.IsZero() {
		bestTI, bestPrice = s.launchType(x.cl, &rest, &p.types[x.ti].capacity)
		if bestTI < 0 {
			bestTI, bestPrice = x.ti, x.price
		}
	}
	// B: a second claim like this one takes part of what is left.
	split := s.repairSplit[:0]
	defer func() { s.repairSplit = split[:0] }()
	splitTI, splitPrice := -1, 0.0
	if !rest.IsZero() && p.nodesLeft != 0 {
		w, tz, zp, tx, xp := s.splitClaim(x, rest, moves, &split)
		work += w
		if tz >= 0 && zp+xp < bestPrice-1e-9 {
			splitTI, splitPrice, bestTI, bestPrice = tz, zp, tx, xp
		}
	}
	if bestPrice+splitPrice >= x.price-1e-9 {
		return work
	}
	// Keep the moves: members' pods from their ends, onto new members of the destinations.
	for _, mv := range moves {
		s.movePods(x.cl, mv.m, rcs[mv.y].cl, mv.n)
	}
	if splitTI >= 0 {
		z := s.openLike(x.cl, splitTI)
		for _, mv := range split {
			s.movePods(x.cl, mv.m, z, mv.n)
		}
		rest = x.cl.used
	}
	s.repaired++
	x.cl.members = slices.DeleteFunc(x.cl.members, func(m member) bool { return len(m.pods) == 0 })
	x.cl.used = rest
	x.ti, x.price = bestTI, bestPrice
	for _, mv := range moves {
		y := &rcs[mv.y]
		y.util = utilisation(&y.cl.used, &p.types[y.ti].alloc)
	}
	x.util = 0
	if bestTI >= 0 {
		x.util = utilisation(&rest, &p.types[bestTI].alloc)
	}
	return work
}

// repairMove moves n pods of member m of the claim being repaired to claim y.
type repairMove struct{ m, y, n int }

// maxSplitTypes caps the types splitClaim tries for the second claim.
const maxSplitTypes = 24

// splitClaim prices splitting what is left on x (rest, after moves) between x and a new claim
// of the same pool, zones and capacity types: for each of the cheapest types, the new claim is
// filled with x's movable pods, largest first, and x takes the cheapest type for the others.
// It returns the work, the new claim's type and price and x's (tz −1: no split pays), and in
// split the pods the new claim takes (member, n; y unused). The two types together hold no
// more of a limited resource than x's type now does.
func (s *solve) splitClaim(x *repairClaim, rest scheduling.Resources, moves []repairMove, split *[]repairMove) (work int64, tz int, zp float64, tx int, xp float64) {
	p := x.cl.pool
	mask := offerBits(x.cl.zones, x.cl.cts)
	tz, tx = -1, -1
	price := x.price
	old := &p.types[x.ti].capacity
	tried := 0
	var trial []repairMove
	for ti := x.cl.types.Next(0); ti >= 0 && tried < maxSplitTypes; ti = x.cl.types.Next(ti + 1) {
		t := p.types[ti]
		if t.offers[0].price >= price {
			break
		}
		o := t.cheapest(mask, s.reservations)
		if o == nil {
			continue
		}
		tried++
		free := t.alloc
		var taken scheduling.Resources
		trial = trial[:0]
		for mi := range x.cl.members {
			m := &x.cl.members[mi]
			work++
			if !s.movable(m.c) || !s.accepts(x.cl, ti, x.cl, m) {
				continue
			}
			avail := len(m.pods)
			for _, mv := range moves {
				if mv.m == mi {
					avail -= mv.n
				}
			}
			n := min(avail, m.c.fit(&free))
			if n <= 0 {
				continue
			}
			r := m.c.requests.Scale(int64(n))
			free, taken = free.Sub(r), taken.Add(r)
			trial = append(trial, repairMove{m: mi, n: n})
		}
		if len(trial) == 0 {
			continue
		}
		left := rest.Sub(taken)
		if left.IsZero() {
			continue // the new claim would hold everything: option A's type change
		}
		lt, lp := s.launchType(x.cl, &left, nil)
		if lt < 0 || o.price+lp >= price-1e-9 {
			continue
		}
		if sum := t.capacity.Add(p.types[lt].capacity); !limitedFits(p, &sum, old) {
			continue
		}
		tz, zp, tx, xp, price = ti, o.price, lt, lp, o.price+lp
		*split = append((*split)[:0], trial...)
	}
	return work, tz, zp, tx, xp
}

// limitedFits reports whether sum holds no more than old of every resource the pool limits.
func limitedFits(p *pool, sum, old *scheduling.Resources) bool {
	for i, lim := range p.limited {
		if lim && sum[i] > old[i] {
			return false
		}
	}
	return true
}

// movePods moves the last n pods of member mi of claim x onto claim y.
func (s *solve) movePods(x *newClaim, mi int, y *newClaim, n int) {
	m := &x.members[mi]
	pods := m.pods[len(m.pods)-n:]
	m.pods = m.pods[:len(m.pods)-n]
	r := m.c.requests.Scale(int64(n))
	x.used = x.used.Sub(r)
	y.types.And(m.alt.types)
	y.used = y.used.Add(r)
	y.members = append(y.members, member{c: m.c, alt: m.alt, pods: slices.Clip(pods), owned: m.owned})
}

// openLike opens a claim of x's pool with x's types, offerings and custom requirements, with
// type ti as its target.
func (s *solve) openLike(x *newClaim, ti int) *newClaim {
	p := x.pool
	z := &newClaim{
		index: len(s.claims), host: s.nHosts + len(s.claims), pool: p, types: x.types.Clone(),
		zones: x.zones, cts: x.cts, residual: x.residual, custom: slices.Clone(x.custom), target: -1, resv: -1,
		maxAlloc: x.maxAlloc,
	}
	s.claims = append(s.claims, z)
	s.openClaims[p.index]++
	s.setTarget(z, ti, offerBits(z.zones, z.cts))
	if p.nodesLeft > 0 {
		p.nodesLeft--
	}
	return z
}

// movable reports whether pods of class c may change claims without any topology count or
// host port changing: no host ports, and no group of the class in the hostname dimension.
func (s *solve) movable(c *class) bool {
	return s.exchangeable(c) && !hostInvolved(c)
}

// accepts reports whether claim y, launching type yti (−1: whatever it launches), may take pods
// of member m from claim x as it is: yti is a type the pods allow, keeps its zones, capacity types and custom requirements, and lies in
// the domain x does in every dimension the class's groups count.
func (s *solve) accepts(y *newClaim, yti int, x *newClaim, m *member) bool {
	return s.acceptsIn(y, yti, x, m, false)
}

// acceptsIn is accepts, leaving hostname-level groups out when besideHost is set.
func (s *solve) acceptsIn(y *newClaim, yti int, x *newClaim, m *member, besideHost bool) bool {
	a := m.alt
	if yti >= 0 && !a.types.Has(yti) || a.zones&y.zones != y.zones || a.cts&y.cts != y.cts {
		return false
	}
	if a.residual.Len() > 0 && !slices.ContainsFunc(y.members, func(o member) bool { return o.alt == a }) {
		return false
	}
	same := func(g *group) bool {
		if besideHost && g.dim == dimHostname {
			return true
		}
		d := x.domain(s, g.dim)
		return d >= 0 && d == y.domain(s, g.dim)
	}
	for _, g := range m.c.matches {
		if !same(g) {
			return false
		}
	}
	for _, g := range m.c.owned {
		if !same(g) {
			return false
		}
	}
	for _, st := range m.c.spreads {
		if !same(st.g) {
			return false
		}
	}
	for _, at := range m.c.affinity {
		if !same(at.g) {
			return false
		}
	}
	for _, at := range m.c.anti {
		if !same(at.g) {
			return false
		}
	}
	return true
}

// launchType is the cheapest of the claim's types that holds need at an offering of its zones
// and capacity types, with no more of a resource the pool limits than within (nil: any), and
// its price; −1 if none.
func (s *solve) launchType(cl *newClaim, need *scheduling.Resources, within *scheduling.Resources) (int, float64) {
	return s.launchTypeIn(cl, cl.types, need, within)
}

// launchTypeIn is launchType over the given types of the claim's pool instead of its own.
func (s *solve) launchTypeIn(cl *newClaim, types scheduling.Bitset, need *scheduling.Resources, within *scheduling.Resources) (int, float64) {
	p := cl.pool
	mask := offerBits(cl.zones, cl.cts)
	best, bestPrice := -1, inf
	// Candidates in price order (pool types come in price order of their cheapest offer): the
	// types whose allocatable holds need in every indexed resource, checked exactly.
	want := indexedWant(need)
	for ti := p.fits.first(0, &want); ti >= 0; ti = p.fits.first(ti+1, &want) {
		t := p.types[ti]
		if t.offers[0].price >= bestPrice {
			break
		}
		if !types.Has(ti) || !need.Fits(&t.alloc) || within != nil && !limitedFits(p, &t.capacity, within) {
			continue
		}
		if o := t.cheapest(mask, s.reservations); o != nil && o.price < bestPrice {
			best, bestPrice = ti, o.price
		}
	}
	return best, bestPrice
}

// utilisation is the largest share of alloc that used takes in any resource.
func utilisation(used, alloc *scheduling.Resources) float64 {
	u := 0.0
	for r, v := range used {
		if v > 0 && alloc[r] > 0 {
			u = max(u, float64(v)/float64(alloc[r]))
		}
	}
	return u
}

package solver

import (
	"cmp"
	"slices"
)

// Merge repair. Moving pods into free room (repairClaim) and re-splitting two claims
// (repairPairs) never make a claim bigger, so they cannot find the plan in which several small
// claims become one larger type that costs less than they do together: seven 1g MIG slices per
// p5.4xlarge at $6.88 against 32 per p4d.24xlarge at $21.96, where 22 pods take four of the
// first or one of the second. The guide's LP does not see it either when the demand is below a
// whole large node (its patterns hold at most the demand, so the large type's column is worth
// less than its price). A merge takes a receiving claim and absorbs the least utilised claims
// of its pool, one by one, pricing each prefix as one claim of the cheapest type that holds it
// all; the longest prefix that saves most is kept.
//
// A merge moves whole claims, so it moves only claims whose every pod may move (movable) and
// may join the receiver (accepts: same zones and capacity types, same domain of every
// dimension the pods' groups count); the receiver's types narrow to those all its pods allow,
// and the merged type holds no more of a limited resource than the claims it replaces did.

// maxMergeScan caps how many candidate claims one receiver looks at.
const maxMergeScan = 64

// repairMerges merges claims of one pool (rcs, least utilised first) while work lasts, and
// returns the work left.
func (s *solve) repairMerges(rcs []repairClaim, work int64) int64 {
	if len(rcs) < 2 {
		return work
	}
	p := rcs[0].cl.pool
	// Receivers: the dearest claims first, as a large claim is the likeliest to grow into a
	// type whose price per unit is lower.
	order := slices.Grow(s.mergeOrder[:0], len(rcs))[:0]
	defer func() { s.mergeOrder = order[:0] }()
	for i := range rcs {
		order = append(order, i)
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rcs[b].price, rcs[a].price) })
	for _, yi := range order {
		if work <= 0 || s.opts.repairLimit > 0 && s.repaired >= s.opts.repairLimit {
			break
		}
		y := &rcs[yi]
		if len(y.cl.members) == 0 || y.ti < 0 || !s.wholeMovable(y.cl) {
			continue
		}
		types := append(s.mergeTypes[:0], y.cl.types...)
		s.mergeTypes = types
		acc := y.cl.used
		capSum := p.types[y.ti].capacity
		priceSum := y.price
		taken := s.mergeTaken[:0]
		bestN, bestTI, bestPrice, bestSaving := 0, -1, 0.0, 1e-9
		scanned := 0
		for xi := range rcs {
			if scanned >= maxMergeScan || work <= 0 {
				break
			}
			x := &rcs[xi]
			if xi == yi || len(x.cl.members) == 0 || x.ti < 0 {
				continue
			}
			scanned++
			work -= int64(len(x.cl.members))
			if !s.absorbable(y.cl, x.cl) {
				continue
			}
			next := acc.Add(x.cl.used)
			if want := indexedWant(&next); p.fits.first(0, &want) < 0 {
				break // no type of the pool holds this much: more only makes it larger
			}
			acc = next
			capSum = capSum.Add(p.types[x.ti].capacity)
			priceSum += x.price
			for mi := range x.cl.members {
				types.And(x.cl.members[mi].alt.types)
			}
			taken = append(taken, xi)
			ti, price := s.launchTypeIn(y.cl, types, &acc, &capSum)
			if ti >= 0 && priceSum-price > bestSaving {
				bestN, bestTI, bestPrice, bestSaving = len(taken), ti, price, priceSum-price
			}
		}
		s.mergeTaken = taken[:0]
		if bestN == 0 {
			continue
		}
		for _, xi := range taken[:bestN] {
			x := &rcs[xi]
			for mi := range x.cl.members {
				s.movePods(x.cl, mi, y.cl, len(x.cl.members[mi].pods))
			}
			x.cl.members = x.cl.members[:0]
			x.ti, x.price, x.util = -1, 0, 0
		}
		y.ti, y.price = bestTI, bestPrice
		y.util = utilisation(&y.cl.used, &p.types[bestTI].alloc)
		s.repaired++
	}
	return work
}

// wholeMovable reports whether every pod of the claim may change claims.
func (s *solve) wholeMovable(cl *newClaim) bool {
	for mi := range cl.members {
		if !s.movable(cl.members[mi].c) {
			return false
		}
	}
	return true
}

// absorbable reports whether claim y may take every pod of claim x (whatever type y then
// launches as: the caller narrows y's types to those the pods allow).
func (s *solve) absorbable(y, x *newClaim) bool {
	if !s.wholeMovable(x) {
		return false
	}
	for mi := range x.members {
		if !s.accepts(y, -1, x, &x.members[mi]) {
			return false
		}
	}
	return true
}

package bound

import (
	"cmp"
	"math"
	"slices"
)

// trivialBound is the largest of the one-dimensional bounds: for each class alone, and for each
// group alone, the cheapest set of whole nodes that can hold its pods, where a node of type t
// holds at most u_t of them. Leaving the other pods out is a relaxation, so each is valid. They
// matter when few pods fit on a node, where rounding node counts up beats the LPs.
func trivialBound(in *instance) float64 {
	best := 0.0
	perClass := make([][]item1D, in.nK)
	perGroup := make([][]item1D, len(in.gcap))
	groupPods := make([]int64, len(in.gcap))
	for k := 0; k < in.nK; k++ {
		if g := in.group[k]; g >= 0 {
			groupPods[g] += in.count[k]
		}
	}
	gu := make([]int64, len(in.gcap))
	for t := 0; t < in.nT; t++ {
		for g := range gu {
			gu[g] = 0
		}
		for i := in.tOff[t]; i < in.tOff[t+1]; i++ {
			k := in.tCls[i]
			perClass[k] = append(perClass[k], item1D{u: in.tU[i], c: in.price[t], m: in.limit[t]})
			if g := in.group[k]; g >= 0 {
				gu[g] += in.tU[i]
			}
		}
		for g, u := range gu {
			if u > 0 {
				perGroup[g] = append(perGroup[g], item1D{u: min(u, in.gcap[g]), c: in.price[t], m: in.limit[t]})
			}
		}
	}
	for k, items := range perClass {
		best = max(best, cover1D(in.count[k], items, nil))
	}
	for g, items := range perGroup {
		best = max(best, cover1D(groupPods[g], items, nil))
	}
	return best
}

// item1D is a node type in a one-dimensional cover: it holds u pods, costs c, and at most m of
// it may be bought (0 = unlimited).
type item1D struct {
	u, m int64
	c    float64
}

// cover1D is the least cost of nodes holding n pods: exact by dynamic programming over pod
// counts when that is small, else its LP relaxation (cheapest per pod first). The program's
// table reuses scratch when it is large enough.
func cover1D(n int64, items []item1D, scratch *[]float64) float64 {
	if n <= 0 {
		return 0
	}
	// Unlimited items: keep only those that hold more than every cheaper one.
	var free, pieces []item1D
	// Items equal in every field are interchangeable, so an unstable sort is deterministic.
	slices.SortFunc(items, func(a, b item1D) int {
		if r := cmp.Compare(a.c, b.c); r != 0 {
			return r
		}
		if r := cmp.Compare(b.u, a.u); r != 0 {
			return r
		}
		return cmp.Compare(a.m, b.m)
	})
	var most int64
	for _, it := range items {
		if it.m == 0 && it.u > most {
			free = append(free, it)
			most = it.u
		}
	}
	for _, it := range items {
		if it.m == 0 || it.u <= most && it.c >= cheapestHolding(free, it.u) {
			continue
		}
		copies := min(it.m, (n+it.u-1)/it.u)
		for s := int64(1); copies > 0; s *= 2 {
			take := min(s, copies)
			pieces = append(pieces, item1D{u: min(take*it.u, n), c: float64(take) * it.c})
			copies -= take
		}
	}
	if n*int64(len(free)+len(pieces)) > 400_000 {
		return cover1DLP(n, items)
	}
	var f []float64
	if scratch != nil && int64(cap(*scratch)) > n {
		f = (*scratch)[:n+1]
	} else {
		f = make([]float64, n+1)
		if scratch != nil {
			*scratch = f
		}
	}
	for j := range f {
		f[j] = math.Inf(1)
	}
	f[0] = 0
	for _, it := range pieces {
		for j := n; j > 0; j-- {
			if v := f[max(j-it.u, 0)] + it.c; v < f[j] {
				f[j] = v
			}
		}
	}
	for _, it := range free {
		for j := int64(1); j <= n; j++ {
			if v := f[max(j-it.u, 0)] + it.c; v < f[j] {
				f[j] = v
			}
		}
	}
	return f[n]
}

// cheapestHolding is the price of the cheapest unlimited item holding at least u pods.
func cheapestHolding(free []item1D, u int64) float64 {
	for _, it := range free {
		if it.u >= u {
			return it.c
		}
	}
	return math.Inf(1)
}

func cover1DLP(n int64, items []item1D) float64 {
	slices.SortFunc(items, func(a, b item1D) int {
		if r := cmp.Compare(a.c/float64(a.u), b.c/float64(b.u)); r != 0 {
			return r
		}
		if r := cmp.Compare(a.u, b.u); r != 0 {
			return r
		}
		return cmp.Compare(a.m, b.m)
	})
	left, cost := float64(n), 0.0
	for _, it := range items {
		take := left
		if it.m > 0 {
			take = min(take, float64(it.m*it.u))
		}
		cost += take * it.c / float64(it.u)
		if left -= take; left <= 0 {
			return cost
		}
	}
	return math.Inf(1)
}

// resourceCoverStates caps the demand units of resourceBound's dynamic program, so that its
// work stays near cover1D's own limit with a few node sizes.
const resourceCoverStates = 1 << 14

// resourceCoverUnits is the least number of units resourceBound counts in a node of the
// unlimited type cheapest for a resource (the rounding of capacities up costs at most 1/resourceCoverUnits of
// a node each), unless the demand would then be more than resourceCoverStates units.
const resourceCoverUnits = 1 << 10

// resourceCoverNodes: past this many nodes of that type's capacity, resourceBound takes the LP
// of a resource's cover rather than its dynamic program, which can add at most one such node to
// it, a fraction too small to matter beside the other bounds.
const resourceCoverNodes = 64

// resourceBound is the largest of the per-resource cover bounds: for each resource alone, the
// cheapest set of whole nodes whose capacities add up to all the pods' demand of it. Pods are
// made divisible and may use any type of the part, which is a relaxation, but node counts stay
// whole: where a few nodes hold everything, rounding them up beats the LPs, whose fractional
// nodes lend the fleet capacity no whole node can. A type counts no more of a resource than its
// pods could use of one node (each class within what fits alone), the most any packing puts
// there.
//
// The amounts are counted in units of g, chosen so the demand is at most resourceCoverStates
// units and the cheapest node about resourceCoverUnits of them: the demand rounded down and each capacity rounded up, which keeps every feasible
// packing feasible, so the bound stays valid and only loses what the rounding costs.
func resourceBound(in *instance, table *[]float64) float64 {
	best := 0.0
	usable := make([]int64, in.nT)
	items := make([]item1D, 0, in.nT)
	for r := 0; r < in.nR; r++ {
		var total int64
		for k := 0; k < in.nK; k++ {
			total = satAdd(total, satMul(in.count[k], in.dem[k*in.nR+r]))
		}
		if total <= 0 {
			continue
		}
		for t := 0; t < in.nT; t++ {
			var most int64
			for i := in.tOff[t]; i < in.tOff[t+1]; i++ {
				if u := in.tU[i]; u > 0 {
					most = satAdd(most, satMul(u, in.dem[int(in.tCls[i])*in.nR+r]))
				}
			}
			usable[t] = min(most, in.capa[t*in.nR+r])
		}
		// The unlimited type of least price per unit it holds sets the scale (limited ones, such
		// as an existing node's free room, may be tiny), or any type when all are limited.
		cheapest := -1
		for t := 0; t < in.nT; t++ {
			if usable[t] <= 0 {
				continue
			}
			if cheapest < 0 || in.limit[cheapest] > 0 && in.limit[t] == 0 ||
				(in.limit[cheapest] > 0) == (in.limit[t] > 0) && in.price[t]*float64(usable[cheapest]) < in.price[cheapest]*float64(usable[t]) {
				cheapest = t
			}
		}
		if cheapest < 0 {
			return math.Inf(1) // no type holds any of this resource, which the pods demand
		}
		g := max(1, total/resourceCoverStates+1, usable[cheapest]/resourceCoverUnits)
		n := total / g
		items = items[:0]
		var most int64 // the scale type's units
		for t := 0; t < in.nT; t++ {
			if usable[t] <= 0 {
				continue
			}
			u := usable[t] / g
			if usable[t]%g != 0 {
				u++
			}
			items = append(items, item1D{u: u, c: in.price[t], m: in.limit[t]})
			if t == cheapest {
				most = u
			}
		}
		if n > resourceCoverNodes*most {
			best = max(best, cover1DLP(n, items))
			continue
		}
		best = max(best, cover1D(n, items, table))
	}
	return best
}

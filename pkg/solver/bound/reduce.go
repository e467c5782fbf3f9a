package bound

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
)

// candidate is a type while the type set is being reduced.
type candidate struct {
	orig    int
	price   float64
	capa    []int64
	limit   int64
	classes []uint64 // bitset over classes
	dropped bool
}

// mergeLimited merges limited types that are identical to the bounds (price, capacity,
// classes): n nodes of one and m of the other are n+m nodes of either. (A limited type identical
// to an unlimited one is dominated by it; see dropDominated.)
func mergeLimited(list []*candidate) []*candidate {
	var limited []int
	for i, c := range list {
		if c.limit > 0 {
			limited = append(limited, i)
		}
	}
	slices.SortFunc(limited, func(x, y int) int {
		a, b := list[x], list[y]
		if c := cmp.Compare(a.price, b.price); c != 0 {
			return c
		}
		if c := slices.Compare(a.capa, b.capa); c != 0 {
			return c
		}
		if c := slices.Compare(a.classes, b.classes); c != 0 {
			return c
		}
		return cmp.Compare(a.orig, b.orig)
	})
	for i := 0; i < len(limited); {
		keep := list[limited[i]]
		j := i + 1
		for ; j < len(limited); j++ {
			c := list[limited[j]]
			if c.price != keep.price || !slices.Equal(c.capa, keep.capa) || !slices.Equal(c.classes, keep.classes) {
				break
			}
			keep.limit += c.limit
			c.dropped = true
		}
		i = j
	}
	return slices.DeleteFunc(list, func(c *candidate) bool { return c.dropped })
}

// dropDominated marks every type that an unlimited type beats: no dearer, at least as large in
// every relevant resource, and usable by every class that can use it. Any packing can move such
// a type's nodes to the dominating type at no extra cost, so the optimum is unchanged.
//
// Types are visited so that a dominator comes before what it dominates (by price, then more
// classes, then more capacity in total, then index), and each is checked against the unlimited
// types kept so far: a type dominated by a dropped one is dominated by whatever dropped that
// (dominance is transitive), so the kept ones suffice. Of identical types the first is kept.
func dropDominated(list []*candidate) {
	type key struct {
		classes int
		total   int64
	}
	keys := make([]key, len(list))
	for i, c := range list {
		for _, b := range c.classes {
			keys[i].classes += bits.OnesCount64(b)
		}
		for _, v := range c.capa {
			keys[i].total += v
		}
	}
	order := make([]int, len(list))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int {
		if c := cmp.Compare(list[x].price, list[y].price); c != 0 {
			return c
		}
		if c := cmp.Compare(keys[y].classes, keys[x].classes); c != 0 {
			return c
		}
		if c := cmp.Compare(keys[y].total, keys[x].total); c != 0 {
			return c
		}
		if c := cmp.Compare(list[x].limit, list[y].limit); c != 0 { // unlimited (0) first
			return c
		}
		return cmp.Compare(x, y)
	})
	var kept []*candidate
	for _, i := range order {
		s := list[i]
		for _, t := range kept {
			if dominates(t, s) {
				s.dropped = true
				break
			}
		}
		if !s.dropped && s.limit == 0 {
			kept = append(kept, s)
		}
	}
}

func dominates(t, s *candidate) bool {
	for w, bits := range s.classes {
		if bits&^t.classes[w] != 0 {
			return false
		}
	}
	for j, v := range s.capa {
		if t.capa[j] < v {
			return false
		}
	}
	return true
}

// lpDominated finds the types the covering LP can do without: s is dominated by an unlimited
// type t usable by all of s's classes that covers s's capacity with β nodes
// (β = max_r C_sr/C_tr) for no more than s costs (β·c_t ≤ c_s). The covering LP buys fractions
// of nodes and fills them with fractions of pods, so β nodes of t replace one of s, and one
// node of s is worth at most β times one of t: V_s ≤ β·V_t. It returns, for each type, an
// undominated dominator (or −1) and its β. Ties keep the lower index, so the relation is a
// strict order and every dominated type has an undominated dominator (β multiplies along
// chains).
func (in *instance) lpDominated() ([]int, []float64) {
	nR := in.nR
	ratio := func(s, t int) float64 {
		if in.limit[t] > 0 || t == s {
			return math.Inf(1)
		}
		bs := in.tBits[s*in.words : (s+1)*in.words]
		bt := in.tBits[t*in.words : (t+1)*in.words]
		for w, b := range bs {
			if b&^bt[w] != 0 {
				return math.Inf(1)
			}
		}
		beta := 0.0
		for j := 0; j < nR; j++ {
			cs, ct := in.capa[s*nR+j], in.capa[t*nR+j]
			if cs == 0 {
				continue
			}
			if ct == 0 {
				return math.Inf(1)
			}
			beta = max(beta, float64(cs)/float64(ct))
		}
		return beta
	}
	dominated := func(s, t int, beta float64) bool {
		cost := beta * in.price[t]
		return cost < in.price[s] || (cost == in.price[s] && t < s && in.limit[s] == 0)
	}
	isDom := make([]bool, in.nT)
	for s := range isDom {
		for t := 0; t < in.nT && !isDom[s]; t++ {
			b := ratio(s, t)
			isDom[s] = !math.IsInf(b, 1) && dominated(s, t, b)
		}
	}
	dom := make([]int, in.nT)
	betas := make([]float64, in.nT)
	for s := range dom {
		dom[s] = -1
		for t := 0; t < in.nT && isDom[s]; t++ {
			if b := ratio(s, t); !isDom[t] && !math.IsInf(b, 1) && dominated(s, t, b) {
				dom[s], betas[s] = t, b
				break
			}
		}
	}
	return dom, betas
}

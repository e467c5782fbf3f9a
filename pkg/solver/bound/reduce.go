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
	eff     []int64 // effective capacity (see effective); dominance compares against it
	limit   int64
	classes []uint64 // bitset over classes
	merged  []int    // the limited types merged into it (mergeLimited)
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
			keep.merged = append(keep.merged, c.orig)
			c.dropped = true
		}
		i = j
	}
	return slices.DeleteFunc(list, func(c *candidate) bool { return c.dropped })
}

// dropDominated marks every type that an unlimited type beats: no dearer, at least as large in
// every relevant resource as the other's effective capacity (eff), and usable by every class
// that can use it. Every pattern of such a type is then a pattern of the dominating type, so
// any packing can move its nodes there at no extra cost, and the optimum is unchanged.
//
// Types are visited by price, then more classes, then more capacity in total, then index, and
// each is checked against the unlimited types kept so far: a type dominated by a dropped one is
// dominated by whatever dropped that (dominance is transitive: a type at least as large as s's
// effective capacity, with s's classes, has at least s's effective capacity), so the kept ones
// suffice. Of identical types the first is kept.
//
// The effective capacity is dear to compute, so it is asked for only when the capacity itself
// and upper, a cheap bound on the effective capacity, do not settle a comparison, and only for
// types whose classes could not fill them even without whole pods (upper below the capacity in
// some resource): a type they could fill keeps its capacity here.
func dropDominated(list []*candidate, upper, eff func(c *candidate) []int64) {
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
	var kept, coverers []int32 // indices into list: no write barriers
	// beaten reports whether a kept type beats s: the cheap bounds first, against every kept type
	// with s's classes; the effective capacity only if they settle nothing.
	var most []int64 // the largest capacity of any kept type, per resource
	beaten := func(s *candidate) bool {
		if most == nil {
			return false
		}
		up := upper(s) // ≤ s.capa, so a type at least this large beats the plain test too
		// Only types s's classes could not fill but for whole pods (up below s's capacity
		// somewhere) are tested against their effective capacity.
		full := atLeast(up, s.capa)
		if !atLeast(most, up) && (full || !atLeast(most, eff(s))) {
			// No kept type is as large as s could use, so none beats it: often the case
			// where prices grow with size, and cheaper than comparing s with each.
			return false
		}
		coverers = coverers[:0]
		for _, t := range kept {
			c := list[t]
			if !covers(c, s) {
				continue
			}
			if atLeast(c.capa, up) {
				return true
			}
			coverers = append(coverers, t)
		}
		if len(coverers) == 0 || full {
			return false
		}
		e := eff(s)
		for _, t := range coverers {
			if atLeast(list[t].capa, e) {
				return true
			}
		}
		return false
	}
	for _, i := range order {
		s := list[i]
		s.dropped = beaten(s)
		if !s.dropped && s.limit == 0 {
			kept = append(kept, int32(i))
			if most == nil {
				most = slices.Clone(s.capa)
			}
			for j, v := range s.capa {
				most[j] = max(most[j], v)
			}
		}
	}
}

// dominates reports whether t beats s as dropDominated decides it (for tests: s.eff set).
func dominates(t, s *candidate) bool { return covers(t, s) && atLeast(t.capa, s.eff) }

// covers reports whether every class that may use s may use t.
func covers(t, s *candidate) bool {
	for w, bits := range s.classes {
		if bits&^t.classes[w] != 0 {
			return false
		}
	}
	return true
}

// atLeast reports whether a ≥ b in every component.
func atLeast(a, b []int64) bool {
	for j, v := range b {
		if a[j] < v {
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
	// First find a dominator of each type, trying the last ones found first (dominators
	// repeat); then replace each by an undominated one, which dominates as well by transitivity
	// (found among the undominated types, or by following the chain if rounding says otherwise).
	first := make([]int, in.nT)
	var recent []int
	for s := range first {
		first[s] = -1
		for _, t := range recent {
			if b := ratio(s, t); !math.IsInf(b, 1) && dominated(s, t, b) {
				first[s] = t
				break
			}
		}
		for t := 0; t < in.nT && first[s] < 0; t++ {
			if b := ratio(s, t); !math.IsInf(b, 1) && dominated(s, t, b) {
				first[s] = t
				recent = append(recent, t)
				if len(recent) > 4 {
					recent = recent[1:]
				}
			}
		}
	}
	var roots []int
	for t, d := range first {
		if d < 0 {
			roots = append(roots, t)
		}
	}
	dom := make([]int, in.nT)
	betas := make([]float64, in.nT)
	for s := range dom {
		dom[s] = -1
		if first[s] < 0 {
			continue
		}
		for _, t := range roots {
			if b := ratio(s, t); !math.IsInf(b, 1) && dominated(s, t, b) {
				dom[s], betas[s] = t, b
				break
			}
		}
		if dom[s] < 0 { // rounding broke transitivity: follow the chain, multiplying β
			t, b := s, 1.0
			for first[t] >= 0 {
				b *= ratio(t, first[t])
				t = first[t]
			}
			dom[s], betas[s] = t, b
		}
	}
	return dom, betas
}

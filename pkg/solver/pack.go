package solver

import (
	"cmp"
	"math"
	"slices"

	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver/bound"
)

// roundPatterns turns an LP solution into whole nodes: floor(multiplicity) copies of each
// pattern (never more pods of a class than remain), then, for the demand left over, whole nodes
// chosen greedily (best price per covered demand using the patterns with fractional multiplicity
// first, then any type) until every class is covered or nothing more can be placed. It returns
// the nodes (type index + class counts) and what is left uncovered.
//
// Each returned pattern stands for Multiplicity (a whole number) identical nodes. A node holds
// only pods of classes that may use its type and fits it: capacity, group caps, and MaxCount
// over all the nodes of a limited type. Nodes that end up with fewer pods than their pattern
// move to the cheapest type that holds them (among the types all their classes may use). Demand
// is weighed per class by its largest share of any resource, relative to the largest capacity
// of any type in that resource. Last, two of the nodes bought for the leftover demand become
// one wherever a single node of some type holds both for less (see merge). left[k] > 0 only
// when every type class k fits is limited and used up.
func roundPatterns(p *bound.Problem, patterns []bound.Pattern) (nodes []bound.Pattern, left []int) {
	r := newRounder(p)
	// Whole copies of the LP's patterns.
	for _, pt := range patterns {
		for range int(math.Floor(pt.Multiplicity + 1e-9)) {
			if !r.place(pt.Type, pt.Classes, pt.Counts) {
				break
			}
		}
	}
	whole := len(r.nodes)
	// The fractional parts: the pattern that covers the leftover demand most cheaply, at most
	// once each, while one still covers some.
	taken := make([]bool, len(patterns))
	for {
		best, bestScore := -1, math.Inf(1)
		for i, pt := range patterns {
			frac := pt.Multiplicity - math.Floor(pt.Multiplicity+1e-9)
			if taken[i] || frac <= 1e-9 || !r.open(pt.Type) {
				continue
			}
			if s := r.score(pt.Type, pt.Classes, pt.Counts); s < bestScore {
				best, bestScore = i, s
			}
		}
		if best < 0 {
			break
		}
		taken[best] = true
		pt := patterns[best]
		r.place(pt.Type, pt.Classes, pt.Counts)
	}
	// Any type, filled greedily with what is left; merging nodes can free a limited type for
	// more.
	for {
		for r.remaining() {
			t, classes, counts := r.bestFill()
			if t < 0 {
				break
			}
			r.place(t, classes, counts)
		}
		if !r.merge(whole) || !r.remaining() {
			break
		}
	}
	return r.result(), r.left
}

// rounder is the state of roundPatterns: the nodes placed and the pods left.
type rounder struct {
	p      *bound.Problem
	left   []int
	weight []float64 // per class: its largest share of a resource
	used   []int     // nodes of each type
	allow  [][]bool  // per class and type: the class may use the type and fits it
	// allowSet[k] is allow[k] as a set; grouped says some class has a group cap.
	allowSet []scheduling.Bitset
	grouped  bool
	nodes    []rounded

	byPrice   []int // types by price, then index
	perGroup  []int // scratch for demand
	groupLeft []int // scratch for fill
}

// rounded is one placed node.
type rounded struct {
	t       int
	classes []int32
	counts  []int32
}

func newRounder(p *bound.Problem) *rounder {
	r := &rounder{p: p, left: make([]int, len(p.Classes)), weight: make([]float64, len(p.Classes)), used: make([]int, len(p.Types))}
	var most scheduling.Resources
	for _, t := range p.Types {
		most = most.Max(t.Capacity)
	}
	r.byPrice = make([]int, len(p.Types))
	for t := range r.byPrice {
		r.byPrice[t] = t
	}
	slices.SortStableFunc(r.byPrice, func(a, b int) int { return cmp.Compare(p.Types[a].Price, p.Types[b].Price) })
	r.perGroup = make([]int, len(p.Groups))
	r.groupLeft = make([]int, len(p.Groups))
	r.allow = make([][]bool, len(p.Classes))
	r.allowSet = make([]scheduling.Bitset, len(p.Classes))
	for k, c := range p.Classes {
		r.left[k] = max(c.Count, 0)
		for res, d := range c.Demand {
			if d > 0 && most[res] > 0 {
				r.weight[k] = max(r.weight[k], float64(d)/float64(most[res]))
			}
		}
		r.allow[k] = make([]bool, len(p.Types))
		r.allowSet[k] = scheduling.NewBitset(len(p.Types))
		r.grouped = r.grouped || c.Group >= 0
		for _, t := range c.Types {
			if t >= 0 && t < len(p.Types) && c.Demand.Fits(&p.Types[t].Capacity) {
				r.allow[k][t] = true
				r.allowSet[k].Set(t)
			}
		}
	}
	return r
}

// open reports whether one more node of type t may be bought.
func (r *rounder) open(t int) bool {
	m := r.p.Types[t].MaxCount
	return m <= 0 || r.used[t] < m
}

// remaining reports whether some pods are left.
func (r *rounder) remaining() bool {
	for _, n := range r.left {
		if n > 0 {
			return true
		}
	}
	return false
}

// take is what a node of a pattern holds of the pods left: each count capped by what remains.
func (r *rounder) take(classes, counts []int32) (cls, cnt []int32) {
	for i, k := range classes {
		if q := min(int(counts[i]), r.left[k]); q > 0 {
			cls = append(cls, k)
			cnt = append(cnt, int32(q))
		}
	}
	return cls, cnt
}

// score is the price of a node of type t per demand it would cover with the pattern.
func (r *rounder) score(t int, classes, counts []int32) float64 {
	covered := 0.0
	for i, k := range classes {
		covered += float64(min(int(counts[i]), r.left[k])) * r.weight[k]
	}
	if covered <= 0 {
		return math.Inf(1)
	}
	return r.p.Types[t].Price / covered
}

// place buys a node of type t holding the pattern's pods that are left, on the cheapest type
// that holds them when fewer than the pattern's, and reports whether it placed any.
func (r *rounder) place(t int, classes, counts []int32) bool {
	if !r.open(t) {
		return false
	}
	cls, cnt := r.take(classes, counts)
	if len(cls) == 0 {
		return false
	}
	if !slices.Equal(cnt, counts) {
		if s := r.cheapestHolding(cls, cnt, r.p.Types[t].Price); s >= 0 {
			t = s
		}
	}
	r.used[t]++
	for i, k := range cls {
		r.left[k] -= int(cnt[i])
	}
	r.nodes = append(r.nodes, rounded{t: t, classes: cls, counts: cnt})
	return true
}

// holds reports whether one node of type t holds the pods: every class may use t, and they fit
// its capacity and the group caps.
func (r *rounder) holds(t int, cls, cnt []int32) bool {
	for _, k := range cls {
		if !r.allow[k][t] {
			return false
		}
	}
	sum, ok := r.demand(cls, cnt)
	return ok && sum.Fits(&r.p.Types[t].Capacity)
}

// demand is what the pods need of a node, and whether they keep within the group caps.
func (r *rounder) demand(cls, cnt []int32) (scheduling.Resources, bool) {
	var sum scheduling.Resources
	over := false
	for i, k := range cls {
		c := &r.p.Classes[k]
		sum = sum.Add(c.Demand.Scale(int64(cnt[i])))
		if g := c.Group; g >= 0 {
			r.perGroup[g] += int(cnt[i])
			over = over || r.perGroup[g] > r.p.Groups[g].PerNode
		}
	}
	for _, k := range cls {
		if g := r.p.Classes[k].Group; g >= 0 {
			r.perGroup[g] = 0
		}
	}
	return sum, !over
}

// bestFill fills one node of every open type greedily with the pods left (heaviest classes
// first, as many of each as fit) and returns the fill with the best price per demand covered,
// or t = −1 if no type takes any pod.
func (r *rounder) bestFill() (t int, classes, counts []int32) {
	order := make([]int, 0, len(r.left))
	for k, n := range r.left {
		if n > 0 {
			order = append(order, k)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(r.weight[b], r.weight[a]) })
	t, bestScore := -1, math.Inf(1)
	for s := range r.p.Types {
		if !r.open(s) {
			continue
		}
		cls, cnt := r.fill(s, order)
		if sc := r.score(s, cls, cnt); sc < bestScore {
			t, bestScore, classes, counts = s, sc, cls, cnt
		}
	}
	return t, classes, counts
}

// fill packs the pods left of the classes in order onto one node of type t.
func (r *rounder) fill(t int, order []int) (cls, cnt []int32) {
	room := r.p.Types[t].Capacity
	for g := range r.groupLeft {
		r.groupLeft[g] = r.p.Groups[g].PerNode
	}
	for _, k := range order {
		if !r.allow[k][t] {
			continue
		}
		c := &r.p.Classes[k]
		q := r.left[k]
		if c.Group >= 0 {
			q = min(q, r.groupLeft[c.Group])
		}
		for res, d := range c.Demand {
			if d > 0 {
				q = min(q, int(room[res]/d))
			}
		}
		if q <= 0 {
			continue
		}
		room = room.Sub(c.Demand.Scale(int64(q)))
		if c.Group >= 0 {
			r.groupLeft[c.Group] -= q
		}
		cls = append(cls, int32(k))
		cnt = append(cnt, int32(q))
	}
	return cls, cnt
}

// merge replaces two of the nodes placed for the leftover demand (those from index from on) by
// one node of the cheapest type that holds the pods of both, when that is cheaper than the two,
// as long as some pair gains, largest gain first, and reports whether it merged any. The
// leftover nodes are few and often half empty; the LP's whole copies are left as they are.
func (r *rounder) merge(from int) bool {
	if r.grouped {
		return r.mergeGrouped(from)
	}
	// Without group caps a pair's demand is the sum of the two nodes' and the types it may use
	// those both may use: both are kept per node, so that judging a pair costs no union.
	n := len(r.nodes) - from
	if n < 2 {
		return false
	}
	sums := make([]scheduling.Resources, n)
	allowed := make([]scheduling.Bitset, n)
	for i := range n {
		nd := &r.nodes[from+i]
		sums[i], _ = r.demand(nd.classes, nd.counts)
		allowed[i] = scheduling.FullBitset(len(r.p.Types))
		for _, k := range nd.classes {
			allowed[i].And(r.allowSet[k])
		}
	}
	merged := false
	for {
		bi, bj, bt, gain := -1, -1, -1, 1e-12
		for i := range n {
			for j := i + 1; j < n; j++ {
				a, b := &r.nodes[from+i], &r.nodes[from+j]
				pair := r.p.Types[a.t].Price + r.p.Types[b.t].Price
				need := sums[i].Add(sums[j])
				r.used[a.t]--
				r.used[b.t]--
				if t := r.cheapestFor(&need, allowed[i], allowed[j], pair-gain); t >= 0 {
					bi, bj, bt, gain = i, j, t, pair-r.p.Types[t].Price
				}
				r.used[a.t]++
				r.used[b.t]++
			}
		}
		if bi < 0 {
			return merged
		}
		merged = true
		a, b := r.nodes[from+bi], r.nodes[from+bj]
		cls, cnt := union(a.classes, a.counts, b.classes, b.counts)
		r.used[a.t]--
		r.used[b.t]--
		r.used[bt]++
		r.nodes[from+bi] = rounded{t: bt, classes: cls, counts: cnt}
		r.nodes = slices.Delete(r.nodes, from+bj, from+bj+1)
		sums[bi] = sums[bi].Add(sums[bj])
		allowed[bi].And(allowed[bj])
		sums = slices.Delete(sums, bj, bj+1)
		allowed = slices.Delete(allowed, bj, bj+1)
		n--
	}
}

// cheapestFor is cheapestHolding for a demand already summed, over the types both sets allow.
func (r *rounder) cheapestFor(need *scheduling.Resources, a, b scheduling.Bitset, below float64) int {
	for _, t := range r.byPrice {
		if r.p.Types[t].Price >= below {
			return -1
		}
		if a.Has(t) && b.Has(t) && r.open(t) && need.Fits(&r.p.Types[t].Capacity) {
			return t
		}
	}
	return -1
}

// mergeGrouped is merge when some class has a group cap: the pair's pods are summed class by
// class, as the caps count them.
func (r *rounder) mergeGrouped(from int) bool {
	merged := false
	for {
		bi, bj, bt, gain := -1, -1, -1, 1e-12
		for i := from; i < len(r.nodes); i++ {
			for j := i + 1; j < len(r.nodes); j++ {
				a, b := &r.nodes[i], &r.nodes[j]
				cls, cnt := union(a.classes, a.counts, b.classes, b.counts)
				pair := r.p.Types[a.t].Price + r.p.Types[b.t].Price
				// Freeing both nodes reopens their types for the merged one.
				r.used[a.t]--
				r.used[b.t]--
				if t := r.cheapestHolding(cls, cnt, pair-gain); t >= 0 {
					bi, bj, bt, gain = i, j, t, pair-r.p.Types[t].Price
				}
				r.used[a.t]++
				r.used[b.t]++
			}
		}
		if bi < 0 {
			return merged
		}
		merged = true
		a, b := r.nodes[bi], r.nodes[bj]
		cls, cnt := union(a.classes, a.counts, b.classes, b.counts)
		r.used[a.t]--
		r.used[b.t]--
		r.used[bt]++
		r.nodes[bi] = rounded{t: bt, classes: cls, counts: cnt}
		r.nodes = slices.Delete(r.nodes, bj, bj+1)
	}
}

// cheapestHolding is the cheapest open type (lowest index among equals) priced below below
// that holds the pods, or −1.
func (r *rounder) cheapestHolding(cls, cnt []int32, below float64) int {
	sum, ok := r.demand(cls, cnt)
	if !ok {
		return -1
	}
	for _, t := range r.byPrice {
		if r.p.Types[t].Price >= below {
			return -1
		}
		if r.open(t) && sum.Fits(&r.p.Types[t].Capacity) && r.allowsAll(t, cls) {
			return t
		}
	}
	return -1
}

// allowsAll reports whether every class may use type t.
func (r *rounder) allowsAll(t int, cls []int32) bool {
	for _, k := range cls {
		if !r.allow[k][t] {
			return false
		}
	}
	return true
}

// union adds two nodes' pods class by class.
func union(ca, na, cb, nb []int32) (cls, cnt []int32) {
	cls, cnt = slices.Clone(ca), slices.Clone(na)
	for i, k := range cb {
		if j := slices.Index(cls, k); j >= 0 {
			cnt[j] += nb[i]
		} else {
			cls = append(cls, k)
			cnt = append(cnt, nb[i])
		}
	}
	return cls, cnt
}

// result gathers identical nodes into patterns with their number as Multiplicity, classes
// ascending, ordered by Multiplicity (largest first), then type, then counts.
func (r *rounder) result() []bound.Pattern {
	var out []bound.Pattern
	for _, nd := range r.nodes {
		idx := make([]int, len(nd.classes))
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(nd.classes[a], nd.classes[b]) })
		pt := bound.Pattern{Type: nd.t, Multiplicity: 1}
		for _, i := range idx {
			pt.Classes = append(pt.Classes, nd.classes[i])
			pt.Counts = append(pt.Counts, nd.counts[i])
		}
		out = append(out, pt)
	}
	same := func(a, b bound.Pattern) int {
		if c := cmp.Compare(a.Type, b.Type); c != 0 {
			return c
		}
		if c := slices.Compare(a.Classes, b.Classes); c != 0 {
			return c
		}
		return slices.Compare(a.Counts, b.Counts)
	}
	slices.SortFunc(out, same)
	merged := out[:0]
	for _, pt := range out {
		if n := len(merged); n > 0 && same(merged[n-1], pt) == 0 {
			merged[n-1].Multiplicity++
			continue
		}
		merged = append(merged, pt)
	}
	slices.SortStableFunc(merged, func(a, b bound.Pattern) int {
		if c := cmp.Compare(b.Multiplicity, a.Multiplicity); c != 0 {
			return c
		}
		return same(a, b)
	})
	return merged
}

package bound

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

type prepStatus int

const (
	solvable prepStatus = iota
	infeasible
	empty
)

// instance is a Problem reduced for the bounds: classes merged, useless and dominated types
// dropped, identical limited types merged, and only the resources some pod demands kept. Every
// reduction keeps the optimum unchanged or lowers it, so bounds of the instance bound the Problem.
type instance struct {
	nR  int   // relevant resources
	res []int // their slots in scheduling.Resources

	nK    int
	count []int64 // pods per class
	dem   []int64 // nK × nR demand per pod
	group []int   // compact group index, or -1
	gcap  []int64 // per compact group: pods per node

	nT     int
	orig   []int     // the Problem index of each type (the first one, when merged)
	price  []float64 // per type
	capa   []int64   // nT × nR
	inv    []float64 // nT × nR: 1/capacity, 0 where the capacity is 0
	limit  []int64   // 0 = unlimited
	weight []float64 // W_t: at most this many non-empty nodes of type t (min of its limit and its pods)

	// Classes each type may hold, with u_{k,t}: how many pods of k one node of t can hold
	// alone (capacity, group cap and the class count). tCls[tOff[t]:tOff[t+1]] ascending.
	tOff  []int32
	tCls  []int32
	tU    []int64
	tBits []uint64 // nT × words: the classes of each type as a bitset
	words int
	tE    []float64 // per entry × nR: demand / capacity
	tR    []float64 // per entry × nR: capacity / demand, +Inf where the demand is 0

	totalPods int64
	anyNode   float64 // the cheapest type any pod may use: a packing with a pod buys one node
	maxPrice  float64
}

// classKey is the identity of a class for merging: pods with the same demand, usable types and
// group are interchangeable.
type classKey struct {
	demand scheduling.Resources
	types  []int
	group  int
	count  int64
}

func prepare(p *Problem) (*instance, prepStatus) {
	for i := range p.Types {
		t := &p.Types[i]
		if math.IsNaN(t.Price) || math.IsInf(t.Price, 0) || t.Price < 0 {
			panic(fmt.Sprintf("bound: type %d (%s) has price %v", i, t.Name, t.Price))
		}
		for r, v := range t.Capacity {
			if v < 0 {
				panic(fmt.Sprintf("bound: type %d (%s) has negative capacity in slot %d", i, t.Name, r))
			}
		}
	}
	var keys []classKey
	anyNode := math.Inf(1)
	for i := range p.Classes {
		c := &p.Classes[i]
		if c.Count <= 0 {
			continue
		}
		for r, v := range c.Demand {
			if v < 0 {
				panic(fmt.Sprintf("bound: class %d has negative demand in slot %d", i, r))
			}
		}
		g := -1
		if c.Group >= 0 {
			if c.Group >= len(p.Groups) {
				panic(fmt.Sprintf("bound: class %d has group %d of %d", i, c.Group, len(p.Groups)))
			}
			if p.Groups[c.Group].PerNode < 1 {
				return nil, infeasible
			}
			g = c.Group
		}
		var types []int
		for _, t := range c.Types {
			if t < 0 || t >= len(p.Types) {
				panic(fmt.Sprintf("bound: class %d has type %d of %d", i, t, len(p.Types)))
			}
			if c.Demand.Fits(&p.Types[t].Capacity) {
				types = append(types, t)
			}
		}
		if len(types) == 0 {
			return nil, infeasible
		}
		slices.Sort(types)
		types = slices.Compact(types)
		for _, t := range types {
			anyNode = min(anyNode, p.Types[t].Price)
		}
		keys = append(keys, classKey{demand: c.Demand, types: types, group: g, count: int64(c.Count)})
	}
	if len(keys) == 0 {
		return nil, empty
	}
	in := &instance{anyNode: anyNode}
	for _, k := range keys {
		in.totalPods += k.count
	}
	for r := 0; r < scheduling.NumResources; r++ {
		for _, k := range keys {
			if k.demand[r] > 0 {
				in.res = append(in.res, r)
				break
			}
		}
	}
	in.nR = len(in.res)
	keys = mergeClasses(keys)
	in.addClasses(p, keys)
	in.addTypes(p, keys)
	return in, solvable
}

// mergeClasses merges classes with equal demand, types and group, and drops classes that demand
// nothing: they fit beside anything, so leaving them out only lowers the optimum.
func mergeClasses(keys []classKey) []classKey {
	keys = slices.DeleteFunc(keys, func(k classKey) bool { return k.demand.IsZero() })
	slices.SortStableFunc(keys, func(a, b classKey) int {
		if c := slices.Compare(a.demand[:], b.demand[:]); c != 0 {
			return c
		}
		if c := slices.Compare(a.types, b.types); c != 0 {
			return c
		}
		return cmp.Compare(a.group, b.group)
	})
	out := keys[:0]
	for _, k := range keys {
		if n := len(out); n > 0 && out[n-1].demand == k.demand && out[n-1].group == k.group && slices.Equal(out[n-1].types, k.types) {
			out[n-1].count += k.count
			continue
		}
		out = append(out, k)
	}
	return out
}

func (in *instance) addClasses(p *Problem, keys []classKey) {
	in.nK = len(keys)
	in.count = make([]int64, in.nK)
	in.dem = make([]int64, in.nK*in.nR)
	in.group = make([]int, in.nK)
	compact := make([]int, len(p.Groups))
	for i := range compact {
		compact[i] = -1
	}
	for k, key := range keys {
		in.count[k] = key.count
		for j, r := range in.res {
			in.dem[k*in.nR+j] = key.demand[r]
		}
		in.group[k] = -1
		if g := key.group; g >= 0 {
			if compact[g] < 0 {
				compact[g] = len(in.gcap)
				in.gcap = append(in.gcap, int64(p.Groups[g].PerNode))
			}
			in.group[k] = compact[g]
		}
	}
}

// candidate is a type while the type set is being reduced.
type candidate struct {
	orig    int
	price   float64
	capa    []int64
	limit   int64
	classes []uint64 // bitset over classes
	dropped bool
}

func (in *instance) addTypes(p *Problem, keys []classKey) {
	words := (in.nK + 63) / 64
	cands := make([]candidate, len(p.Types))
	for t := range cands {
		c := &cands[t]
		c.orig = t
		c.price = p.Types[t].Price
		c.capa = make([]int64, in.nR)
		for j, r := range in.res {
			c.capa[j] = p.Types[t].Capacity[r]
		}
		if m := p.Types[t].MaxCount; m > 0 {
			c.limit = int64(m)
		}
		c.classes = make([]uint64, words)
	}
	used := make([]bool, len(cands))
	for k, key := range keys {
		for _, t := range key.types {
			cands[t].classes[k/64] |= 1 << (k % 64)
			used[t] = true
		}
	}
	list := make([]*candidate, 0, len(cands))
	for t := range cands {
		if used[t] {
			list = append(list, &cands[t])
		}
	}
	list = mergeLimited(list)
	dropDominated(list)
	for _, c := range list {
		if !c.dropped {
			in.appendType(c, keys)
		}
	}
	in.tOff = append(in.tOff, int32(len(in.tCls)))
}

// mergeLimited merges limited types that are identical to the bounds (price, capacity, classes):
// n nodes of one and m of the other are n+m nodes of either.
func mergeLimited(list []*candidate) []*candidate {
	sorted := slices.Clone(list)
	slices.SortStableFunc(sorted, func(a, b *candidate) int {
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
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j].price == sorted[i].price && slices.Equal(sorted[j].capa, sorted[i].capa) &&
			slices.Equal(sorted[j].classes, sorted[i].classes) {
			j++
		}
		// sorted[i:j] are identical but for their limits; keep the first unlimited one, or merge.
		keep := sorted[i]
		for _, c := range sorted[i:j] {
			if c.limit == 0 {
				keep = c
				break
			}
		}
		if keep.limit > 0 {
			for _, c := range sorted[i+1 : j] {
				keep.limit += c.limit
			}
		}
		for _, c := range sorted[i:j] {
			c.dropped = c != keep
		}
		i = j
	}
	return slices.DeleteFunc(list, func(c *candidate) bool { return c.dropped })
}

// dropDominated marks every type that an unlimited type beats: no dearer, at least as large in
// every relevant resource, and usable by every class that can use it. Any packing can move such
// a type's nodes to the dominating type at no extra cost, so the optimum is unchanged. After
// mergeLimited no two remaining types dominate each other, so the relation is a strict order and
// every dropped type has an undropped dominator.
func dropDominated(list []*candidate) {
	var doms []*candidate
	for _, c := range list {
		if c.limit == 0 {
			doms = append(doms, c)
		}
	}
	slices.SortStableFunc(doms, func(a, b *candidate) int { return cmp.Compare(a.price, b.price) })
	for _, s := range list {
		for _, t := range doms {
			if t.price > s.price {
				break
			}
			if t != s && dominates(t, s) {
				s.dropped = true
				break
			}
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

func (in *instance) appendType(c *candidate, keys []classKey) {
	in.tOff = append(in.tOff, int32(len(in.tCls)))
	in.orig = append(in.orig, c.orig)
	in.price = append(in.price, c.price)
	in.maxPrice = max(in.maxPrice, c.price)
	in.capa = append(in.capa, c.capa...)
	for _, v := range c.capa {
		inv := 0.0
		if v > 0 {
			inv = 1 / float64(v)
		}
		in.inv = append(in.inv, inv)
	}
	in.limit = append(in.limit, c.limit)
	in.words = len(c.classes)
	in.tBits = append(in.tBits, c.classes...)
	var pods int64
	for k := range keys {
		if c.classes[k/64]&(1<<(k%64)) == 0 {
			continue
		}
		u := in.count[k]
		if g := in.group[k]; g >= 0 {
			u = min(u, in.gcap[g])
		}
		for j := 0; j < in.nR; j++ {
			if d := in.dem[k*in.nR+j]; d > 0 {
				u = min(u, c.capa[j]/d)
			}
		}
		in.tCls = append(in.tCls, int32(k))
		in.tU = append(in.tU, u)
		for j, d := range in.dem[k*in.nR : (k+1)*in.nR] {
			r := math.Inf(1)
			if d > 0 {
				r = float64(c.capa[j]) / float64(d)
			}
			in.tE = append(in.tE, float64(d)/float64(max(c.capa[j], 1)))
			in.tR = append(in.tR, r)
		}
		pods += in.count[k]
	}
	w := float64(pods)
	if c.limit > 0 {
		w = min(w, float64(c.limit))
	}
	in.weight = append(in.weight, w)
	in.nT++
}

// slot is the position of class k in type t's class list; k must be usable on t.
func (in *instance) slot(t int, k int32) int {
	lo, hi := int(in.tOff[t]), int(in.tOff[t+1])
	i, _ := slices.BinarySearch(in.tCls[lo:hi], k)
	return lo + i
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

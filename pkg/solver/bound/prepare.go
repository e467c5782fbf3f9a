package bound

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"

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

	nK      int
	count   []int64 // pods per class
	members [][]int // per class: the Problem classes merged into it, ascending
	dem     []int64 // nK × nR demand per pod
	group   []int   // compact group index, or -1
	gcap    []int64 // per compact group: pods per node

	nT     int
	orig   []int     // the Problem index of each type (the first one, when merged)
	origs  [][]int   // per type: the Problem types merged into it (limited ones only), orig first
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
	effU      []int64 // scratch for effective and upper
	effG      []int64
	effUp     []int64
	effKs     []int
	effHeavy  []int
	effKey    []byte
	anyNode   float64 // the cheapest type any pod may use: a packing with a pod buys one node
	maxPrice  float64
	// countFree drops only types that are dominated whatever the counts (by capacity, not by
	// effective capacity), so that what is certified holds at any counts (CoveringPrices).
	countFree bool
}

// classKey is the identity of a class for merging: pods with the same demand, usable types and
// group are interchangeable.
type classKey struct {
	demand  scheduling.Resources
	types   []int
	group   int
	count   int64
	members []int // the Problem classes merged into it
}

func prepare(p *Problem) (*instance, prepStatus) { return prepareWith(p, false) }

// prepareWith is prepare; with countFree, types are reduced only by dominance that holds at any
// counts (instance.countFree).
func prepareWith(p *Problem, countFree bool) (*instance, prepStatus) {
	for i := range p.Types {
		t := &p.Types[i]
		if math.IsNaN(t.Price) || math.IsInf(t.Price, 0) || t.Price < 0 {
			panic(fmt.Sprintf("bound: type %d (%s) has price %v", i, t.Name, t.Price))
		}
		// A negative capacity (a type whose DaemonSets overfill it, a node overcommitted) is
		// no room at all: no class fits it, so no class is offered it below.
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
		keys = append(keys, classKey{demand: c.Demand, types: types, group: g, count: int64(c.Count), members: []int{i}})
	}
	if len(keys) == 0 {
		return nil, empty
	}
	in := &instance{anyNode: anyNode, countFree: countFree}
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
			out[n-1].members = append(out[n-1].members, k.members...)
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
	in.members = make([][]int, in.nK)
	for k, key := range keys {
		in.count[k] = key.count
		in.members[k] = key.members
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

// typeScratch is addTypes' working memory, kept between instances (typeScratches): the
// solver prepares a bound problem in every guided solve, over every type of the catalog, and
// these were the largest allocations of a disruption pass's simulations. Nothing in it outlives
// addTypes: appendType copies what the instance keeps.
type typeScratch struct {
	cands     []candidate
	capa      []int64
	classBits []uint64
	used      []bool
	list      []*candidate
}

var typeScratches = sync.Pool{New: func() any { return new(typeScratch) }}

func (in *instance) addTypes(p *Problem, keys []classKey) {
	words := (in.nK + 63) / 64
	sc := typeScratches.Get().(*typeScratch)
	defer typeScratches.Put(sc)
	nT := len(p.Types)
	cands := grown(sc.cands, nT)
	capa := grown(sc.capa, nT*in.nR)
	classBits := grown(sc.classBits, nT*words)
	used := grown(sc.used, nT)
	sc.cands, sc.capa, sc.classBits, sc.used = cands, capa, classBits, used
	clear(classBits)
	clear(used)
	for t := range cands {
		c := &cands[t]
		*c = candidate{orig: t, price: p.Types[t].Price, merged: c.merged[:0]}
		c.capa = capa[t*in.nR : (t+1)*in.nR : (t+1)*in.nR]
		for j, r := range in.res {
			c.capa[j] = p.Types[t].Capacity[r]
		}
		if m := p.Types[t].MaxCount; m > 0 {
			c.limit = int64(m)
		}
		c.classes = classBits[t*words : (t+1)*words : (t+1)*words]
	}
	for k, key := range keys {
		for _, t := range key.types {
			cands[t].classes[k/64] |= 1 << (k % 64)
			used[t] = true
		}
	}
	list := sc.list[:0]
	for t := range cands {
		if used[t] {
			list = append(list, &cands[t])
		}
	}
	defer func() { clear(list[:cap(list)]); sc.list = list[:0] }()
	list = mergeLimited(list)
	bounds := map[string][]int64{}
	if in.countFree {
		capacity := func(c *candidate) []int64 { return c.capa }
		dropDominated(list, capacity, capacity)
	} else {
		dropDominated(list, func(c *candidate) []int64 { return in.upper(bounds, c) }, in.effective)
	}
	list = slices.DeleteFunc(list, func(c *candidate) bool { return c.dropped })
	entries := 0
	for _, c := range list {
		for _, b := range c.classes {
			entries += bits.OnesCount64(b)
		}
	}
	in.reserve(len(list), entries)
	for _, c := range list {
		in.appendType(c, keys)
	}
	in.tOff = append(in.tOff, int32(len(in.tCls)))
}

// reserve sizes the per-type slices for nT types and entries type–class pairs.
func (in *instance) reserve(nT, entries int) {
	nR := in.nR
	in.orig = make([]int, 0, nT)
	in.origs = make([][]int, 0, nT)
	in.price = make([]float64, 0, nT)
	in.capa = make([]int64, 0, nT*nR)
	in.inv = make([]float64, 0, nT*nR)
	in.limit = make([]int64, 0, nT)
	in.weight = make([]float64, 0, nT)
	in.tOff = make([]int32, 0, nT+1)
	in.tBits = make([]uint64, 0, nT*((in.nK+63)/64))
	in.tCls = make([]int32, 0, entries)
	in.tU = make([]int64, 0, entries)
	in.tE = make([]float64, 0, entries*nR)
	in.tR = make([]float64, 0, entries*nR)
}

func (in *instance) appendType(c *candidate, keys []classKey) {
	in.tOff = append(in.tOff, int32(len(in.tCls)))
	in.orig = append(in.orig, c.orig)
	in.origs = append(in.origs, append([]int{c.orig}, c.merged...))
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

// grown returns s resliced to n elements, reallocated when its capacity is short (the elements
// are not cleared).
func grown[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

package solver

import (
	"slices"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// indexedSlots are the resources the claim index answers for; the rest are checked exactly on
// the candidates it returns.
var indexedSlots = [...]int{scheduling.CPU, scheduling.Memory, scheduling.Pods, scheduling.NvidiaGPU, scheduling.Neuron}

type slotVec [len(indexedSlots)]int64

// claimIndex finds, among the claims opened in this solve, the first one (in opening order)
// that may take a request, without looking at every claim. It keeps the claims of each pool
// apart, so that a class looks only at the pools it may use (the claims of a GPU pool, with
// room to spare in CPU and memory, are never candidates for a pod that does not tolerate it),
// and answers two questions: which claims have room for the request in their target type
// (free: the target's allocatable less what is placed), and which could hold it were they to
// grow to the largest type they may still become (grow: that type's allocatable, element-wise,
// less what is placed). A claim the index passes over is one a placement would refuse anyway;
// a claim it returns is only a candidate, checked exactly by the caller.
type claimIndex struct {
	pools []poolClaims // by pool index
}

// poolClaims indexes the claims of one pool: global[i] is the solve's index of the pool's i-th
// claim (ascending).
type poolClaims struct {
	global     []int32
	free, grow slotTree
}

// set records claim cl's room: free in its target, and grow in its largest type.
func (x *claimIndex) set(cl *newClaim) {
	pi := cl.pool.index
	for len(x.pools) <= pi {
		x.pools = append(x.pools, poolClaims{})
	}
	pc := &x.pools[pi]
	if cl.slot == 0 {
		pc.global = append(pc.global, int32(cl.index))
		cl.slot = int32(len(pc.global))
	}
	grow := cl.maxAlloc.Sub(cl.used)
	pc.free.set(int(cl.slot-1), &cl.free)
	pc.grow.set(int(cl.slot-1), &grow)
}

// first returns the lowest claim index ≥ from, among the pools class c may use, whose free room
// (or, with grow, room to grow) holds req in every indexed resource; -1 if none.
func (x *claimIndex) first(c *class, from int, req *scheduling.Resources, grow bool) int {
	var want slotVec
	for j, s := range indexedSlots {
		want[j] = req[s]
	}
	best := -1
	for pi := range x.pools {
		if pi < len(c.poolReason) && c.poolReason[pi] != nil {
			continue
		}
		pc := &x.pools[pi]
		local, _ := slices.BinarySearch(pc.global, int32(from))
		if local >= len(pc.global) || (best >= 0 && int(pc.global[local]) >= best) {
			continue
		}
		tree := &pc.free
		if grow {
			tree = &pc.grow
		}
		if i := tree.first(local, &want); i >= 0 && (best < 0 || int(pc.global[i]) < best) {
			best = int(pc.global[i])
		}
	}
	return best
}

// slotTree is a segment tree of the element-wise maximum room over ranges of claims.
type slotTree struct {
	size int // leaves (a power of two)
	n    int // claims indexed
	max  []slotVec
}

func (x *slotTree) set(i int, free *scheduling.Resources) {
	if i >= x.size {
		x.grow(i + 1)
	}
	if i >= x.n {
		x.n = i + 1
	}
	node := x.size + i
	for j, s := range indexedSlots {
		x.max[node][j] = free[s]
	}
	for node >>= 1; node >= 1; node >>= 1 {
		l, r := &x.max[2*node], &x.max[2*node+1]
		for j := range x.max[node] {
			x.max[node][j] = max(l[j], r[j])
		}
	}
}

func (x *slotTree) grow(n int) {
	size := max(x.size, 8) // most solves of the disruption loop open a claim or two
	for size < n {
		size *= 2
	}
	old, oldSize := x.max, x.size
	x.size = size
	x.max = make([]slotVec, 2*size)
	const empty = -1 << 62
	for i := range x.max {
		for j := range x.max[i] {
			x.max[i][j] = empty
		}
	}
	for i := 0; i < x.n && oldSize > 0; i++ {
		x.max[size+i] = old[oldSize+i]
	}
	for node := size - 1; node >= 1; node-- {
		l, r := &x.max[2*node], &x.max[2*node+1]
		for j := range x.max[node] {
			x.max[node][j] = max(l[j], r[j])
		}
	}
}

// first returns the first leaf ≥ from whose room holds want, or -1.
func (x *slotTree) first(from int, want *slotVec) int {
	if from >= x.n {
		return -1
	}
	return x.search(1, 0, x.size, from, want)
}

func (x *slotTree) search(node, lo, hi, from int, want *slotVec) int {
	if hi <= from || lo >= x.n {
		return -1
	}
	m := &x.max[node]
	for j := range m {
		if m[j] < want[j] {
			return -1
		}
	}
	if hi-lo == 1 {
		return lo
	}
	mid := (lo + hi) / 2
	if r := x.search(2*node, lo, mid, from, want); r >= 0 {
		return r
	}
	return x.search(2*node+1, mid, hi, from, want)
}

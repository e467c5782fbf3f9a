package solver

import "github.com/tenon-sh/tenon/pkg/scheduling"

// indexedSlots are the resources the claim index answers for; the rest are checked exactly on
// the candidates it returns.
var indexedSlots = [...]int{scheduling.CPU, scheduling.Memory, scheduling.Pods, scheduling.NvidiaGPU, scheduling.Neuron}

type slotVec [len(indexedSlots)]int64

// claimIndex finds, among the claims opened in this solve, the first one (in opening order)
// whose target type has room for a request, without looking at every claim: a segment tree of
// the element-wise maximum free room over ranges of claims.
type claimIndex struct {
	size int // leaves (a power of two)
	n    int // claims indexed
	max  []slotVec
}

func (x *claimIndex) set(i int, free *scheduling.Resources) {
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

func (x *claimIndex) grow(n int) {
	size := max(x.size, 64)
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

// first returns the first claim index ≥ from whose indexed free room holds req, or -1.
func (x *claimIndex) first(from int, req *scheduling.Resources) int {
	if from >= x.n {
		return -1
	}
	var want slotVec
	for j, s := range indexedSlots {
		want[j] = req[s]
	}
	return x.search(1, 0, x.size, from, &want)
}

func (x *claimIndex) search(node, lo, hi, from int, want *slotVec) int {
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

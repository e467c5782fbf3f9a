package bound

import (
	"cmp"
	"math"
	"slices"
)

// Pattern is one node of the configuration LP's solution: a type and how many pods of each
// class it holds.
//
// Every pattern fits its type: its pods fit the capacity in every resource, respect the group
// caps, and may all use the type. The patterns of a type limited by MaxCount add up to at most
// that many nodes, and Σ Multiplicity × Counts covers every class's Count (up to 1e-9).
type Pattern struct {
	Type         int     // index into Problem.Types
	Classes      []int32 // indices into Problem.Classes, ascending …
	Counts       []int32 // … and how many pods of each one node holds (> 0)
	Multiplicity float64 // how many such nodes the LP buys (> 0)
}

// Cost is the price of the pattern's nodes, Multiplicity × the type's price.
func (pt *Pattern) Cost(p *Problem) float64 { return pt.Multiplicity * p.Types[pt.Type].Price }

// lpNode is a pattern of the reduced instance: instance type t holding counts[i] pods of
// instance class rows[i], bought mult times.
type lpNode struct {
	t      int
	rows   []int32
	counts []int64
	mult   float64
}

// solution is the primal solution of the master: its pattern columns in use, and whether it
// covers the demand without the artificial columns.
func (cg *colgen) solution() ([]lpNode, bool) {
	ms := cg.ms
	var out []lpNode
	for i, j := range ms.basis {
		x := ms.xb[i]
		switch {
		case j >= ms.nK && j < 2*ms.nK:
			if x > 1e-9 {
				return nil, false
			}
		case ms.kind[j] >= 0 && x > 1e-12:
			nd := lpNode{t: int(ms.kind[j]), mult: x}
			for e := ms.cOff[j]; e < ms.cOff[j+1]; e++ {
				if r := ms.cRow[e]; int(r) < ms.nK {
					if q := int64(math.Round(ms.cVal[e])); q > 0 {
						nd.rows = append(nd.rows, r)
						nd.counts = append(nd.counts, q)
					}
				}
			}
			if len(nd.rows) > 0 {
				out = append(out, nd)
			}
		}
	}
	return out, true
}

// patterns turns the instance's nodes into patterns of the problem: a merged limited type's
// nodes are shared among the types merged into it within their limits, and a merged class's
// pods among its classes within their counts.
func (in *instance) patterns(p *Problem, nodes []lpNode) []Pattern {
	nodes = in.spreadTypes(p, nodes)
	work := make([]spread, len(nodes))
	for i, nd := range nodes {
		work[i] = spread{t: nd.t, inst: nd.rows, instCnt: nd.counts, mult: nd.mult}
	}
	for k := 0; k < in.nK; k++ {
		work = in.spreadClass(p, work, int32(k))
	}
	out := make([]Pattern, 0, len(work))
	for _, w := range work {
		out = append(out, Pattern{Type: w.t, Classes: w.cls, Counts: w.cnt, Multiplicity: w.mult})
	}
	return out
}

// spreadTypes maps instance types to problem types. The nodes of a merged limited type go to
// the types merged into it in order, each up to its MaxCount (the LP keeps their sum within the
// merged limit; rounding beyond it goes to the last).
func (in *instance) spreadTypes(p *Problem, nodes []lpNode) []lpNode {
	var out []lpNode
	used := make(map[int]float64) // nodes given to each problem type so far
	for _, nd := range nodes {
		origs := in.origs[nd.t]
		left := nd.mult
		for i, o := range origs {
			take := left
			if i < len(origs)-1 {
				take = min(left, float64(p.Types[o].MaxCount)-used[o])
			}
			if take <= 1e-12 {
				continue
			}
			used[o] += take
			left -= take
			out = append(out, lpNode{t: o, rows: nd.rows, counts: nd.counts, mult: take})
			if left <= 1e-12 {
				break
			}
		}
	}
	return out
}

// spread is a pattern being mapped to the problem: problem type t, instance classes not yet
// mapped (inst, instCnt) and problem classes mapped (cls, cnt).
type spread struct {
	t       int
	inst    []int32
	instCnt []int64
	cls     []int32
	cnt     []int32
	mult    float64
}

// spreadClass maps instance class k in every pattern to its problem classes. Laid end to end,
// the slots of k in the patterns (each pattern's slots as lanes of length Multiplicity) are
// handed to the problem classes in order, each its Count, the last one what is left; a pattern
// whose lanes change hands part-way is cut there into patterns of one composition each.
func (in *instance) spreadClass(p *Problem, work []spread, k int32) []spread {
	members := in.members[k]
	if len(members) == 1 { // the class itself: relabel
		for w := range work {
			if i := slices.Index(work[w].inst, k); i >= 0 {
				work[w].cls = append(work[w].cls, int32(members[0]))
				work[w].cnt = append(work[w].cnt, int32(work[w].instCnt[i]))
			}
		}
		return work
	}
	cur, left := 0, float64(p.Classes[members[0]].Count)
	last := len(members) - 1
	if last == 0 {
		left = math.Inf(1)
	}
	out := make([]spread, 0, len(work))
	type piece struct {
		lo, hi float64
		member int
	}
	var pieces []piece
	var cuts []float64
	for _, w := range work {
		i := slices.Index(w.inst, k)
		if i < 0 {
			out = append(out, w)
			continue
		}
		slots := w.instCnt[i]
		rest := w
		rest.inst = slices.Delete(slices.Clone(w.inst), i, i+1)
		rest.instCnt = slices.Delete(slices.Clone(w.instCnt), i, i+1)
		pieces, cuts = pieces[:0], append(cuts[:0], 0, w.mult)
		for lane := int64(0); lane < slots; lane++ {
			for x := 0.0; x < w.mult; {
				take := min(w.mult-x, left)
				pieces = append(pieces, piece{lo: x, hi: x + take, member: cur})
				x += take
				left -= take
				if x < w.mult {
					cuts = append(cuts, x)
				}
				if left <= 1e-12*max(1, w.mult) && cur < last {
					cur++
					left = float64(p.Classes[members[cur]].Count)
					if cur == last {
						left = math.Inf(1)
					}
				}
			}
		}
		slices.Sort(cuts)
		cuts = slices.Compact(cuts)
		count := make([]int32, len(members))
		for c := 0; c+1 < len(cuts); c++ {
			lo, hi := cuts[c], cuts[c+1]
			if hi-lo <= 1e-12*max(1, w.mult) {
				continue
			}
			mid := (lo + hi) / 2
			clear(count)
			for _, pc := range pieces {
				if pc.lo <= mid && mid < pc.hi {
					count[pc.member]++
				}
			}
			seg := rest
			seg.mult = hi - lo
			seg.cls, seg.cnt = slices.Clone(rest.cls), slices.Clone(rest.cnt)
			for m, q := range count {
				if q > 0 {
					seg.cls = append(seg.cls, int32(members[m]))
					seg.cnt = append(seg.cnt, q)
				}
			}
			out = append(out, seg)
		}
	}
	return out
}

// gather merges patterns of the same type and counts, sorts each pattern's classes and orders
// the patterns by multiplicity (largest first), then type, then counts.
func gather(ps []Pattern) []Pattern {
	for i := range ps {
		sortClasses(&ps[i])
	}
	slices.SortFunc(ps, comparePods)
	out := ps[:0]
	for _, pt := range ps {
		if n := len(out); n > 0 && comparePods(out[n-1], pt) == 0 {
			out[n-1].Multiplicity += pt.Multiplicity
			continue
		}
		out = append(out, pt)
	}
	slices.SortStableFunc(out, func(a, b Pattern) int {
		if c := cmp.Compare(b.Multiplicity, a.Multiplicity); c != 0 {
			return c
		}
		return comparePods(a, b)
	})
	return out
}

// comparePods orders patterns by type, then classes and counts.
func comparePods(a, b Pattern) int {
	if c := cmp.Compare(a.Type, b.Type); c != 0 {
		return c
	}
	if c := slices.Compare(a.Classes, b.Classes); c != 0 {
		return c
	}
	return slices.Compare(a.Counts, b.Counts)
}

// sortClasses sorts a pattern's classes ascending, with their counts.
func sortClasses(pt *Pattern) {
	idx := make([]int, len(pt.Classes))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(pt.Classes[a], pt.Classes[b]) })
	cls := make([]int32, len(idx))
	cnt := make([]int32, len(idx))
	for i, j := range idx {
		cls[i], cnt[i] = pt.Classes[j], pt.Counts[j]
	}
	pt.Classes, pt.Counts = cls, cnt
}

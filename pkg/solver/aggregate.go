package solver

import (
	"math"
	"slices"

	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver/bound"
)

// Aggregation. The guide's LP has a row per class, and its master is dense in rows: its work
// grows with the cube or so of them (36 rows of the AWS web mix converge in about 1M units of
// bound.Work, 91 rows of distinct web pods take 60M, 100 did not converge in 67M). Up to
// maxExactGuideRows classes the LP gets a row each. Past that, classes of like shape become one
// row: each request is rounded up onto a geometric grid (guideGrids, the finest that leaves at
// most maxGuideClasses rows; counts up to gridExact, such as pod slots and GPUs, stay exact on
// all but the coarsest grids), and classes whose rounded requests and type lists agree share a
// row.
//
// A row demands the mean of its pods' requests, not their rounded or largest shape. Rounding
// up would keep every pattern feasible for the pods it covers, but it inflates each resource
// by a different share and so skews the mix of types the LP buys: on 2,000 distinct web pods
// (BenchmarkSolveDistinct) the guide with rounded-up rows cost more than first-fit alone
// (49.14 against 49.06 $/h), with mean rows 4.9% less (46.66). A pattern may then promise a node
// a few more pods than really fit; realize places only what fits (every placement is checked
// against the real requests), and first-fit places the rest, so the plan stays valid.
// GuideStats.RoundingLoss reports what rounding up would have added.
//
// Since a pattern's counts are right for the row's mean pod, the pods realize hands each node
// must be a fair sample of the row: a merged row's members are ordered largest, smallest,
// second largest, second smallest, and so on (interleave), so that each node's share has about
// the mean shape. Handed out largest first, the first nodes got the row's largest pods (full in
// CPU with memory to spare) and the last its smallest: on 2,000 distinct web pods with 26 rows,
// $47.50/h largest first, $46.05 interleaved.

// maxGuideClasses caps the rows of the guide's LP when classes must be merged, on its first
// attempt; maxFineGuideClasses on its second, which the budget allows only where a finer grid
// is cheap enough to try (budget.go).
const (
	maxGuideClasses     = 40
	maxFineGuideClasses = 100
)

// maxExactGuideRows: up to this many classes, the guide's LP gets a row per class.
const maxExactGuideRows = 64

// gridExact: requests up to this stay exact (pod slots, GPUs and other small counts).
const gridExact = 64

// gridSteps are the grids the bound's relaxations try (lowerbound.go), finest first, as steps per
// doubling (0: no rounding).
var gridSteps = []int{0, 64, 32, 16, 8, 4, 2, 1}

// guideGrid is one grid the guide may merge classes on: steps per doubling, and the requests
// that stay exact (up to exact).
type guideGrid struct {
	steps float64
	exact int64
}

// guideGrids are the grids the guide tries, finest first. Past the coarsest grid that keeps
// small counts exact, GPUs and other counts are rounded too (onto powers of two), so that pods
// asking for 1–8 GPUs in every CPU and memory shape do not keep the LP large.
var guideGrids = []guideGrid{{0, gridExact}, {64, gridExact}, {32, gridExact}, {16, gridExact}, {8, gridExact},
	{4, gridExact}, {3, gridExact}, {2, gridExact}, {1.5, gridExact}, {1, gridExact}, {1, 1}, {0.5, 1}, {0.25, 1}}

// roundUp is v rounded up onto the grid of steps per doubling; math.MaxInt64 when the grid
// point above v is past what an int64 holds.
func roundUp(v int64, steps int) int64 { return roundUpAbove(v, float64(steps), gridExact) }

// roundUpAbove is roundUp with requests up to exact left as they are.
func roundUpAbove(v int64, steps float64, exact int64) int64 {
	if steps == 0 || v <= exact {
		return v
	}
	k := math.Ceil(math.Log2(float64(v)) * steps)
	for { // k is off by one when floating-point rounding says so
		r, ok := gridPoint(k, steps, math.Ceil)
		if !ok {
			return math.MaxInt64
		}
		if r >= v {
			return r
		}
		k++
	}
}

// roundDown is v rounded down onto the grid of steps per doubling.
func roundDown(v int64, steps int) int64 {
	if steps == 0 || v <= gridExact {
		return v
	}
	k := math.Floor(math.Log2(float64(v)) * float64(steps))
	for {
		if r, ok := gridPoint(k, float64(steps), math.Floor); ok && r <= v {
			return r
		}
		k--
	}
}

// gridPoint is 2^(k/steps) made whole by round, and whether an int64 holds it (converting a
// float past the int64 range gives no meaningful value).
func gridPoint(k float64, steps float64, round func(float64) float64) (int64, bool) {
	f := round(math.Exp2(k / steps))
	if f >= math.MaxInt64 { // the float64 nearest MaxInt64 is 2^63, already past it
		return 0, false
	}
	return int64(f), true
}

// roundDownShape rounds every request of d down onto the grid.
func roundDownShape(d scheduling.Resources, steps int) scheduling.Resources {
	for i, v := range d {
		d[i] = roundDown(v, steps)
	}
	return d
}

// roundShape rounds every request of d up onto the grid.
func roundShape(d scheduling.Resources, g guideGrid) scheduling.Resources {
	for i, v := range d {
		d[i] = roundUpAbove(v, g.steps, g.exact)
	}
	return d
}

// guideRow is one row of the guide's LP: the classes it stands for, largest first, and the mean
// of their requests.
type guideRow struct {
	demand  scheduling.Resources
	list    int   // the type list of its classes
	types   []int // those of the list the mean shape fits
	members []*class
	count   int
	top     scheduling.Resources // the cell's rounded-up shape (for RoundingLoss)
}

// aggregate merges the classes into at most maxRows rows, by the finest grid that allows it
// (the coarsest if none does), and returns the rows, the grid's steps (0: exact) and finer: the
// rows of each finer grid that would fit in fineRows, finest first. Class i may use the
// types lists[listOf[i]]; a row keeps those its mean shape fits, and a row that fits none is
// left out (first-fit places its pods).
func aggregate(classes []*class, listOf []int, lists [][]int, types []bound.Type, maxRows, fineRows int) (rows []guideRow, steps float64, finer []int) {
	grids := guideGrids
	if len(classes) > maxExactGuideRows {
		grids = grids[1:]
	}
	coarsest := grids[len(grids)-1]
	index := map[aggKey]int{}
	for _, g := range grids {
		// Grids finer than the one chosen are counted up to fineRows.
		limit := max(maxRows, fineRows)
		rows = rows[:0]
		clear(index)
		for i, c := range classes {
			k := aggKey{demand: roundShape(c.requests, g), list: listOf[i]}
			j, ok := index[k]
			if !ok {
				if len(rows) == limit && g != coarsest && g.steps != 0 {
					break
				}
				j = len(rows)
				index[k] = j
				rows = append(rows, guideRow{top: k.demand, list: k.list})
			}
			rows[j].members = append(rows[j].members, c)
			rows[j].count += c.remaining()
		}
		if countMembers(rows) < len(classes) {
			continue
		}
		if len(rows) <= maxRows || g == coarsest || g.steps == 0 {
			steps = g.steps
			break
		}
		finer = append(finer, len(rows))
	}
	out := rows[:0]
	for _, r := range rows {
		if r.count == 0 {
			continue
		}
		var sum [scheduling.NumResources]float64
		for _, c := range r.members {
			for k, v := range c.requests {
				sum[k] += float64(c.remaining()) * float64(v)
			}
		}
		for k := range sum {
			r.demand[k] = int64(math.Ceil(sum[k] / float64(r.count)))
		}
		for _, t := range lists[r.list] {
			if r.demand.Fits(&types[t].Capacity) {
				r.types = append(r.types, t)
			}
		}
		if len(r.types) == 0 {
			continue
		}
		slices.SortStableFunc(r.members, func(a, b *class) int { return compareSize(b, a) })
		if steps > 0 {
			r.members = interleave(r.members)
		}
		out = append(out, r)
	}
	return out, steps, finer
}

func countMembers(rows []guideRow) int {
	n := 0
	for i := range rows {
		n += len(rows[i].members)
	}
	return n
}

type aggKey struct {
	demand scheduling.Resources
	list   int
}

// compareSize orders classes by their largest request relative to the other's, CPU then memory.
func compareSize(a, b *class) int {
	if c := cmpInt64(a.requests[scheduling.CPU], b.requests[scheduling.CPU]); c != 0 {
		return c
	}
	return cmpInt64(a.requests[scheduling.Memory], b.requests[scheduling.Memory])
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// roundingLoss is the share of the rows' demand that rounding every pod up to its cell's shape
// would add, in the resource where it would add most: 0 when nothing is rounded.
func roundingLoss(rows []guideRow) float64 {
	var real, rounded [scheduling.NumResources]float64
	for _, r := range rows {
		for _, c := range r.members {
			n := float64(c.remaining())
			for i := range c.requests {
				real[i] += n * float64(c.requests[i])
				rounded[i] += n * float64(r.top[i])
			}
		}
	}
	loss := 0.0
	for i := range real {
		if rounded[i] > 0 {
			loss = max(loss, 1-real[i]/rounded[i])
		}
	}
	return loss
}

// interleave orders classes sorted largest first as largest, smallest, second largest, second
// smallest, …: every prefix of the order has about the mean shape.
func interleave(m []*class) []*class {
	out := make([]*class, 0, len(m))
	for i, j := 0, len(m)-1; i <= j; i, j = i+1, j-1 {
		out = append(out, m[i])
		if i != j {
			out = append(out, m[j])
		}
	}
	return out
}

package bound

import (
	"cmp"
	"math"
	"slices"
)

// workingSet decides which types a round of column generation prices. Every type's pricing
// problem must be solved only to prove an LP solved; to find columns, the few types that gave
// the best ones before mostly suffice (types often tie: prices linear in size), so a round
// prices the set, and every other type only when the set offers nothing. Such a full pass
// either proves that no column improves the master or brings the types whose columns improve
// it most into the set.
type workingSet struct {
	active  []bool
	types   []int // ascending, so that consecutive types are often alike
	ranked  []scored
	enlarge int
}

func newWorkingSet(nT, enlarge int) *workingSet {
	return &workingSet{active: make([]bool, nT), enlarge: enlarge}
}

// price calls price(t) for the types of the set and, if cg has no candidate column after that,
// for every other type that eligible admits, adding to the set those that improve most (price
// returns how much a type's column beats its cost, 0 when it does not).
func (ws *workingSet) price(cg *colgen, eligible func(t int) bool, price func(t int) float64) {
	for _, t := range ws.types {
		price(t)
	}
	if len(cg.cands) > 0 {
		return
	}
	ws.ranked = ws.ranked[:0]
	for t := range ws.active {
		if !ws.active[t] && eligible(t) {
			if r := price(t); r > 0 {
				ws.ranked = append(ws.ranked, scored{t: t, score: r})
			}
		}
	}
	slices.SortFunc(ws.ranked, byScore)
	for _, c := range ws.ranked[:min(len(ws.ranked), ws.enlarge)] {
		ws.active[c.t] = true
		ws.types = append(ws.types, c.t)
	}
	slices.Sort(ws.types)
}

// scored is a type with a score.
type scored struct {
	t     int
	score float64
}

// byScore orders by score, highest first, then by type.
func byScore(a, b scored) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	return cmp.Compare(a.t, b.t)
}

// ratio is value over threshold, +Inf for a free threshold.
func ratio(value, thr float64) float64 {
	if thr <= 0 {
		return math.Inf(1)
	}
	return value / thr
}

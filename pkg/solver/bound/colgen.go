package bound

import (
	"cmp"
	"math"
	"slices"
)

// colgen is the state column generation shares between the covering and configuration LPs.
type colgen struct {
	in       *instance
	cfg      *config
	ms       *master
	limitRow []int
	kn       *knap
	cert     *certificate
	pi       []float64
	sigma    []float64
	cands    []cand
	rows     []int32
	vals     []float64
	added    int // pattern columns generated
	colRows  []int32
	colVals  []float64
}

// cand is a priced column: a node of type t holding rows/vals[off:end].
type cand struct {
	t        int
	score    float64 // value / (price + σ): how much the column beats its cost
	off, end int
}

// newColgen starts column generation over the LP relaxations lp solves (bounded or not, with
// whatever bases it kept from an earlier LP); seed adds the starting columns (see seed).
func newColgen(in *instance, cfg *config, lp *nodeLP, top int8, seed bool) *colgen {
	ms, limitRow := newMaster(in)
	ms.cfg = cfg
	bounded := lp.bounded
	cg := &colgen{
		in: in, cfg: cfg, ms: ms, limitRow: limitRow,
		kn:    newKnap(in, lp),
		cert:  newCertificate(in, top),
		pi:    make([]float64, in.nK),
		sigma: make([]float64, ms.m-in.nK),
	}
	if seed {
		cg.seed(bounded)
	}
	return cg
}

// seed adds, for each class, a column holding it alone on its cheapest type per pod, and on its
// cheapest unlimited type per pod when that differs; the master starts from the latter (see
// crash). The covering LP also gets its mixes (seedMixes).
func (cg *colgen) seed(bounded bool) {
	in := cg.in
	nR := in.nR
	type pick struct {
		t   int
		per float64
		q   float64
	}
	all := make([]pick, in.nK)
	free := make([]pick, in.nK)
	for k := range all {
		all[k].t, free[k].t = -1, -1
	}
	for t := 0; t < in.nT; t++ {
		for i := in.tOff[t]; i < in.tOff[t+1]; i++ {
			k := in.tCls[i]
			q := float64(in.tU[i])
			if !bounded {
				frac := 0.0
				for j := 0; j < nR; j++ {
					frac = max(frac, float64(in.dem[int(k)*nR+j])*in.inv[t*nR+j])
				}
				q = 1 / frac
			}
			p := pick{t: t, per: in.price[t] / q, q: q}
			if all[k].t < 0 || p.per < all[k].per {
				all[k] = p
			}
			if in.limit[t] == 0 && (free[k].t < 0 || p.per < free[k].per) {
				free[k] = p
			}
		}
	}
	start := make([]int, in.nK) // the column of each class's cheapest unlimited seed, or −1
	for k := range all {
		start[k] = -1
		j := cg.ms.columns()
		cg.addColumn(all[k].t, []int32{int32(k)}, []float64{all[k].q})
		if free[k].t >= 0 && free[k].t != all[k].t {
			j = cg.ms.columns()
			cg.addColumn(free[k].t, []int32{int32(k)}, []float64{free[k].q})
		}
		if free[k].t >= 0 {
			start[k] = j
		}
	}
	cg.ms.crash(start)
	if !bounded {
		cg.seedMixes()
	}
}

// seedMixes adds, for the few types that would hold all their classes' pods most cheaply, a
// column holding those pods in proportion, as much of them as one node takes (covering LP: no
// per-node caps). Where one type serves everything best, the LP is that column, which column
// generation would otherwise assemble from many fillings of a few classes each.
func (cg *colgen) seedMixes() {
	in := cg.in
	nR := in.nR
	type mix struct {
		t    int
		per  float64 // price per share of the demand
		frac float64 // the share one node holds
	}
	var mixes []mix
	need := make([]float64, nR)
	for t := 0; t < in.nT; t++ {
		clear(need)
		for i := in.tOff[t]; i < in.tOff[t+1]; i++ {
			k := int(in.tCls[i])
			for j := 0; j < nR; j++ {
				need[j] += float64(in.count[k]) * float64(in.dem[k*nR+j])
			}
		}
		frac := math.Inf(1)
		for j, v := range need {
			if v > 0 {
				frac = min(frac, float64(in.capa[t*nR+j])/v)
			}
		}
		if frac > 0 && !math.IsInf(frac, 1) {
			mixes = append(mixes, mix{t: t, per: in.price[t] / frac, frac: frac})
		}
	}
	slices.SortStableFunc(mixes, func(a, b mix) int { return cmp.Compare(a.per, b.per) })
	var rows []int32
	var vals []float64
	for _, m := range mixes[:min(len(mixes), 4)] {
		rows, vals = rows[:0], vals[:0]
		for i := in.tOff[m.t]; i < in.tOff[m.t+1]; i++ {
			rows = append(rows, in.tCls[i])
			vals = append(vals, m.frac*float64(in.count[in.tCls[i]]))
		}
		cg.addColumn(m.t, rows, vals)
	}
}

// addColumn adds a node of type t holding vals[i] pods of class rows[i] to the master, with its
// entry in t's limit row if t is limited.
func (cg *colgen) addColumn(t int, rows []int32, vals []float64) {
	if r := cg.limitRow[t]; r >= 0 {
		cg.colRows = append(append(cg.colRows[:0], rows...), int32(r))
		cg.colVals = append(append(cg.colVals[:0], vals...), 1)
		rows, vals = cg.colRows, cg.colVals
	}
	cg.ms.add(t, cg.in.price[t], rows, vals)
}

// threshold is the reduced-cost threshold of type t: a column of t improves the master when its
// value π·a exceeds c_t + σ_t.
func (cg *colgen) threshold(t int) float64 {
	thr := cg.in.price[t]
	if r := cg.limitRow[t]; r >= 0 {
		thr += cg.sigma[r-cg.in.nK]
	}
	return thr
}

// improves reports whether value beats threshold by more than rounding.
func improves(value, thr float64) bool { return value > thr*(1+1e-7)+1e-12 }

// offer records the knapsack's current pattern (LP or integer) as a candidate column.
func (cg *colgen) offer(t int, value, thr float64, rows []int32, vals []float64) {
	off := len(cg.rows)
	cg.rows = append(cg.rows, rows...)
	cg.vals = append(cg.vals, vals...)
	score := math.Inf(1)
	if thr > 0 {
		score = value / thr
	}
	cg.cands = append(cg.cands, cand{t: t, score: score, off: off, end: len(cg.rows)})
}

// offerAt offers a filling of type t if it improves the master at prices pi, sigma.
func (cg *colgen) offerAt(t int, pi, sigma []float64, rows []int32, vals []float64) {
	v := 0.0
	for i, r := range rows {
		v += pi[r] * vals[i]
	}
	thr := cg.in.price[t]
	if r := cg.limitRow[t]; r >= 0 {
		thr += sigma[r-cg.in.nK]
	}
	if improves(v, thr) {
		cg.offer(t, v, thr, rows, vals)
	}
}

// smooth sets the pricing point cg.pi, cg.sigma between the stability center and the master's
// duals (Wentges smoothing), which damps the oscillation of column generation's duals.
func (cg *colgen) smooth(center, centerSigma, out, outSigma []float64) {
	a := cg.cfg.smooth
	for k := range cg.pi {
		cg.pi[k] = a*center[k] + (1-a)*out[k]
	}
	for r := range cg.sigma {
		cg.sigma[r] = a*centerSigma[r] + (1-a)*outSigma[r]
	}
}

// flush adds the best candidates to the master, at most one per type and a bounded number per
// round, and reports whether it added any.
func (cg *colgen) flush() bool {
	if len(cg.cands) == 0 {
		return false
	}
	slices.SortStableFunc(cg.cands, func(a, b cand) int {
		if r := cmp.Compare(b.score, a.score); r != 0 {
			return r
		}
		return cmp.Compare(a.t, b.t)
	})
	limit := max(16, cg.ms.m/2)
	cg.added += min(limit, len(cg.cands))
	cg.ms.prune(2*cg.ms.m + 32)
	for i, c := range cg.cands {
		if i == limit {
			break
		}
		cg.addColumn(c.t, cg.rows[c.off:c.end], cg.vals[c.off:c.end])
	}
	cg.cands, cg.rows, cg.vals = cg.cands[:0], cg.rows[:0], cg.vals[:0]
	return true
}

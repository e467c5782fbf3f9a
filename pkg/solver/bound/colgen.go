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
}

// cand is a priced column: a node of type t holding rows/vals[off:end].
type cand struct {
	t        int
	score    float64 // value / (price + σ): how much the column beats its cost
	off, end int
}

func newColgen(in *instance, cfg *config, bounded bool, top int8) *colgen {
	ms, limitRow := newMaster(in)
	cg := &colgen{
		in: in, cfg: cfg, ms: ms, limitRow: limitRow,
		kn:    newKnap(in, bounded),
		cert:  newCertificate(in, top),
		pi:    make([]float64, in.nK),
		sigma: make([]float64, ms.m-in.nK),
	}
	cg.seed(bounded)
	return cg
}

// seed adds, for each class, a column holding it alone on its cheapest type per pod, and on its
// cheapest unlimited type per pod when that differs.
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
	for k := range all {
		cg.addColumn(all[k].t, []int32{int32(k)}, []float64{all[k].q})
		if free[k].t >= 0 && free[k].t != all[k].t {
			cg.addColumn(free[k].t, []int32{int32(k)}, []float64{free[k].q})
		}
	}
}

func (cg *colgen) addColumn(t int, rows []int32, vals []float64) {
	if r := cg.limitRow[t]; r >= 0 {
		rows = append(rows, int32(r))
		vals = append(vals, 1)
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
		cg.addColumn(c.t, slices.Clone(cg.rows[c.off:c.end]), slices.Clone(cg.vals[c.off:c.end]))
	}
	cg.cands, cg.rows, cg.vals = cg.cands[:0], cg.rows[:0], cg.vals[:0]
	return true
}

// coverResult is the covering bound with what the configuration LP starts from: the covering
// prices and the node fillings of the covering optimum.
type coverResult struct {
	value           float64
	pi              []float64
	cols            []fill
	rounds, columns int
}

// fill is a master column: a node of type t filled with vals[i] pods of class rows[i].
type fill struct {
	t    int
	rows []int32
	vals []float64
}

// fractionalRounds caps the column generation of the fractional LPs. Their pricing is exact,
// so they converge, typically in a few dozen rounds; the cap only guards against the unexpected.
const fractionalRounds = 500

// fractional solves an LP over fractional node fillings by column generation and returns its
// certified bound: unbounded, the covering LP; bounded, its strengthening with the per-node
// caps u_{k,t} and group caps (the configuration LP with pods made divisible), whose prices
// the configuration LP starts from.
func fractional(in *instance, cfg *config, bounded bool, seed []fill) coverResult {
	cg := newColgen(in, cfg, bounded, 1)
	kn, cert := cg.kn, cg.cert
	for _, f := range seed {
		if rows, vals := cg.capped(f); len(rows) > 0 {
			cg.addColumn(f.t, rows, vals)
		}
	}
	var rows []int32
	var vals []float64
	out := make([]float64, in.nK)
	outSigma := make([]float64, len(cg.sigma))
	var center, centerSigma []float64
	// The covering LP never needs an LP-dominated type's columns; the certificate bounds its
	// value by β times its dominator's.
	dom := make([]int, in.nT)
	beta := make([]float64, in.nT)
	for t := range dom {
		dom[t] = -1
	}
	if !bounded {
		dom, beta = in.lpDominated()
	}
	// priceAll prices every type exactly at cg.pi, cg.sigma and offers the fillings that
	// improve the master at out, outSigma.
	priceAll := func() {
		defer func() {
			for t, d := range dom {
				if d >= 0 {
					cert.set(t, beta[t]*cert.vt[d], cert.level[d])
				}
			}
		}()
		for t := 0; t < in.nT; t++ {
			if dom[t] >= 0 {
				continue
			}
			kn.load(t, cg.pi)
			if kn.n == 0 {
				cert.set(t, 0, 1)
				continue
			}
			ub := kn.quick()
			cert.set(t, ub, 0)
			if !improves(ub, cg.threshold(t)) {
				continue
			}
			cert.set(t, kn.relax(), 1)
			rows, vals = rows[:0], vals[:0]
			for i := 0; i < kn.n; i++ {
				if x := kn.x[i]; x > 1e-12 {
					rows = append(rows, kn.cls[i])
					vals = append(vals, x)
				}
			}
			cg.offerAt(t, out, outSigma, rows, vals)
		}
	}
	res := coverResult{pi: cg.pi}
	for ; res.rounds < fractionalRounds; res.rounds++ {
		cg.ms.solve()
		cg.ms.prices(out, outSigma)
		if center == nil {
			center, centerSigma = slices.Clone(out), slices.Clone(outSigma)
		}
		cg.smooth(center, centerSigma, out, outSigma)
		priceAll()
		if len(cg.cands) == 0 && cfg.smooth > 0 {
			copy(cg.pi, out)
			copy(cg.sigma, outSigma)
			priceAll()
		}
		copy(center, cg.pi)
		copy(centerSigma, cg.sigma)
		if !cg.flush() {
			break
		}
	}
	res.columns = cg.added
	cert.start(cg.pi)
	res.value = cert.solve(func(t int) {
		kn.load(t, cg.pi)
		cert.set(t, min(cert.vt[t], kn.relax()), 1)
	})
	ms := cg.ms
	for i, j := range ms.basis {
		if t := ms.kind[j]; t >= 0 && ms.xb[i] > 0 {
			f := fill{t: int(t)}
			for e := ms.cOff[j]; e < ms.cOff[j+1]; e++ {
				if r := ms.cRow[e]; int(r) < in.nK {
					f.rows = append(f.rows, r)
					f.vals = append(f.vals, ms.cVal[e])
				}
			}
			res.cols = append(res.cols, f)
		}
	}
	return res
}

type configResult struct {
	value           float64
	rounds, columns int
	exact           bool
}

// configuration solves the configuration LP by column generation over integer node patterns,
// starting from the bounded fractional LP (bcov), whose optimum it can only raise:
//
//  1. It certifies bcov's prices with whole-pod knapsacks (branch and bound on the types that
//     matter), so the result is never below the bounded LP's (nor, through it, the covering's).
//  2. If some of those knapsacks were too large to solve exactly, it stops there: no certificate
//     could then prove much more, and such knapsacks hold many pods, where whole pods matter
//     little.
//  3. Otherwise it seeds the master with each type's best whole-pod node at bcov's prices and
//     runs column generation from bcov's prices (Wentges smoothing): greedy, LP-rounding and
//     short branch-and-bound pricing while they find columns; when they find none, the
//     certificate, whose branch and bound also finds the columns the heuristics missed.
//
// It stops when the bound is proven optimal, when the master's objective (an upper bound on the
// LP) is within the gap of the best bound known, or at the round cap.
func configuration(in *instance, cfg *config, cov, bcov coverResult) configResult {
	cg := newColgen(in, cfg, true, 2)
	kn, cert := cg.kn, cg.cert
	for _, f := range bcov.cols {
		rows, vals := cg.round(f)
		if len(rows) > 0 {
			cg.addColumn(f.t, rows, vals)
		}
	}
	var res configResult
	var rows []int32
	var vals []float64
	complete := true // every branch and bound of the certificate finished
	refine := func(t int) {
		kn.load(t, cg.pi)
		ub := min(cert.vt[t], kn.relax())
		level := cert.level[t] + 1
		if level >= 2 {
			level = 2
			ub = min(ub, kn.branch(cfg.knapsackNodes))
			complete = complete && !kn.cut
			if thr := cg.threshold(t); improves(kn.bestVal, thr) {
				rows, vals = kn.pattern(rows[:0], vals[:0])
				cg.offer(t, kn.bestVal, thr, rows, vals)
			}
		}
		cert.set(t, ub, level)
	}
	// certifyAt certifies prices pi (thresholds use the current σ), starting from quick bounds.
	certifyAt := func(pi []float64) float64 {
		for t := 0; t < in.nT; t++ {
			kn.load(t, pi)
			if kn.n == 0 {
				cert.set(t, 0, 2)
			} else {
				cert.set(t, kn.cheap(), 0)
			}
		}
		cert.start(pi)
		return cert.solve(refine)
	}
	cg.ms.solve()
	cg.ms.prices(cg.pi, cg.sigma)
	copy(cg.pi, bcov.pi)
	res.value = certifyAt(cg.pi)
	if res.value < cov.value { // the bounded LP stopped short
		copy(cg.pi, cov.pi)
		res.value = max(res.value, certifyAt(cg.pi))
	}
	if !complete {
		// The knapsacks that decide the bound are too large to solve exactly, so no
		// certificate could prove more than the bounded LP's: the rounds would be spent for
		// nothing. (Their pods are many per node, so whole pods matter little there anyway.)
		return res
	}
	// Seed the master with each type's best whole-pod node at the bounded LP's prices: the
	// integer counterparts of the columns that LP's optimum is made of.
	cg.cands, cg.rows, cg.vals = cg.cands[:0], cg.rows[:0], cg.vals[:0]
	for t := 0; t < in.nT; t++ {
		kn.load(t, bcov.pi)
		if kn.n == 0 {
			continue
		}
		if v := kn.bestPattern(cfg.priceNodes); v > 0 {
			rows, vals = kn.pattern(rows[:0], vals[:0])
			cg.addColumn(t, rows, vals)
		}
	}
	best := max(res.value, cov.value)
	out := make([]float64, in.nK)
	outSigma := make([]float64, len(cg.sigma))
	center := slices.Clone(bcov.pi)
	centerSigma := make([]float64, len(cg.sigma))
	// priceAll prices every type at cg.pi/cg.sigma, offering the patterns that improve the
	// master at out/outSigma.
	priceAll := func() {
		for t := 0; t < in.nT; t++ {
			kn.load(t, cg.pi)
			if kn.n == 0 {
				cert.set(t, 0, 2)
				continue
			}
			v, ub, level := kn.price(cg.threshold(t), cfg.priceNodes)
			cert.set(t, ub, level)
			if v <= 0 {
				continue
			}
			rows, vals = kn.pattern(rows[:0], vals[:0])
			cg.offerAt(t, out, outSigma, rows, vals)
		}
	}
	for res.rounds < cfg.maxIterations {
		cg.flush()
		res.rounds++
		cg.ms.solve()
		obj := cg.ms.objective()
		if obj <= best*(1+cfg.gap) {
			res.exact = res.value >= obj-1e-9*math.Abs(obj)-1e-12
			break
		}
		cg.ms.prices(out, outSigma)
		cg.smooth(center, centerSigma, out, outSigma)
		priceAll()
		if len(cg.cands) == 0 && cfg.smooth > 0 {
			copy(cg.pi, out)
			copy(cg.sigma, outSigma)
			priceAll()
		}
		copy(center, cg.pi)
		copy(centerSigma, cg.sigma)
		if len(cg.cands) > 0 {
			continue
		}
		copy(cg.pi, out)
		copy(cg.sigma, outSigma)
		// Pricing found nothing: certify, letting branch and bound look for columns.
		cert.start(cg.pi)
		res.value = max(res.value, cert.solve(refine))
		best = max(best, res.value)
		if res.value >= obj-1e-9*math.Abs(obj)-1e-12 {
			res.exact = true
			break
		}
		if len(cg.cands) == 0 {
			break
		}
	}
	if !res.exact && len(cg.cands) > 0 {
		// The cap stopped the loop before the last prices were certified.
		cert.start(cg.pi)
		res.value = max(res.value, cert.solve(refine))
	}
	res.columns = cg.added
	return res
}

// round turns a covering filling into a whole-pod pattern of the same type: counts rounded
// down, capped by u_{k,t} and the group caps, then rounded up where the pod still fits.
func (cg *colgen) round(f fill) ([]int32, []float64) {
	in, kn := cg.in, cg.kn
	t := f.t
	copy(kn.rem, in.capa[t*in.nR:(t+1)*in.nR])
	copy(kn.grem, in.gcap)
	counts := make([]int64, len(f.rows))
	for pass := 0; pass < 2; pass++ {
		for i, k := range f.rows {
			want := int64(math.Floor(f.vals[i] + 1e-9))
			if pass == 1 {
				want = int64(math.Ceil(f.vals[i] - 1e-9))
			}
			q := want - counts[i]
			u := in.tU[in.slot(t, k)]
			q = min(q, u-counts[i])
			if g := in.group[k]; g >= 0 {
				q = min(q, kn.grem[g])
			}
			for j := 0; j < in.nR && q > 0; j++ {
				if d := in.dem[int(k)*in.nR+j]; d > 0 {
					q = min(q, kn.rem[j]/d)
				}
			}
			if q <= 0 {
				continue
			}
			counts[i] += q
			if g := in.group[k]; g >= 0 {
				kn.grem[g] -= q
			}
			for j := 0; j < in.nR; j++ {
				kn.rem[j] -= q * in.dem[int(k)*in.nR+j]
			}
		}
	}
	var rows []int32
	var vals []float64
	for i, q := range counts {
		if q > 0 {
			rows = append(rows, f.rows[i])
			vals = append(vals, float64(q))
		}
	}
	return rows, vals
}

// capped fits a filling within the per-node caps: each class to u_{k,t}, then each group's
// classes scaled down together to the group cap. Less is still a filling, since demand only
// shrinks.
func (cg *colgen) capped(f fill) ([]int32, []float64) {
	in := cg.in
	rows := slices.Clone(f.rows)
	vals := slices.Clone(f.vals)
	total := make([]float64, len(in.gcap))
	for i, k := range rows {
		vals[i] = min(vals[i], float64(in.tU[in.slot(f.t, k)]))
		if g := in.group[k]; g >= 0 {
			total[g] += vals[i]
		}
	}
	for i, k := range rows {
		if g := in.group[k]; g >= 0 && total[g] > float64(in.gcap[g]) {
			vals[i] *= float64(in.gcap[g]) / total[g]
		}
	}
	return rows, vals
}

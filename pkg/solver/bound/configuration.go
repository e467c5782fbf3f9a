package bound

import (
	"math"
	"slices"
)

// certificateNodes caps the branch-and-bound nodes of one certificate, over all its knapsacks,
// at this many times the cap per knapsack. Large knapsacks whose LP bound is all but their
// optimum (many pods per node) can exhaust any cap without moving the bound; the cap keeps
// them from costing more than the bound can gain.
const certificateNodes = 2

// searchOverhead is what one branch and bound costs the budget at least, in nodes: its setup
// (an LP, a rounding, a sort) costs as much as that many nodes, and knapsacks whose root bound
// already settles them are many where types tie.
const searchOverhead = 64

type configResult struct {
	value           float64
	rounds, columns int
	exact           bool
	nodes           []lpNode // with cfg.patterns: the last master's solution …
	covered         bool     // … when it covers the demand without artificial columns
}

// configuration solves the configuration LP by column generation over integer node patterns,
// starting from the bounded fractional LP (bcov), whose optimum it can only raise:
//
//  1. It certifies bcov's prices with whole-pod knapsacks (branch and bound, within a budget,
//     on the types whose breakpoints decide the bound; bcov's own LP bounds at those prices
//     first), so the result is never below the bounded LP's (nor, through it, the covering's).
//  2. If some of those knapsacks were not solved exactly (too large, out of budget, or their LP
//     bound all but attained), it stops there: no certificate could then prove much more, and
//     such knapsacks hold many pods, where whole pods matter little. With cfg.patterns it goes
//     on all the same, for the master's solution.
//  3. It seeds the master with single-class columns, bcov's optimum rounded to whole pods and
//     the best whole-pod node at bcov's prices of each type that optimum uses, and runs column
//     generation from bcov's prices (Wentges smoothing) over a working set of types (see
//     workingSet): LP-rounding, greedy and short branch-and-bound pricing while they find
//     columns; when they find none, the certificate, whose branch and bound also finds the
//     columns the heuristics missed.
//
// It stops when the bound is proven optimal, when the master's objective (an upper bound on the
// LP) is within the gap of the best bound known, or at the round cap.
func configuration(in *instance, cfg *config, cov, bcov coverResult) configResult {
	// The master is seeded only if column generation runs; the certificate needs none.
	cg := newColgen(in, cfg, bcov.lp, 2, false)
	kn, cert := cg.kn, cg.cert
	var res configResult
	var rows []int32
	var vals []float64
	complete := true // every branch and bound of the certificate finished
	budget := 0      // branch-and-bound nodes left to the certificate being solved
	refine := func(t int) {
		level := min(cert.level[t]+1, 2)
		if level == 2 && budget <= 0 {
			// No branch and bound left: the LP bound stands.
			complete = false
			cert.level[t] = 2
			return
		}
		kn.load(t, cg.pi)
		ub := min(cert.vt[t], kn.relax())
		if level == 2 {
			if kn.roundLP() >= ub*(1-searchTol) {
				// The LP bound is all but attained: no search could lower it by more than
				// it would leave open (see searchTol).
				complete = false
			} else {
				ub = min(ub, kn.branch(min(cfg.knapsackNodes, budget)))
				budget -= max(kn.nodes, searchOverhead)
				complete = complete && !kn.cut
			}
			if thr := cg.threshold(t); improves(kn.bestVal, thr) {
				rows, vals = kn.pattern(rows[:0], vals[:0])
				cg.offer(t, kn.bestVal, thr, rows, vals)
			}
		}
		cert.set(t, ub, level)
	}
	// solve solves the certificate started at cg.pi with a fresh branch-and-bound budget.
	solve := func() float64 {
		budget = certificateNodes * cfg.knapsackNodes
		return cert.solve(refine)
	}
	// certifyAt certifies prices pi (thresholds use the current σ), starting from quick bounds,
	// or from the LP bounds lp computed at pi if it is not nil.
	certifyAt := func(pi []float64, lp *coverResult) float64 {
		for t := 0; t < in.nT; t++ {
			kn.load(t, pi)
			switch {
			case kn.n == 0:
				cert.set(t, 0, 2)
			case lp != nil:
				cert.vt[t], cert.level[t] = lp.vt[t], lp.level[t]
			default:
				cert.set(t, kn.cheap(), 0)
			}
		}
		cert.start(pi)
		return solve()
	}
	copy(cg.pi, bcov.pi)
	res.value = certifyAt(cg.pi, &bcov)
	if res.value < cov.value*(1-relSafety) { // the bounded LP stopped short (not just rounding)
		copy(cg.pi, cov.pi)
		res.value = max(res.value, certifyAt(cg.pi, nil))
	}
	if !complete && !cfg.patterns {
		// The knapsacks that decide the bound are too large to solve exactly, so no
		// certificate could prove more than the bounded LP's: the rounds would be spent for
		// nothing. (Their pods are many per node, so whole pods matter little there anyway.)
		// Patterns need the master all the same.
		return res
	}
	// Seed the master (step 3): the integer counterparts of the bounded LP's optimum.
	cg.cands, cg.rows, cg.vals = cg.cands[:0], cg.rows[:0], cg.vals[:0]
	cg.seed(true)
	for _, f := range bcov.cols {
		if rows, vals := cg.round(f); len(rows) > 0 {
			cg.addColumn(f.t, rows, vals)
		}
	}
	seeded := make([]bool, in.nT)
	for _, f := range bcov.cols {
		t := f.t
		if seeded[t] {
			continue
		}
		seeded[t] = true
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
	// price prices type t at cg.pi/cg.sigma, offering its pattern if it improves the master at
	// out/outSigma, and returns the pattern's value ratio (0 if it does not improve).
	price := func(t int) float64 {
		kn.load(t, cg.pi)
		cfg.spent += int64(kn.n)
		if kn.n == 0 {
			cert.set(t, 0, 2)
			return 0
		}
		thr := cg.threshold(t)
		v, ub, level := kn.price(thr, cfg.priceNodes)
		cert.set(t, ub, level)
		if v <= 0 {
			return 0
		}
		rows, vals = kn.pattern(rows[:0], vals[:0])
		cg.offerAt(t, out, outSigma, rows, vals)
		return ratio(v, thr)
	}
	ws := newWorkingSet(in.nT, max(16, cg.ms.m/2))
	every := func(int) bool { return true }
	// priceAll prices the working set at cg.pi/cg.sigma, and every type when it offers nothing.
	priceAll := func() { ws.price(cg, every, price) }
	// more allows the next round: up to the cap, and, for patterns, up to twice that while the
	// master still needs an artificial column (its columns cannot yet cover the demand within
	// the types' limits).
	more := func() bool {
		return !cfg.over() && (res.rounds < cfg.maxIterations ||
			cfg.patterns && res.rounds < 2*cfg.maxIterations && cg.ms.artificial())
	}
	for more() {
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
		res.value = max(res.value, solve())
		best = max(best, res.value)
		if res.value >= obj-1e-9*math.Abs(obj)-1e-12 {
			res.exact = true
			break
		}
		if len(cg.cands) == 0 {
			break
		}
	}
	if !res.exact && len(cg.cands) > 0 && !cfg.over() {
		// The cap stopped the loop before the last prices were certified. The working set
		// priced only some types at them, so every type starts over from its quick bound.
		res.value = max(res.value, certifyAt(cg.pi, nil))
	}
	res.columns = cg.added
	if cfg.patterns {
		res.nodes, res.covered = cg.solution()
	}
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

package bound

import (
	"math"
	"slices"
)

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

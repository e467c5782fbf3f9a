package bound

import "slices"

// coverResult is the covering bound with what the configuration LP starts from: the covering
// prices and the node fillings of the covering optimum.
type coverResult struct {
	value           float64
	pi              []float64
	cols            []fill
	lp              *nodeLP   // the knapsack LPs, with the bases they ended with
	vt              []float64 // the certificate's bounds on the types' knapsacks at pi …
	level           []int8    // … and how far each was refined
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
//
// Pricing is exact: each type's knapsack LP is solved (nodeLP, warm from the type's last basis
// or from the type priced just before), for a working set of types each round and for every
// type when the set offers nothing (pricing.go). The certificate is left to the end, at the
// final prices, where the last full pass has bounded every type.
func fractional(in *instance, cfg *config, bounded bool, seed []fill, start []float64) coverResult {
	cg := newColgen(in, cfg, newNodeLP(in, bounded), 1, true)
	kn, cert, lp := cg.kn, cg.cert, cg.kn.lp
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
	// The covering LP never needs an LP-dominated type's columns; its certificate bounds such a
	// type's value by β times its dominator's. (The bounded LP's caps are whole pods, so it is
	// not homogeneous in capacity and has no such shortcut.)
	dom := make([]int, in.nT)
	beta := make([]float64, in.nT)
	for t := range dom {
		dom[t] = -1
	}
	if !bounded {
		dom, beta = in.lpDominated()
	}
	// price solves type t's knapsack LP at cg.pi, cg.sigma (from the basis of the type priced
	// just before when that fits) and offers its filling if it improves the master at out,
	// outSigma; it returns the filling's value ratio at cg.pi, or 0 when it does not improve
	// there. It records the LP's bound for the certificate, stamped with the pass.
	last := -1 // the type priced last, at cg.pi
	pass := 0  // counts the calls of priceAll, each at one cg.pi
	stamp := make([]int, in.nT)
	price := func(t int) float64 {
		cfg.spent += int64(in.tOff[t+1] - in.tOff[t])
		lp.solveNear(t, cg.pi, last)
		last = t
		cert.set(t, lp.bound(), 1)
		stamp[t] = pass
		thr := cg.threshold(t)
		if !improves(lp.value, thr) {
			return 0
		}
		rows, vals = rows[:0], vals[:0]
		lo := in.tOff[t]
		for j, v := range lp.x[:lp.n] {
			if v > 1e-12 {
				rows = append(rows, in.tCls[lo+int32(j)])
				vals = append(vals, v)
			}
		}
		cg.offerAt(t, out, outSigma, rows, vals)
		return ratio(lp.value, thr)
	}
	ws := newWorkingSet(in.nT, max(16, cg.ms.m/2))
	undominated := func(t int) bool { return dom[t] < 0 }
	priceAll := func() {
		last = -1
		pass++
		ws.price(cg, undominated, price)
	}
	res := coverResult{pi: cg.pi, lp: lp}
	for ; res.rounds < fractionalRounds && !cfg.over(); res.rounds++ {
		cg.ms.solve()
		cg.ms.prices(out, outSigma)
		if center == nil {
			center, centerSigma = slices.Clone(out), slices.Clone(outSigma)
			if start != nil {
				copy(center, start)
			}
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
	// Certify the final prices. The last pricing solved every type's LP at them (when it
	// found nothing to add), and its bounds stand; any other type (the round cap stopped the
	// loop) starts from its quick bound, and the certificate asks for LP bounds where they
	// matter (a dominated type's from its dominator's).
	for t := 0; t < in.nT; t++ {
		switch d := dom[t]; {
		case stamp[t] == pass:
		case d >= 0 && stamp[d] == pass:
			cert.set(t, beta[t]*cert.vt[d]/(1+roundingSlack), 1)
		default:
			kn.load(t, cg.pi)
			if kn.n == 0 {
				cert.set(t, 0, 1)
			} else {
				cert.set(t, kn.cheap(), 0)
			}
		}
	}
	var refine func(t int)
	refine = func(t int) {
		if d := dom[t]; d >= 0 {
			if cert.level[d] < 1 {
				refine(d)
			}
			cert.set(t, min(cert.vt[t], beta[t]*cert.vt[d]), 1)
			return
		}
		kn.load(t, cg.pi)
		cert.set(t, min(cert.vt[t], kn.relax()), 1)
	}
	cert.start(cg.pi)
	res.value = cert.solve(refine)
	res.vt, res.level = cert.vt, cert.level
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

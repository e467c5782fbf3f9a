package bound

import "slices"

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
func fractional(in *instance, cfg *config, bounded bool, seed []fill, start []float64) coverResult {
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

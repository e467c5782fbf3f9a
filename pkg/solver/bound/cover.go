package bound

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// jointCover bounds a part by its pods' total demand of every resource at once. Whatever nodes a
// packing buys, the room they give its pods adds up to at least the total demand in each
// resource, where a node of type t gives at most U_t: its capacity, capped in each resource at
// what the type's classes could use of one node (each within u_{k,t}). So the LP
//
//	min Σ_t c_t x_t  s.t.  Σ_t U_tr x_t ≥ D_r (r),  x ≥ 0
//
// bounds the cost from below. It is the covering LP (doc.go) with one row per resource instead
// of one per class, so it is weaker where the classes' type lists differ, but its size does not
// grow with the classes, which is what it is for: with thousands of distinct shapes the LPs see
// merged, rounded-down classes (solver.lowerBound), while this sees every pod's exact demand.
//
// The LP (over the unlimited types; a price per resource is all it needs to return) gives
// resource prices y; the certificate then proves α·y·D − Σ_t W_t (α·y·U_t − c_t)⁺ with class prices
// π_k = y·d_k, since no pattern of t is worth more than y·U_t at those prices. Limited types
// (reservations, existing nodes' room) enter there, through W_t; the LP's error only loosens
// the bound. It returns 0 when fewer than two resources are demanded (resourceBound is exact
// there, in whole nodes) or the LP cannot be solved.
func jointCover(in *instance) float64 {
	nR, nT := in.nR, in.nT
	if nR < 2 || nT == 0 {
		return 0
	}
	total := make([]float64, nR)
	for k := 0; k < in.nK; k++ {
		for r := 0; r < nR; r++ {
			total[r] += float64(in.count[k]) * float64(in.dem[k*nR+r])
		}
	}
	usable := make([]float64, nT*nR)
	for t := 0; t < nT; t++ {
		for r := 0; r < nR; r++ {
			var most float64
			for i := in.tOff[t]; i < in.tOff[t+1]; i++ {
				most += float64(in.tU[i]) * float64(in.dem[int(in.tCls[i])*nR+r])
			}
			usable[t*nR+r] = max(0, min(most, float64(in.capa[t*nR+r])))
		}
	}
	y := coverPrices(in, total, usable)
	if y == nil {
		return 0
	}
	pi := make([]float64, in.nK)
	for k := range pi {
		for r := 0; r < nR; r++ {
			pi[k] += y[r] * float64(in.dem[k*nR+r])
		}
	}
	c := newCertificate(in, 1)
	c.start(pi)
	for t := 0; t < nT; t++ {
		v := 0.0
		for r := 0; r < nR; r++ {
			v += y[r] * usable[t*nR+r]
		}
		c.set(t, v, 1)
	}
	_, g := c.maximize()
	if math.IsInf(g, 1) || math.IsNaN(g) {
		// Unbounded would prove the part infeasible; the other bounds say so where it is.
		return 0
	}
	return g
}

// coverPrices solves the joint cover LP over the unlimited types with a positive price and
// returns its resource prices (the duals of its rows), or nil. Rows are scaled to a demand of
// one, so that CPU millicores and memory bytes are alike to the simplex.
func coverPrices(in *instance, total, usable []float64) []float64 {
	nR := in.nR
	var rows []int
	for r := 0; r < nR; r++ {
		if total[r] > 0 {
			rows = append(rows, r)
		}
	}
	var cols []int
	for t := 0; t < in.nT; t++ {
		if in.limit[t] > 0 || in.price[t] <= 0 {
			continue
		}
		for _, r := range rows {
			if usable[t*nR+r] > 0 {
				cols = append(cols, t)
				break
			}
		}
	}
	m, n := len(rows), len(cols)
	if m == 0 || n == 0 {
		return nil
	}
	// min c·x s.t. A x − s = 1, x, s ≥ 0.
	a := mat.NewDense(m, n+m, nil)
	cost := make([]float64, n+m)
	b := make([]float64, m)
	for i, r := range rows {
		b[i] = 1
		for j, t := range cols {
			a.Set(i, j, usable[t*nR+r]/total[r])
		}
		a.Set(i, n+i, -1)
	}
	for j, t := range cols {
		cost[j] = in.price[t]
	}
	_, x, err := lp.Simplex(cost, a, b, 1e-10, nil)
	if err != nil {
		return nil
	}
	// The duals solve Bᵀy = c_B over a basis: the columns in use, then surplus columns of the
	// rows left over, as long as they keep B non-singular.
	basis := make([]int, 0, m)
	for j := range x {
		if x[j] > 1e-12 && len(basis) < m {
			basis = append(basis, j)
		}
	}
	for i := 0; len(basis) < m && i < m; i++ {
		j := n + i
		if !slices.Contains(basis, j) && independent(a, append(basis, j)) {
			basis = append(basis, j)
		}
	}
	if len(basis) < m || !independent(a, basis) {
		return nil
	}
	bt := mat.NewDense(m, m, nil)
	cb := mat.NewVecDense(m, nil)
	for k, j := range basis {
		for i := 0; i < m; i++ {
			bt.Set(k, i, a.At(i, j))
		}
		cb.SetVec(k, cost[j])
	}
	var sol mat.VecDense
	if err := sol.SolveVec(bt, cb); err != nil {
		return nil
	}
	y := make([]float64, nR)
	for i, r := range rows {
		// Back to the unscaled rows; a negative dual is rounding (or a degenerate basis) and
		// counts as zero, which keeps the certificate valid.
		y[r] = max(sol.AtVec(i), 0) / total[r]
	}
	return y
}

// independent reports whether the columns cols of a are linearly independent.
func independent(a *mat.Dense, cols []int) bool {
	m, _ := a.Dims()
	if len(cols) > m {
		return false
	}
	sub := mat.NewDense(m, len(cols), nil)
	for k, j := range cols {
		for i := 0; i < m; i++ {
			sub.Set(i, k, a.At(i, j))
		}
	}
	var svd mat.SVD
	if !svd.Factorize(sub, mat.SVDNone) {
		return false
	}
	v := svd.Values(nil)
	return len(v) == len(cols) && v[len(v)-1] > 1e-9*v[0]
}

package bound

import (
	"encoding/binary"
	"math"
	"slices"
)

// nodeLP solves the LP relaxation of one node's knapsack, for any type of an instance:
//
//	max Σ_e π_e x_e  s.t.  Σ_e (d_er/C_tr) x_e ≤ 1 (resources r),  Σ_{e∈g} x_e ≤ P_g (groups g),
//	                       0 ≤ x_e ≤ u_e (bounded) or x_e ≥ 0 (unbounded),
//
// over the classes e the type may hold. A type's rows are few (the resources its classes demand
// and, bounded, the groups whose caps can bind), so this is a bounded-variable revised primal
// simplex with an explicit inverse of those rows. It keeps every type's last basis: prices
// change between calls but constraints do not, so that basis is still feasible and the simplex
// resumes from it, usually a pivot or two from the optimum. Its answers are only hints: every
// bound computed from them is re-derived from the duals by a formula valid for any
// non-negative duals.
type nodeLP struct {
	in      *instance
	bounded bool

	// Type t's rows are rows[rOff[t]:rOff[t+1]]: a resource r < nR, or nR + g for group g.
	// Its constraint matrix is mat[mOff[t]:], entry by entry (n_t × m_t, row-major).
	rOff  []int32
	rows  []int32
	mOff  []int32
	mat   []float64
	built []bool
	// Type t's last basis: per row, the basic variable (an entry of the type, counted from
	// tOff[t], or n_t + i for the slack of row i) at basis[rOff[t]:], and its m × m inverse at
	// binv[iOff[t]:]; ready[t] once it holds one.
	basis   []int32
	iOff    []int32
	binv    []float64
	ready   []bool
	pivots  []int32 // per type: pivots since its inverse was last computed
	up      []bool  // per entry: non-basic at its upper bound
	sig     []int32 // per type: the first type with the same classes and rows
	saved   []int32
	savedUp []bool

	// The current solve: type t with m rows and n entries.
	t, m, n int
	p       []float64 // objective per entry
	scale   float64   // the largest of p
	u       []float64 // upper bound per entry (+Inf unbounded)
	red     []float64 // reduced cost per entry at the final duals (0 for basic entries)
	optimal bool      // iterate stopped at an optimum, so red is current
	xb      []float64 // value of the basic variable of each row
	cb      []float64 // objective of the basic variable of each row
	y       []float64 // duals per row
	alpha   []float64
	pos     []int32 // basis position of each variable, −1 when non-basic
	work    []float64

	nx []float64 // scratch for bound

	// Results of the last solve: x per entry of the type, the duals per row and the value.
	x     []float64
	dual  []float64
	value float64
}

func newNodeLP(in *instance, bounded bool) *nodeLP {
	lp := &nodeLP{in: in, bounded: bounded, rOff: make([]int32, 1, in.nT+1), iOff: make([]int32, 1, in.nT+1), mOff: make([]int32, 1, in.nT+1)}
	nR := in.nR
	sum := make([]int64, len(in.gcap))
	for t := 0; t < in.nT; t++ {
		lo, hi := int(in.tOff[t]), int(in.tOff[t+1])
		for r := 0; r < nR; r++ {
			for e := lo; e < hi; e++ {
				if in.tE[e*nR+r] > 0 {
					lp.rows = append(lp.rows, int32(r))
					break
				}
			}
		}
		if bounded {
			for g := range sum {
				sum[g] = 0
			}
			for e := lo; e < hi; e++ {
				if g := in.group[in.tCls[e]]; g >= 0 {
					sum[g] += in.tU[e]
				}
			}
			for g, s := range sum {
				if s > in.gcap[g] {
					lp.rows = append(lp.rows, int32(nR+g))
				}
			}
		}
		lp.rOff = append(lp.rOff, int32(len(lp.rows)))
		m := int32(len(lp.rows)) - lp.rOff[t]
		lp.iOff = append(lp.iOff, lp.iOff[t]+m*m)
		lp.mOff = append(lp.mOff, lp.mOff[t]+m*int32(hi-lo))
	}
	lp.mat = make([]float64, lp.mOff[in.nT])
	lp.built = make([]bool, in.nT)
	lp.sig = make([]int32, in.nT)
	first := map[string]int32{}
	var key []byte
	for t := 0; t < in.nT; t++ {
		if t > 0 && lp.same(t-1, t) {
			lp.sig[t] = lp.sig[t-1]
			continue
		}
		key = key[:0]
		for _, r := range lp.rows[lp.rOff[t]:lp.rOff[t+1]] {
			key = binary.AppendVarint(key, int64(r))
		}
		key = append(key, 0xff)
		for _, k := range in.tCls[in.tOff[t]:in.tOff[t+1]] {
			key = binary.AppendVarint(key, int64(k))
		}
		f, ok := first[string(key)]
		if !ok {
			f = int32(t)
			first[string(key)] = f
		}
		lp.sig[t] = f
	}
	lp.basis = make([]int32, len(lp.rows))
	lp.binv = make([]float64, lp.iOff[in.nT])
	lp.ready = make([]bool, in.nT)
	lp.pivots = make([]int32, in.nT)
	lp.up = make([]bool, len(in.tCls))
	return lp
}

// same reports whether types s and t have the same classes and rows.
func (lp *nodeLP) same(s, t int) bool {
	in := lp.in
	return slices.Equal(lp.rows[lp.rOff[s]:lp.rOff[s+1]], lp.rows[lp.rOff[t]:lp.rOff[t+1]]) &&
		slices.Equal(in.tCls[in.tOff[s]:in.tOff[s+1]], in.tCls[in.tOff[t]:in.tOff[t+1]])
}

// build fills type t's constraint matrix, on its first solve.
func (lp *nodeLP) build(t int) {
	in := lp.in
	nR := in.nR
	rows := lp.rows[lp.rOff[t]:lp.rOff[t+1]]
	mat := lp.mat[lp.mOff[t]:lp.mOff[t+1]]
	for j, e := 0, int(in.tOff[t]); e < int(in.tOff[t+1]); j, e = j+1, e+1 {
		for i, r := range rows {
			switch {
			case int(r) < nR:
				mat[j*len(rows)+i] = in.tE[e*nR+int(r)]
			case in.group[in.tCls[e]] == int(r)-nR:
				mat[j*len(rows)+i] = 1
			}
		}
	}
	lp.built[t] = true
}

// a is the coefficient of entry j (local) in row i of the current type.
func (lp *nodeLP) a(i, j int) float64 { return lp.mat[int(lp.mOff[lp.t])+j*lp.m+i] }

// rhs is the right-hand side of row i of the current type.
func (lp *nodeLP) rhs(i int) float64 {
	r := int(lp.rows[int(lp.rOff[lp.t])+i])
	if r < lp.in.nR {
		return 1
	}
	return float64(lp.in.gcap[r-lp.in.nR])
}

// upper is the upper bound of variable v (entry or slack) of the current type.
func (lp *nodeLP) upper(v int) float64 {
	if v >= lp.n {
		return math.Inf(1)
	}
	return lp.u[v]
}

// column writes B⁻¹ times the column of variable v into alpha.
func (lp *nodeLP) column(v int, binv []float64) {
	m := lp.m
	if v >= lp.n {
		r := v - lp.n
		for i := 0; i < m; i++ {
			lp.alpha[i] = binv[i*m+r]
		}
		return
	}
	col := lp.mat[int(lp.mOff[lp.t])+v*m:][:m]
	for i := 0; i < m; i++ {
		s := 0.0
		for r, c := range col {
			s += binv[i*m+r] * c
		}
		lp.alpha[i] = s
	}
}

// solve solves type t's LP at class prices pi (negative prices count as 0). The results are
// in x, dual and value.
func (lp *nodeLP) solve(t int, pi []float64) { lp.solveNear(t, pi, -1) }

// solveNear is solve, starting from the basis of type near (when ≥ 0) if near has the same
// classes and rows and its basis is feasible for t: a type just solved at the same prices is
// often a better start than t's own basis from older prices.
func (lp *nodeLP) solveNear(t int, pi []float64, near int) {
	in := lp.in
	lp.t = t
	lo := int(in.tOff[t])
	lp.n = int(in.tOff[t+1]) - lo
	lp.m = int(lp.rOff[t+1] - lp.rOff[t])
	m, n := lp.m, lp.n
	lp.p = grow(lp.p, n)
	lp.u = grow(lp.u, n)
	lp.red = grow(lp.red, n)
	lp.scale = 0
	for j := range lp.p {
		v := pi[in.tCls[lo+j]]
		if !(v > 0) {
			v = 0
		}
		if v > lp.scale {
			lp.scale = v
		}
		lp.p[j] = v
		lp.u[j] = math.Inf(1)
		if lp.bounded {
			lp.u[j] = float64(in.tU[lo+j])
		}
	}
	lp.xb = grow(lp.xb, m)
	lp.cb = grow(lp.cb, m)
	lp.alpha = grow(lp.alpha, m)
	lp.work = grow(lp.work, m*m)
	lp.y = grow(lp.y, m)
	lp.pos = growInt32(lp.pos, n+m)
	if !lp.built[t] {
		lp.build(t)
	}
	basis := lp.basis[lp.rOff[t]:lp.rOff[t+1]]
	binv := lp.binv[lp.iOff[t]:lp.iOff[t+1]]
	if !lp.borrow(near, basis, binv) && (!lp.ready[t] || !lp.fresh(basis, binv) || !lp.primal(basis, binv)) {
		lp.slackBasis(basis, binv)
		lp.primal(basis, binv)
	}
	lp.ready[t] = true
	lp.iterate(basis, binv)
	lp.results(binv)
}

// borrow tries type near's basis for the current type: it keeps it if near has the same
// signature and its basis is regular and feasible here, and otherwise restores the type's own.
func (lp *nodeLP) borrow(near int, basis []int32, binv []float64) bool {
	t := lp.t
	if near < 0 || near == t || !lp.ready[near] || lp.sig[near] != lp.sig[t] {
		return false
	}
	lo, nlo := int(lp.in.tOff[t]), int(lp.in.tOff[near])
	lp.saved = append(lp.saved[:0], basis...)
	lp.savedUp = append(lp.savedUp[:0], lp.up[lo:lo+lp.n]...)
	copy(basis, lp.basis[lp.rOff[near]:lp.rOff[near+1]])
	copy(lp.up[lo:lo+lp.n], lp.up[nlo:nlo+lp.n])
	if lp.refactor(basis, binv) && lp.primal(basis, binv) {
		lp.pivots[t] = 0
		return true
	}
	copy(basis, lp.saved)
	copy(lp.up[lo:lo+lp.n], lp.savedUp)
	lp.pivots[t] = refactorPivots // binv now inverts near's basis
	return false
}

// fresh makes sure the kept inverse is accurate: it is refactored after refactorPivots pivots,
// and reports whether the basis is still regular.
func (lp *nodeLP) fresh(basis []int32, binv []float64) bool {
	if lp.pivots[lp.t] < refactorPivots {
		return true
	}
	lp.pivots[lp.t] = 0
	return lp.refactor(basis, binv)
}

// refactorPivots is how many product-form updates a kept inverse takes before it is
// recomputed from its basis.
const refactorPivots = 32

// slackBasis starts from the slack basis with every entry at 0.
func (lp *nodeLP) slackBasis(basis []int32, binv []float64) {
	m := lp.m
	lp.pivots[lp.t] = 0
	lo := int(lp.in.tOff[lp.t])
	for j := 0; j < lp.n; j++ {
		lp.up[lo+j] = false
	}
	for i := range binv {
		binv[i] = 0
	}
	for i := 0; i < m; i++ {
		basis[i] = int32(lp.n + i)
		binv[i*m+i] = 1
	}
}

package bound

import "math"

// fracKnap solves the LP relaxation of one node's knapsack with a dense bounded-variable primal
// simplex:
//
//	max Σ_j p_j x_j   s.t.   Σ_j A_ij x_j ≤ b_i (b ≥ 0),   0 ≤ x_j ≤ u_j (u_j may be +Inf).
//
// The problems are tiny (a row per resource and per group, a column per class), so a dense
// tableau is fastest. Its answers are only used as hints: every bound computed from them is
// re-derived from the duals by a formula that is valid for any non-negative duals.
type fracKnap struct {
	m, n  int
	w     int       // tableau width n + m (slacks last)
	tab   []float64 // m × w, B⁻¹[A I]
	val   []float64 // value of the basic variable of each row
	red   []float64 // reduced costs p_j − y·A_j
	up    []float64 // upper bounds
	p     []float64
	basis []int  // variable of each row
	where []int  // row of each variable, −1 when non-basic
	atUp  []bool // non-basic at its upper bound
}

// reset prepares an m × n problem; the caller fills set, b and the objective with setRow/setCol.
func (f *fracKnap) reset(m, n int) {
	f.m, f.n, f.w = m, n, n+m
	f.tab = grow(f.tab, m*f.w)
	f.val = grow(f.val, m)
	f.red = grow(f.red, f.w)
	f.up = grow(f.up, f.w)
	f.p = grow(f.p, f.w)
	f.basis = growInt(f.basis, m)
	f.where = growInt(f.where, f.w)
	f.atUp = growBool(f.atUp, f.w)
	for i := range f.tab {
		f.tab[i] = 0
	}
	for j := 0; j < f.w; j++ {
		f.up[j], f.p[j], f.where[j], f.atUp[j] = math.Inf(1), 0, -1, false
	}
	for i := 0; i < m; i++ {
		f.tab[i*f.w+n+i] = 1
		f.basis[i] = n + i
		f.where[n+i] = i
	}
}

// set stores A_ij.
func (f *fracKnap) set(i, j int, a float64) { f.tab[i*f.w+j] = a }

// column sets the objective and upper bound of structural variable j.
func (f *fracKnap) column(j int, p, u float64) { f.p[j], f.up[j] = p, u }

// rhs sets b_i ≥ 0.
func (f *fracKnap) rhs(i int, b float64) { f.val[i] = b }

// solve runs the simplex from the slack basis. It returns false if the LP is unbounded or the
// pivot cap was hit; the state is still a basis, so its duals remain usable as hints.
func (f *fracKnap) solve() bool {
	copy(f.red, f.p[:f.w])
	scale := 0.0
	for j := 0; j < f.n; j++ {
		scale = max(scale, math.Abs(f.p[j]))
	}
	tol := 1e-11 * max(scale, 1e-300)
	const pivTol = 1e-10
	degenerate := 0
	limit := 8*(f.n+f.m) + 64
	for it := 0; it < limit; it++ {
		bland := degenerate > 12
		q, best := -1, 0.0
		for j := 0; j < f.w; j++ {
			if f.where[j] >= 0 {
				continue
			}
			d := f.red[j]
			if f.atUp[j] {
				d = -d
			}
			if d > tol && (d > best || q < 0) {
				q, best = j, d
				if bland {
					break
				}
			}
		}
		if q < 0 {
			return true
		}
		dir := 1.0
		if f.atUp[q] {
			dir = -1
		}
		theta, leave, leaveUp := f.up[q], -1, false
		for i := 0; i < f.m; i++ {
			a := dir * f.tab[i*f.w+q]
			var lim float64
			var toUp bool
			switch {
			case a > pivTol:
				lim = f.val[i] / a
			case a < -pivTol && !math.IsInf(f.up[f.basis[i]], 1):
				lim, toUp = (f.up[f.basis[i]]-f.val[i])/-a, true
			default:
				continue
			}
			lim = max(lim, 0)
			if lim < theta || (lim == theta && leave >= 0 && f.basis[i] < f.basis[leave]) {
				theta, leave, leaveUp = lim, i, toUp
			}
		}
		if math.IsInf(theta, 1) {
			return false
		}
		if theta <= 1e-13 {
			degenerate++
		} else {
			degenerate = 0
		}
		for i := 0; i < f.m; i++ {
			f.val[i] -= dir * theta * f.tab[i*f.w+q]
		}
		if leave < 0 { // the entering variable reaches its other bound
			f.atUp[q] = !f.atUp[q]
			continue
		}
		enter := theta
		if f.atUp[q] {
			enter = f.up[q] - theta
		}
		out := f.basis[leave]
		f.atUp[out] = leaveUp
		f.where[out] = -1
		f.atUp[q] = false
		f.basis[leave], f.where[q] = q, leave
		f.val[leave] = enter
		f.pivot(leave, q)
	}
	return false
}

func (f *fracKnap) pivot(r, q int) {
	row := f.tab[r*f.w : (r+1)*f.w]
	inv := 1 / row[q]
	for j := range row {
		row[j] *= inv
	}
	row[q] = 1
	for i := 0; i < f.m; i++ {
		if i == r {
			continue
		}
		ri := f.tab[i*f.w : (i+1)*f.w]
		a := ri[q]
		if a == 0 {
			continue
		}
		for j := range ri {
			ri[j] -= a * row[j]
		}
		ri[q] = 0
	}
	a := f.red[q]
	for j := range f.red[:f.w] {
		f.red[j] -= a * row[j]
	}
	f.red[q] = 0
}

// dual writes the simplex multipliers, clipped at zero, into y (len m).
func (f *fracKnap) dual(y []float64) {
	for i := 0; i < f.m; i++ {
		y[i] = max(-f.red[f.n+i], 0)
	}
}

// primal writes the values of the structural variables into x (len n).
func (f *fracKnap) primal(x []float64) {
	for j := 0; j < f.n; j++ {
		switch {
		case f.where[j] >= 0:
			x[j] = max(f.val[f.where[j]], 0)
		case f.atUp[j]:
			x[j] = f.up[j]
		default:
			x[j] = 0
		}
	}
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n, n+n/2)
	}
	return s[:n]
}

func growInt(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n, n+n/2)
	}
	return s[:n]
}

func growBool(s []bool, n int) []bool {
	if cap(s) < n {
		return make([]bool, n, n+n/2)
	}
	return s[:n]
}

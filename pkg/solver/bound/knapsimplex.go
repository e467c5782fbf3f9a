package bound

import "math"

// The linear algebra of nodeLP (knaplp.go): the inverse of a type's basis, the bounded primal
// simplex on its rows, its results, and the bound its duals prove.

// refactor recomputes the inverse of the kept basis by Gauss–Jordan elimination with partial
// pivoting, and reports whether the basis is still regular.
func (lp *nodeLP) refactor(basis []int32, binv []float64) bool {
	m := lp.m
	a := lp.work
	for i := range a {
		a[i] = 0
	}
	for i := range binv {
		binv[i] = 0
	}
	for k, v := range basis {
		if int(v) >= lp.n {
			a[(int(v)-lp.n)*m+k] = 1
			continue
		}
		for r := 0; r < m; r++ {
			a[r*m+k] = lp.a(r, int(v))
		}
	}
	for i := 0; i < m; i++ {
		binv[i*m+i] = 1
	}
	for c := 0; c < m; c++ {
		p, best := -1, 1e-12
		for r := c; r < m; r++ {
			if v := math.Abs(a[r*m+c]); v > best {
				p, best = r, v
			}
		}
		if p < 0 {
			return false
		}
		if p != c {
			swapRows(a, m, p, c)
			swapRows(binv, m, p, c)
		}
		f := 1 / a[c*m+c]
		for k := 0; k < m; k++ {
			a[c*m+k] *= f
			binv[c*m+k] *= f
		}
		for r := 0; r < m; r++ {
			if g := a[r*m+c]; r != c && g != 0 {
				for k := 0; k < m; k++ {
					a[r*m+k] -= g * a[c*m+k]
					binv[r*m+k] -= g * binv[c*m+k]
				}
			}
		}
	}
	return true
}

// primal computes the basic values (the non-basic entries at their bounds) and the positions of
// the variables, and reports whether the basis is primal feasible (up to rounding, which it
// clears).
func (lp *nodeLP) primal(basis []int32, binv []float64) bool {
	m, n := lp.m, lp.n
	lo := int(lp.in.tOff[lp.t])
	for v := range lp.pos[:n+m] {
		lp.pos[v] = -1
	}
	resid := lp.alpha
	for r := 0; r < m; r++ {
		resid[r] = lp.rhs(r)
	}
	for j := 0; j < n; j++ {
		if !lp.up[lo+j] {
			continue
		}
		u := lp.upper(j)
		for r := 0; r < m; r++ {
			resid[r] -= lp.a(r, j) * u
		}
	}
	ok := true
	for i, v := range basis {
		s := 0.0
		for r := 0; r < m; r++ {
			s += binv[i*m+r] * resid[r]
		}
		lp.pos[v] = int32(i)
		u := lp.upper(int(v))
		tol := 1e-9 * (1 + math.Abs(s))
		if s < -tol || s > u+tol {
			ok = false
		}
		lp.xb[i] = min(max(s, 0), u)
		lp.cb[i] = 0
		if int(v) < n {
			lp.cb[i] = lp.p[v]
			if lp.up[lo+int(v)] {
				ok = false
			}
		}
	}
	return ok
}

// duals computes y = c_B B⁻¹, by row.
func (lp *nodeLP) duals(binv []float64) {
	m := lp.m
	for c := 0; c < m; c++ {
		lp.y[c] = 0
	}
	for i := 0; i < m; i++ {
		if cb := lp.cb[i]; cb != 0 {
			for c, v := range binv[i*m : (i+1)*m] {
				lp.y[c] += cb * v
			}
		}
	}
}

// iterate runs the bounded primal simplex from the current basis until no variable prices out
// or the pivot cap is reached; the basis stays valid either way.
func (lp *nodeLP) iterate(basis []int32, binv []float64) {
	m, n := lp.m, lp.n
	lo := int(lp.in.tOff[lp.t])
	tol := 1e-11 * max(lp.scale, 1e-300)
	const pivTol = 1e-10
	degenerate := 0
	limit := 8*(n+m) + 64
	mat := lp.mat[lp.mOff[lp.t]:lp.mOff[lp.t+1]]
	lp.optimal = false
	pos, p, red, up := lp.pos[:n], lp.p[:n], lp.red[:n], lp.up[lo:lo+n]
	priced := false // red holds the reduced costs at the current basis (a flip keeps them)
	for it := 0; it < limit; it++ {
		y := lp.y[:m]
		if !priced {
			lp.duals(binv)
			for j := range pos {
				if pos[j] >= 0 {
					red[j] = 0
					continue
				}
				d := p[j]
				for i, a := range mat[j*m : (j+1)*m] {
					d -= y[i] * a
				}
				red[j] = d
			}
			priced = true
		}
		bland := degenerate > 12
		q, best, dir := -1, 0.0, 1.0
		for j := range pos {
			if pos[j] >= 0 {
				continue
			}
			d, s := red[j], 1.0
			if up[j] {
				d, s = -d, -1
			}
			if d > tol && d > best {
				q, best, dir = j, d, s
				if bland {
					break
				}
			}
		}
		for i := 0; i < m && !(bland && q >= 0); i++ {
			if lp.pos[n+i] < 0 && -y[i] > tol && -y[i] > best {
				q, best, dir = n+i, -y[i], 1
			}
		}
		if q < 0 {
			lp.optimal = true
			return
		}
		lp.column(q, binv)
		theta, leave, toUp := lp.upper(q), -1, false
		for i := 0; i < m; i++ {
			a := dir * lp.alpha[i]
			var lim float64
			var atUp bool
			switch u := lp.upper(int(basis[i])); {
			case a > pivTol:
				lim = lp.xb[i] / a
			case a < -pivTol && !math.IsInf(u, 1):
				lim, atUp = (u-lp.xb[i])/-a, true
			default:
				continue
			}
			lim = max(lim, 0)
			if lim < theta || (lim == theta && leave >= 0 && basis[i] < basis[leave]) {
				theta, leave, toUp = lim, i, atUp
			}
		}
		if math.IsInf(theta, 1) {
			return // unbounded: impossible, every entry uses a resource row
		}
		if theta <= 1e-13 {
			degenerate++
		} else {
			degenerate = 0
		}
		for i := 0; i < m; i++ {
			lp.xb[i] = max(lp.xb[i]-dir*theta*lp.alpha[i], 0)
		}
		if leave < 0 { // the entering variable reaches its other bound
			lp.up[lo+q] = !lp.up[lo+q]
			continue
		}
		enter := theta
		if dir < 0 {
			enter = lp.upper(q) - theta
		}
		out := int(basis[leave])
		lp.pos[out] = -1
		if out < n {
			lp.up[lo+out] = toUp
		}
		if q < n {
			lp.up[lo+q] = false
			lp.cb[leave] = lp.p[q]
		} else {
			lp.cb[leave] = 0
		}
		basis[leave], lp.pos[q] = int32(q), int32(leave)
		lp.xb[leave] = enter
		lp.pivot(leave, binv)
		lp.pivots[lp.t]++
		priced = false
	}
}

// pivot updates the inverse for the column in alpha entering at row r.
func (lp *nodeLP) pivot(r int, binv []float64) {
	m := lp.m
	row := binv[r*m : (r+1)*m]
	inv := 1 / lp.alpha[r]
	for c := range row {
		row[c] *= inv
	}
	for i := 0; i < m; i++ {
		if f := lp.alpha[i]; i != r && f != 0 {
			ri := binv[i*m : (i+1)*m]
			for c := range ri {
				ri[c] -= f * row[c]
			}
		}
	}
}

// results stores the primal values per entry, the duals per row and the value.
func (lp *nodeLP) results(binv []float64) {
	m, n := lp.m, lp.n
	lo := int(lp.in.tOff[lp.t])
	lp.x = grow(lp.x, n)
	lp.dual = grow(lp.dual, m)
	lp.value = 0
	for j := 0; j < n; j++ {
		switch {
		case lp.pos[j] >= 0:
			lp.x[j] = lp.xb[lp.pos[j]]
		case lp.up[lo+j]:
			lp.x[j] = lp.u[j]
		default:
			lp.x[j] = 0
		}
		lp.value += lp.p[j] * lp.x[j]
	}
	lp.duals(binv)
	for i := 0; i < m; i++ {
		lp.dual[i] = max(lp.y[i], 0)
	}
}

// bound is the upper bound on the knapsack's value that the duals of the last solve prove, as
// knap.certify computes it (see there): valid for any non-negative duals, and the LP's value
// (up to rounding) when they are optimal.
func (lp *nodeLP) bound() float64 {
	m, n := lp.m, lp.n
	mat := lp.mat[lp.mOff[lp.t]:lp.mOff[lp.t+1]]
	base := 0.0
	current := lp.optimal // red holds p − y·A for the clipped duals
	for i := 0; i < m; i++ {
		base += lp.dual[i] * lp.rhs(i)
		current = current && lp.y[i] >= 0
	}
	if lp.bounded && current {
		mag := base
		for j := 0; j < n; j++ {
			if d := lp.red[j]; d > 0 {
				base += lp.u[j] * d
			}
			mag += lp.u[j] * lp.p[j]
		}
		return base + roundingSlack*mag
	}
	if !lp.bounded {
		s, raised := 1.0, base
		lp.nx = grow(lp.nx, m)
		z := lp.nx
		for i := range z {
			z[i] = 0
		}
		for j := 0; j < n; j++ {
			if lp.p[j] <= 0 {
				continue
			}
			col := mat[j*m : (j+1)*m]
			w, top := 0.0, 0
			for i, a := range col {
				w += lp.dual[i] * a
				if a > col[top] {
					top = i
				}
			}
			if w >= lp.p[j] {
				continue
			}
			s = max(s, lp.p[j]/w) // +Inf when w = 0
			z[top] = max(z[top], (lp.p[j]-w)/col[top])
		}
		for _, v := range z {
			raised += v
		}
		if math.IsInf(s, 1) {
			return raised
		}
		return min(s*base, raised)
	}
	mag := base
	for j := 0; j < n; j++ {
		if lp.p[j] <= 0 {
			continue
		}
		w := lp.p[j]
		for i, a := range mat[j*m : (j+1)*m] {
			w -= lp.dual[i] * a
		}
		u := lp.upper(j)
		base += u * max(w, 0)
		mag += u * lp.p[j]
	}
	return base + roundingSlack*mag
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

func growInt32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n, n+n/2)
	}
	return s[:n]
}

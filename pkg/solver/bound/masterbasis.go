package bound

import (
	"cmp"
	"math"
	"slices"
)

// The basis of the master (master.go): its starting bases, the repairs that keep it free of
// artificial columns, refactorization, and pruning of columns.

// driveOut replaces an artificial column that is basic at zero by its class's surplus column
// (a degenerate pivot: no value changes), and reports whether it did. Left in, it would set
// its class's dual to its huge cost; those duals are valid for certificates but need a large
// allowance for rounding, which loosens them. The simplex then resumes from the new basis.
func (ms *master) driveOut() bool {
	m := ms.m
	for i, j := range ms.basis {
		if j < ms.nK || j >= 2*ms.nK || ms.xb[i] > 1e-9 {
			continue
		}
		k := j - ms.nK // the artificial of class k; its surplus is column k
		if ms.pos[k] >= 0 {
			continue
		}
		for r := 0; r < m; r++ {
			ms.d[r] = -ms.binv[r*m+k]
		}
		if math.Abs(ms.d[i]) < 1e-9 {
			continue
		}
		ms.pivot(i, k, 0)
		return true
	}
	return false
}

// raiseBig makes the artificial columns dearer when an optimum still uses one, and reports
// whether it did. Their cost must exceed what covering one more pod can be worth, which in an
// LP can be far more than a node's price (a pod that takes a free node's whole capacity is worth
// everything it displaces); a cost too low would let the master stop short of the LP's optimum.
func (ms *master) raiseBig() bool {
	used := false
	for i, j := range ms.basis {
		if j >= ms.nK && j < 2*ms.nK && ms.xb[i] > 1e-9 {
			used = true
		}
	}
	if !used || ms.big >= ms.bigMax {
		return false
	}
	ms.big *= 100
	for k := 0; k < ms.nK; k++ {
		ms.cost[ms.nK+k] = ms.big
	}
	return true
}

// artificial reports whether the current solution uses an artificial column.
func (ms *master) artificial() bool {
	for i, j := range ms.basis {
		if j >= ms.nK && j < 2*ms.nK && ms.xb[i] > 1e-9 {
			return true
		}
	}
	return false
}

// initialColumn is the basic column of row i in the starting basis.
func (ms *master) initialColumn(i int) int {
	if i < ms.nK {
		return ms.nK + i
	}
	return 2*ms.nK + (i - ms.nK)
}

func (ms *master) resetBasis() {
	for j := range ms.pos {
		ms.pos[j] = -1
	}
	for i := range ms.binv {
		ms.binv[i] = 0
	}
	for i := 0; i < ms.m; i++ {
		j := ms.initialColumn(i)
		ms.basis[i] = j
		ms.pos[j] = i
		ms.binv[i*ms.m+i] = 1
		ms.xb[i] = ms.b[i]
	}
	ms.since = 0
}

// crash starts the simplex from a basis of single-class columns instead of the artificial ones:
// row k's basic column is cols[k] (a column holding class k alone, on an unlimited type), where
// cols[k] ≥ 0. That basis is feasible and far closer to an optimum than the artificial one.
func (ms *master) crash(cols []int) {
	m := ms.m
	for k, j := range cols {
		if j < 0 {
			continue
		}
		a := ms.cVal[ms.cOff[j]]
		old := ms.basis[k]
		ms.pos[old] = -1
		ms.basis[k], ms.pos[j] = j, k
		ms.binv[k*m+k] = 1 / a
		ms.xb[k] = ms.b[k] / a
	}
}

// refactor recomputes B⁻¹ and x_B from scratch by Gauss–Jordan elimination with partial
// pivoting; a singular or infeasible basis is replaced by the starting one.
func (ms *master) refactor() {
	m := ms.m
	ms.work = grow(ms.work, m*m)
	a := ms.work
	for i := range a {
		a[i] = 0
	}
	for i, j := range ms.basis {
		for e := ms.cOff[j]; e < ms.cOff[j+1]; e++ {
			a[int(ms.cRow[e])*m+i] = ms.cVal[e]
		}
	}
	inv := ms.binv
	for i := range inv {
		inv[i] = 0
	}
	for i := 0; i < m; i++ {
		inv[i*m+i] = 1
	}
	for c := 0; c < m; c++ {
		p, best := -1, 1e-11
		for r := c; r < m; r++ {
			if v := math.Abs(a[r*m+c]); v > best {
				p, best = r, v
			}
		}
		if p < 0 {
			ms.resetBasis()
			return
		}
		if p != c {
			swapRows(a, m, p, c)
			swapRows(inv, m, p, c)
		}
		f := 1 / a[c*m+c]
		for k := 0; k < m; k++ {
			a[c*m+k] *= f
			inv[c*m+k] *= f
		}
		for r := 0; r < m; r++ {
			if r == c {
				continue
			}
			g := a[r*m+c]
			if g == 0 {
				continue
			}
			for k := 0; k < m; k++ {
				a[r*m+k] -= g * a[c*m+k]
				inv[r*m+k] -= g * inv[c*m+k]
			}
		}
	}
	// Rows of inv now follow the basis order (column i of B ↔ row i of B⁻¹).
	scale := 0.0
	for i := 0; i < m; i++ {
		s := 0.0
		for c := 0; c < m; c++ {
			s += inv[i*m+c] * ms.b[c]
		}
		ms.xb[i] = s
		scale = max(scale, math.Abs(ms.b[i]))
	}
	for i := range ms.xb {
		if ms.xb[i] < -1e-7*(1+scale) {
			ms.resetBasis()
			return
		}
		ms.xb[i] = max(ms.xb[i], 0)
	}
	ms.since = 0
}

// prune drops non-basic pattern columns, those with the largest reduced costs first, down to
// keep once there are half as many again; the columns that start the basis are never dropped. Pricing the master costs
// time in proportion to its columns, and old columns far from pricing out rarely come back.
func (ms *master) prune(keep int) {
	fixed := 2*ms.nK + (ms.m - ms.nK)
	var cands []int
	for j := fixed; j < len(ms.cost); j++ {
		if ms.pos[j] < 0 {
			cands = append(cands, j)
		}
	}
	if len(cands) <= keep+keep/2 {
		return
	}
	ms.duals()
	ms.work = grow(ms.work, len(ms.cost))
	rc := ms.work
	for _, j := range cands {
		rc[j] = ms.cost[j]
		for e := ms.cOff[j]; e < ms.cOff[j+1]; e++ {
			rc[j] -= ms.y[ms.cRow[e]] * ms.cVal[e]
		}
	}
	slices.SortStableFunc(cands, func(a, b int) int { return cmp.Compare(rc[a], rc[b]) })
	drop := make([]bool, len(ms.cost))
	for _, j := range cands[keep:] {
		drop[j] = true
	}
	// Compact the columns in place, renumbering the basis.
	n, e := 0, 0
	off := ms.cOff[0]
	for j := range ms.cost {
		lo, hi := off, ms.cOff[j+1]
		off = hi
		if drop[j] {
			continue
		}
		ms.cost[n], ms.kind[n], ms.pos[n] = ms.cost[j], ms.kind[j], ms.pos[j]
		if p := ms.pos[n]; p >= 0 {
			ms.basis[p] = n
		}
		for x := lo; x < hi; x++ {
			ms.cRow[e], ms.cVal[e] = ms.cRow[x], ms.cVal[x]
			e++
		}
		n++
		ms.cOff[n] = int32(e)
	}
	ms.cost, ms.kind, ms.pos = ms.cost[:n], ms.kind[:n], ms.pos[:n]
	ms.cRow, ms.cVal, ms.cOff = ms.cRow[:e], ms.cVal[:e], ms.cOff[:n+1]
}

func swapRows(a []float64, m, i, j int) {
	ri, rj := a[i*m:(i+1)*m], a[j*m:(j+1)*m]
	for k := range ri {
		ri[k], rj[k] = rj[k], ri[k]
	}
}

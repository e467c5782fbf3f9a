package bound

import "math"

// master is the restricted master LP of column generation, shared by the covering and the
// configuration LP:
//
//	min Σ_j c_j x_j
//	s.t. Σ_j a_kj x_j ≥ n_k    for every class k   (dual π_k ≥ 0)
//	     Σ_{j of t} x_j ≤ M_t  for every limited t  (dual −σ_t ≤ 0)
//	     x ≥ 0
//
// It is a revised primal simplex with an explicit dense basis inverse, updated by a product-form
// pivot and refactored periodically. Rows are few (classes plus limited types) and columns are
// sparse. Every class row has a surplus column and an artificial column of cost big, every limit
// row a slack column; those form the initial basis, which is always feasible, and the basis the
// solver falls back to if a refactorization finds it singular. Nothing here needs to be exact:
// bounds are certified from the duals separately.
type master struct {
	m    int
	nK   int
	b    []float64
	cost []float64
	kind []int32 // type of a pattern column, −1 for surplus, artificial and slack columns
	cOff []int32 // column j's entries are cRow/cVal[cOff[j]:cOff[j+1]]
	cRow []int32
	cVal []float64
	// Basis.
	basis  []int
	pos    []int // row of each column, −1 when non-basic
	binv   []float64
	xb     []float64
	y      []float64
	d      []float64
	nz     []int32   // non-zero positions of the pivot row
	work   []float64 // scratch for refactor and prune
	since  int       // pivots since the last refactorization
	tol    float64
	big    float64 // the cost of the artificial columns, raised while optima use them
	bigMax float64
	cfg    *config // the work budget, charged per pivot (nil: none)
}

// newMaster builds the master for the instance with its surplus, artificial and slack columns.
// limitRow[t] is the row of limited type t, or −1.
func newMaster(in *instance) (*master, []int) {
	limitRow := make([]int, in.nT)
	m := in.nK
	for t := range limitRow {
		limitRow[t] = -1
		if in.limit[t] > 0 {
			limitRow[t] = m
			m++
		}
	}
	ms := &master{m: m, nK: in.nK, b: make([]float64, m), cOff: []int32{0}}
	ms.tol = 1e-9 * (1 + in.maxPrice)
	big := (1 + in.maxPrice) * float64(1+in.totalPods)
	ms.big, ms.bigMax = big, big*1e6
	for k := 0; k < in.nK; k++ {
		ms.b[k] = float64(in.count[k])
		ms.add(-1, 0, []int32{int32(k)}, []float64{-1}) // surplus
	}
	for k := 0; k < in.nK; k++ {
		ms.add(-1, big, []int32{int32(k)}, []float64{1}) // artificial
	}
	for t, r := range limitRow {
		if r >= 0 {
			ms.b[r] = float64(in.limit[t])
			ms.add(-1, 0, []int32{int32(r)}, []float64{1}) // slack
		}
	}
	ms.binv = make([]float64, m*m)
	ms.xb = make([]float64, m)
	ms.y = make([]float64, m)
	ms.d = make([]float64, m)
	ms.basis = make([]int, m)
	ms.resetBasis()
	return ms, limitRow
}

// add appends a column for type t (−1 for none) and returns its index; it starts non-basic.
func (ms *master) add(t int, cost float64, rows []int32, vals []float64) int {
	ms.cost = append(ms.cost, cost)
	ms.kind = append(ms.kind, int32(t))
	ms.cRow = append(ms.cRow, rows...)
	ms.cVal = append(ms.cVal, vals...)
	ms.cOff = append(ms.cOff, int32(len(ms.cRow)))
	ms.pos = append(ms.pos, -1)
	return len(ms.cost) - 1
}

func (ms *master) columns() int { return len(ms.cost) }

// solve runs the simplex until no column prices out or the pivot cap is reached.
func (ms *master) solve() {
	m := ms.m
	limit := 40*m + 400
	stall, best := 0, math.Inf(1)
	raised := false // at most once a solve: column generation may yet make the artificials idle
	ms.duals()
	for it := 0; it < limit; it++ {
		if ms.cfg != nil {
			if ms.cfg.spent += int64(m) * int64(m); ms.cfg.over() {
				return
			}
		}
		obj := ms.objective()
		if obj < best-ms.tol {
			best, stall = obj, 0
		} else {
			stall++
		}
		bland := stall > 30
		q, rq := ms.enter(bland)
		if q < 0 {
			if ms.driveOut() {
				ms.duals()
				continue
			}
			if raised || !ms.raiseBig() {
				return
			}
			raised = true
			best = math.Inf(1)
			ms.duals()
			continue
		}
		// d = B⁻¹ a_q
		for i := 0; i < m; i++ {
			s := 0.0
			row := ms.binv[i*m : (i+1)*m]
			for e := ms.cOff[q]; e < ms.cOff[q+1]; e++ {
				s += row[ms.cRow[e]] * ms.cVal[e]
			}
			ms.d[i] = s
		}
		p, theta := -1, math.Inf(1)
		for i := 0; i < m; i++ {
			if ms.d[i] <= 1e-9 {
				continue
			}
			r := max(ms.xb[i], 0) / ms.d[i]
			switch {
			case p < 0 || r < theta-1e-12:
				p, theta = i, r
			case r <= theta+1e-12:
				// Tie: Bland's rule takes the lowest column; otherwise the largest pivot.
				if (bland && ms.basis[i] < ms.basis[p]) || (!bland && ms.d[i] > ms.d[p]) {
					p, theta = i, min(r, theta)
				}
			}
		}
		if p < 0 {
			return // unbounded; impossible with non-negative costs
		}
		ms.pivot(p, q, theta)
		if ms.since == 0 {
			ms.duals()
			continue
		}
		// y' = y + rc_q · (row p of the new B⁻¹)
		row := ms.binv[p*m : (p+1)*m]
		for c, v := range row {
			ms.y[c] += rq * v
		}
	}
}

// enter picks the entering column: the most negative reduced cost (Dantzig), or under Bland's
// rule the lowest-indexed column that prices out. It returns −1 at optimality.
func (ms *master) enter(bland bool) (int, float64) {
	q, rq := -1, -ms.tol
	y, rows, vals, off := ms.y, ms.cRow, ms.cVal, ms.cOff
	pos := ms.pos[:len(ms.cost)]
	for j, c := range ms.cost {
		if pos[j] >= 0 {
			continue
		}
		rc := c
		lo, hi := off[j], off[j+1]
		for e, r := range rows[lo:hi] {
			rc -= y[r] * vals[int(lo)+e]
		}
		if rc < rq {
			q, rq = j, rc
			if bland {
				break
			}
		}
	}
	return q, rq
}

func (ms *master) pivot(p, q int, theta float64) {
	m := ms.m
	for i := 0; i < m; i++ {
		ms.xb[i] -= theta * ms.d[i]
	}
	ms.xb[p] = theta
	rowP := ms.binv[p*m : (p+1)*m]
	inv := 1 / ms.d[p]
	ms.nz = ms.nz[:0]
	for c := range rowP {
		if rowP[c] != 0 {
			rowP[c] *= inv
			ms.nz = append(ms.nz, int32(c))
		}
	}
	dense := len(ms.nz) > m/2
	for i := 0; i < m; i++ {
		if i == p || ms.d[i] == 0 {
			continue
		}
		f := ms.d[i]
		row := ms.binv[i*m : (i+1)*m]
		if dense {
			for c, v := range rowP {
				row[c] -= f * v
			}
			continue
		}
		for _, c := range ms.nz {
			row[c] -= f * rowP[c]
		}
	}
	ms.pos[ms.basis[p]] = -1
	ms.basis[p], ms.pos[q] = q, p
	ms.since++
	if ms.since >= 200 {
		ms.refactor()
	}
}

// duals computes y = c_B B⁻¹.
func (ms *master) duals() {
	m := ms.m
	for c := range ms.y {
		ms.y[c] = 0
	}
	for i := 0; i < m; i++ {
		cb := ms.cost[ms.basis[i]]
		if cb == 0 {
			continue
		}
		row := ms.binv[i*m : (i+1)*m]
		for c, v := range row {
			ms.y[c] += cb * v
		}
	}
}

func (ms *master) objective() float64 {
	s := 0.0
	for i, j := range ms.basis {
		s += ms.cost[j] * ms.xb[i]
	}
	return s
}

// prices writes π (class duals, ≥ 0) and σ (limit duals, ≥ 0, by row) from the current basis.
func (ms *master) prices(pi, sigma []float64) {
	ms.duals()
	top := 0.0
	for k := 0; k < ms.nK; k++ {
		pi[k] = max(ms.y[k], 0)
		top = max(top, pi[k])
	}
	// Prices this small are rounding noise; zero is as valid and keeps certificates clean.
	for k := 0; k < ms.nK; k++ {
		if pi[k] <= 1e-12*top {
			pi[k] = 0
		}
	}
	for i := ms.nK; i < ms.m; i++ {
		sigma[i-ms.nK] = max(-ms.y[i], 0)
	}
}

package bound

import "math"

// knap evaluates one type's knapsack for given class prices π: the most a single node of the
// type can be worth, max π·a over the pod counts a it can hold. It offers, from cheapest to
// dearest, a quick upper bound, the LP-dual upper bound, greedy patterns, and branch and bound.
//
// Two flavours: bounded (the configuration LP: integer counts, a_k ≤ u_{k,t}, group caps) and
// unbounded (the covering LP: any fractional a ≥ 0 within capacity).
type knap struct {
	in      *instance
	t       int
	bounded bool

	// Items: the classes the type may hold whose price is positive.
	n   int
	cls []int32
	u   []int64
	pi  []float64

	cheapVal float64 // cheap's result for this load, −1 before it is computed
	ent      []int32 // the item's entry in the instance's type–class lists (for tE, tR)

	// LP relaxation and its duals.
	lp     *nodeLP
	prices []float64 // the prices load was given
	prev   int       // the type relax solved last (its basis may suit the next type)
	y      []float64 // dual per resource (nR), 0 without a row
	nu     []float64 // dual per group, 0 without a row
	z      []float64 // certify's repair of the unbounded duals
	x      []float64 // LP primal per item

	// The last duals relax found for each type (nT × nR and nT × groups); reused as a quick
	// upper bound when prices move a little.
	yCache, nuCache []float64
	cached          []bool

	// Integer search.
	a, best      []int64
	incumbent    []int64
	bestVal      float64
	rem          []int64
	grem         []int64
	ord          []int
	dens         []float64
	suffix       []float64 // suffix sums of u·(π − y·e − ν)⁺ in ord order
	sufMax       []float64 // (n+1) × nR suffix maxima of π/e in ord order
	nodes, limit int
	open         float64
	cut          bool  // the last branch and bound left subtrees open (node limit, or within searchTol)
	near         bool  // it left some within searchTol
	rank         []int // position of each item in ord
	byRes        []int // nR × n: items by value per unit of each resource (for capped)
	sorted       bool  // byRes is sorted for the current search
	perUnit      []float64
}

// newKnap makes the knapsack evaluator over the LP relaxations lp solves (bounded or not).
func newKnap(in *instance, lp *nodeLP) *knap {
	return &knap{
		in: in, bounded: lp.bounded, lp: lp, prev: -1,
		y:       make([]float64, in.nR),
		nu:      make([]float64, len(in.gcap)),
		rem:     make([]int64, in.nR),
		grem:    make([]int64, len(in.gcap)),
		yCache:  make([]float64, in.nT*in.nR),
		nuCache: make([]float64, in.nT*len(in.gcap)),
		cached:  make([]bool, in.nT),
	}
}

// load selects type t's items for prices pi.
func (k *knap) load(t int, pi []float64) {
	in := k.in
	k.t, k.n, k.prices = t, 0, pi
	k.cls, k.u, k.pi = k.cls[:0], k.u[:0], k.pi[:0]
	k.ent = k.ent[:0]
	k.cheapVal = -1
	for i := in.tOff[t]; i < in.tOff[t+1]; i++ {
		c := in.tCls[i]
		if pi[c] <= 0 {
			continue
		}
		k.cls = append(k.cls, c)
		k.ent = append(k.ent, i)
		k.u = append(k.u, in.tU[i])
		k.pi = append(k.pi, pi[c])
		k.n++
	}
	k.prepareSearch()
}

// cheap returns a quick upper bound: the best single-resource fractional knapsack and, when
// bounded, Σ u·π.
func (k *knap) cheap() float64 {
	if k.cheapVal >= 0 {
		return k.cheapVal
	}
	nR := k.in.nR
	ub := math.Inf(1)
	for j := 0; j < nR; j++ {
		m := 0.0
		for i := 0; i < k.n; i++ {
			m = max(m, k.pi[i]*k.in.tR[int(k.ent[i])*nR+j])
		}
		ub = min(ub, m)
	}
	if k.bounded {
		s := 0.0
		for i := 0; i < k.n; i++ {
			s += float64(k.u[i]) * k.pi[i]
		}
		ub = min(ub, s)
	}
	k.cheapVal = ub
	return ub
}

// relax solves the LP relaxation and returns the upper bound certified by its duals (never above
// cheap). It leaves the duals in y, nu and the LP optimum in x.
func (k *knap) relax() float64 {
	in := k.in
	nR, nG := in.nR, len(k.nu)
	k.lp.solveNear(k.t, k.prices, k.prev)
	k.prev = k.t
	for j := range k.y {
		k.y[j] = 0
	}
	for g := range k.nu {
		k.nu[g] = 0
	}
	for i, r := range k.lp.rows[k.lp.rOff[k.t]:k.lp.rOff[k.t+1]] {
		if int(r) < nR {
			k.y[r] = k.lp.dual[i]
		} else {
			k.nu[int(r)-nR] = k.lp.dual[i]
		}
	}
	k.x = grow(k.x, k.n)
	lo := in.tOff[k.t]
	for i := 0; i < k.n; i++ {
		k.x[i] = k.lp.x[k.ent[i]-lo]
	}
	copy(k.yCache[k.t*nR:(k.t+1)*nR], k.y)
	copy(k.nuCache[k.t*nG:(k.t+1)*nG], k.nu)
	k.cached[k.t] = true
	return min(k.certify(), k.cheap())
}

// quick is a quick upper bound: the one the duals relax last found for this type certify at
// the current prices (those duals stay valid, only less tight, when prices move), or cheap
// before relax has run.
func (k *knap) quick() float64 {
	if !k.cached[k.t] {
		return k.cheap()
	}
	nR, nG := k.in.nR, len(k.nu)
	copy(k.y, k.yCache[k.t*nR:(k.t+1)*nR])
	copy(k.nu, k.nuCache[k.t*nG:(k.t+1)*nG])
	return k.certify()
}

// certify returns the upper bound the duals (y, ν) ≥ 0 prove. For any such duals and any
// pattern a that fits,
//
//	π·a ≤ Σ_r y_r + Σ_g ν_g P_g + Σ_k u_k (π_k − Σ_r y_r e_kr − ν_g(k))⁺,
//
// the objective of the LP dual. Unbounded, there are no u_k, so the duals are scaled up until
// they cover every π_k.
func (k *knap) certify() float64 {
	nR := k.in.nR
	base := 0.0
	for j := 0; j < nR; j++ {
		base += k.y[j]
	}
	if !k.bounded {
		// Two repairs of small infeasibilities: scale y up, or raise, for each item short of
		// its price, the resource it uses most.
		s := 1.0
		k.z = grow(k.z, nR)
		for j := range k.z {
			k.z[j] = 0
		}
		for i := 0; i < k.n; i++ {
			w := 0.0
			top := 0
			for j := 0; j < nR; j++ {
				w += k.y[j] * k.in.tE[int(k.ent[i])*nR+j]
				if k.in.tE[int(k.ent[i])*nR+j] > k.in.tE[int(k.ent[i])*nR+top] {
					top = j
				}
			}
			if w >= k.pi[i] {
				continue
			}
			s = max(s, k.pi[i]/w) // +Inf when w = 0
			k.z[top] = max(k.z[top], (k.pi[i]-w)/k.in.tE[int(k.ent[i])*nR+top])
		}
		raised := base
		for _, v := range k.z {
			raised += v
		}
		if math.IsInf(s, 1) {
			return raised
		}
		return min(s*base, raised)
	}
	for g, v := range k.nu {
		base += v * float64(k.in.gcap[g])
	}
	// The excesses π − y·e − ν cancel: allow for rounding relative to the terms, not to the
	// result.
	mag := base
	for i := 0; i < k.n; i++ {
		base += float64(k.u[i]) * k.excess(i)
		mag += float64(k.u[i]) * k.pi[i]
	}
	return base + roundingSlack*mag
}

// excess is (π_i − y·e_i − ν_g(i))⁺.
func (k *knap) excess(i int) float64 {
	nR := k.in.nR
	w := 0.0
	for j := 0; j < nR; j++ {
		w += k.y[j] * k.in.tE[int(k.ent[i])*nR+j]
	}
	if g := k.in.group[k.cls[i]]; g >= 0 {
		w += k.nu[g]
	}
	return max(k.pi[i]-w, 0)
}

// pattern returns the best pattern as class rows and counts.
func (k *knap) pattern(rows []int32, vals []float64) ([]int32, []float64) {
	for i := 0; i < k.n; i++ {
		if k.best[i] > 0 {
			rows = append(rows, k.cls[i])
			vals = append(vals, float64(k.best[i]))
		}
	}
	return rows, vals
}

func growI64(s []int64, n int) []int64 {
	if cap(s) < n {
		return make([]int64, n, n+n/2)
	}
	return s[:n]
}

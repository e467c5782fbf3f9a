package bound

import (
	"cmp"
	"math"
	"slices"
)

// greedy fills a node in two orders (by price per bottleneck fraction and per total fraction)
// and keeps the better pattern in best if it beats bestVal; it returns bestVal.
func (k *knap) greedy() float64 {
	nR := k.in.nR
	for pass := 0; pass < 2; pass++ {
		for i := 0; i < k.n; i++ {
			w := 0.0
			for j := 0; j < nR; j++ {
				if pass == 0 {
					w = max(w, k.in.tE[int(k.ent[i])*nR+j])
				} else {
					w += k.in.tE[int(k.ent[i])*nR+j]
				}
			}
			k.dens[i] = k.pi[i] / w
		}
		k.sortOrder()
		k.resetState()
		val := 0.0
		for _, i := range k.ord {
			q := k.fit(i)
			if q > 0 {
				k.place(i, q)
				val += float64(q) * k.pi[i]
			}
		}
		if val > k.bestVal {
			k.bestVal = val
			copy(k.best, k.a)
		}
	}
	return k.bestVal
}

// prepareSearch sizes the search buffers and clears the incumbent.
func (k *knap) prepareSearch() {
	k.a = growI64(k.a, k.n)
	k.best = growI64(k.best, k.n)
	k.ord = growInt(k.ord, k.n)
	k.dens = grow(k.dens, k.n)
	for i := range k.best {
		k.best[i] = 0
	}
	k.bestVal = 0
}

// sortOrder orders items by density, highest first, ties by index.
func (k *knap) sortOrder() {
	for i := range k.ord {
		k.ord[i] = i
	}
	dens := k.dens
	slices.SortFunc(k.ord, func(a, b int) int {
		switch da, db := dens[a], dens[b]; {
		case da > db:
			return -1
		case da < db:
			return 1
		}
		return a - b
	})
}

func (k *knap) resetState() {
	in := k.in
	copy(k.rem, in.capa[k.t*in.nR:(k.t+1)*in.nR])
	copy(k.grem, in.gcap)
	for i := range k.a {
		k.a[i] = 0
	}
}

// fit is how many more pods of item i fit in the remaining capacity.
func (k *knap) fit(i int) int64 {
	nR := k.in.nR
	q := k.u[i] - k.a[i]
	if g := k.in.group[k.cls[i]]; g >= 0 {
		q = min(q, k.grem[g])
	}
	for j := 0; j < nR && q > 0; j++ {
		if d := k.in.dem[int(k.cls[i])*nR+j]; d > 0 {
			q = min(q, k.rem[j]/d)
		}
	}
	return max(q, 0)
}

func (k *knap) place(i int, q int64) {
	nR := k.in.nR
	k.a[i] += q
	if g := k.in.group[k.cls[i]]; g >= 0 {
		k.grem[g] -= q
	}
	for j := 0; j < nR; j++ {
		k.rem[j] -= q * k.in.dem[int(k.cls[i])*nR+j]
	}
}

// dualOrder orders items by price per dual-weighted size, highest first; items the duals price
// at zero go first. It needs the duals left by relax.
func (k *knap) dualOrder() {
	nR := k.in.nR
	for i := 0; i < k.n; i++ {
		w := 0.0
		for j := 0; j < nR; j++ {
			w += k.y[j] * k.in.tE[int(k.ent[i])*nR+j]
		}
		if g := k.in.group[k.cls[i]]; g >= 0 {
			w += k.nu[g]
		}
		k.dens[i] = math.Inf(1)
		if w > 0 {
			k.dens[i] = k.pi[i] / w
		}
	}
	k.sortOrder()
}

// roundLP rounds the LP optimum left by relax down to whole pods and fills what is left in dual
// order; it keeps the result in best if it beats bestVal, and returns bestVal.
func (k *knap) roundLP() float64 {
	k.dualOrder()
	k.resetState()
	val := 0.0
	for i := 0; i < k.n; i++ {
		if q := min(int64(k.x[i]+1e-9), k.fit(i)); q > 0 {
			k.place(i, q)
			val += float64(q) * k.pi[i]
		}
	}
	for _, i := range k.ord {
		if q := k.fit(i); q > 0 {
			k.place(i, q)
			val += float64(q) * k.pi[i]
		}
	}
	if val > k.bestVal {
		k.bestVal = val
		copy(k.best, k.a)
	}
	return k.bestVal
}

// price looks for a pattern worth more than thr, from cheap to dear: unless a quick or the LP
// bound rules it out, the LP optimum rounded; then greedy fills; then a branch and bound of at
// most nodes nodes. It returns the best value found (its pattern in best), an upper bound on
// the knapsack's value, and the certificate level of that bound.
func (k *knap) price(thr float64, nodes int) (value, ub float64, level int8) {
	ub = k.quick()
	if !improves(ub, thr) {
		return 0, ub, 0
	}
	ub = k.relax()
	if !improves(ub, thr) {
		return 0, ub, 1
	}
	if v := k.roundLP(); improves(v, thr) {
		return v, ub, 1
	}
	if v := k.greedy(); improves(v, thr) {
		return v, ub, 1
	}
	ub = min(ub, k.branch(nodes))
	return k.bestVal, ub, 1
}

// bestPattern searches as price does but without stopping early, and returns the best value
// found (its pattern in best).
func (k *knap) bestPattern(nodes int) float64 {
	k.greedy()
	k.relax()
	k.roundLP()
	k.branch(nodes)
	return k.bestVal
}

// branch finds the best integer pattern by depth-first branch and bound over at most limit nodes,
// bounding with the duals left by relax. The incumbent is the better of best (kept from earlier
// calls for this load) and greedy. It returns an upper bound on the knapsack's value: the
// optimum when the search finishes, otherwise the larger of the incumbent and the bounds of the
// subtrees left unexplored. best holds the incumbent.
func (k *knap) branch(limit int) float64 {
	nR := k.in.nR
	incumbentVal := k.bestVal
	k.incumbent = append(k.incumbent[:0], k.best[:k.n]...)
	if k.greedy(); k.bestVal < incumbentVal {
		k.bestVal = incumbentVal
		copy(k.best, k.incumbent)
	}
	k.dualOrder()
	k.suffix = grow(k.suffix, k.n+1)
	k.sufMax = grow(k.sufMax, (k.n+1)*nR)
	k.suffix[k.n] = 0
	for j := 0; j < nR; j++ {
		k.sufMax[k.n*nR+j] = 0
	}
	for p := k.n - 1; p >= 0; p-- {
		i := k.ord[p]
		k.suffix[p] = k.suffix[p+1] + float64(k.u[i])*k.excess(i)
		for j := 0; j < nR; j++ {
			k.sufMax[p*nR+j] = max(k.sufMax[(p+1)*nR+j], k.pi[i]*k.in.tR[int(k.ent[i])*nR+j])
		}
	}
	k.sorted = false
	k.resetState()
	k.nodes, k.limit, k.open, k.near = 0, limit, 0, false
	k.cut = k.dfs(0, 0) || k.near
	return max(k.bestVal, k.open)
}

// searchTol is the relative margin by which a subtree's bound must beat the incumbent for the
// subtree to be searched. Without it, degenerate knapsacks whose LP bound equals the optimum up
// to rounding are searched to the node limit for nothing; with it, such a subtree is left
// unexplored and its bound, barely above the incumbent, counts among the open ones.
const searchTol = 1e-10

// bound is an upper bound on the value of completing the current partial pattern (value val)
// with the items from position p of the order on: the LP-dual bound on the residual knapsack and
// the best single-resource fractional bound.
func (k *knap) bound(p int, val float64) float64 {
	in := k.in
	nR := in.nR
	inv := in.inv[k.t*nR : (k.t+1)*nR]
	b1 := k.suffix[p]
	b2 := math.Inf(1)
	for j := 0; j < nR; j++ {
		r := float64(k.rem[j]) * inv[j]
		b1 += k.y[j] * r
		if s := k.sufMax[p*nR+j]; !math.IsInf(s, 1) {
			b2 = min(b2, r*s)
		}
	}
	for g, v := range k.nu {
		if v > 0 {
			b1 += v * float64(k.grem[g])
		}
	}
	return val + min(b1, b2)
}

// sortByResource orders the items for each resource by value per unit of it (those that do
// not use it first) for capped, and records each item's position in the search order.
func (k *knap) sortByResource() {
	nR, n := k.in.nR, k.n
	k.sorted = true
	k.rank = growInt(k.rank, n)
	for p, i := range k.ord[:n] {
		k.rank[i] = p
	}
	k.byRes = growInt(k.byRes, nR*n)
	for j := 0; j < nR; j++ {
		order := k.byRes[j*n : (j+1)*n]
		for i := range order {
			order[i] = i
		}
		k.perUnit = grow(k.perUnit, n)
		for i := range order {
			k.perUnit[i] = k.pi[i] * k.in.tR[int(k.ent[i])*nR+j]
		}
		slices.SortFunc(order, func(a, b int) int {
			if c := cmp.Compare(k.perUnit[b], k.perUnit[a]); c != 0 {
				return c
			}
			return a - b
		})
	}
}

// capped is an upper bound on the value of completing the current partial pattern with the
// items from position p of the search order on: for each resource alone, the fractional
// knapsack of those items within their caps (Dantzig's bound), the least of them. It is
// tighter than bound where the caps bind, and dearer, so dfs asks for it only when bound
// cannot prune.
func (k *knap) capped(p int) float64 {
	if !k.sorted {
		k.sortByResource()
	}
	in := k.in
	nR, n := in.nR, k.n
	best := math.Inf(1)
	for j := 0; j < nR; j++ {
		room := float64(k.rem[j])
		v := 0.0
		for _, i := range k.byRes[j*n : (j+1)*n] {
			if k.rank[i] < p {
				continue
			}
			q := k.u[i]
			if g := in.group[k.cls[i]]; g >= 0 {
				q = min(q, k.grem[g])
			}
			d := float64(in.dem[int(k.cls[i])*nR+j])
			if take := float64(q) * d; take <= room {
				v += float64(q) * k.pi[i]
				room -= take
				continue
			}
			v += k.pi[i] * room / d
			break
		}
		best = min(best, v)
	}
	return best
}

func (k *knap) dfs(p int, val float64) (aborted bool) {
	k.nodes++
	if val > k.bestVal {
		k.bestVal = val
		copy(k.best, k.a)
	}
	if p == k.n {
		return false
	}
	b := k.bound(p, val)
	if b > k.bestVal {
		b = min(b, val+k.capped(p))
	}
	if b <= k.bestVal {
		return false
	}
	if b <= k.bestVal*(1+searchTol) {
		k.open = max(k.open, b)
		k.near = true
		return false
	}
	if k.nodes > k.limit {
		k.open = max(k.open, b)
		return true
	}
	i := k.ord[p]
	for q := k.fit(i); q >= 0; q-- {
		k.place(i, q)
		ab := k.dfs(p+1, val+float64(q)*k.pi[i])
		k.place(i, -q)
		if ab {
			// The children with fewer pods of i are unexplored: add their bounds.
			for r := q - 1; r >= 0; r-- {
				k.place(i, r)
				k.open = max(k.open, k.bound(p+1, val+float64(r)*k.pi[i]))
				k.place(i, -r)
			}
			return true
		}
	}
	return false
}

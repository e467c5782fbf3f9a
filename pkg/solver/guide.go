package solver

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver/bound"
)

// Guided packing. First-fit decreasing buys nodes one at a time and cannot see that a mix of
// pods packs better on a mix of types. For the pods whose only constraints are which types they
// may use (no topology, no pod affinity, no host ports, no preferences, selected by no topology
// group), the solver also asks the configuration LP of the lower bound what nodes to buy, rounds
// its patterns into whole nodes, and opens those claims; whatever the rounding leaves is placed
// first-fit as usual. The guided plan is kept only when it is cheaper than the plain one.

// packable reports whether the class may be placed by the LP's patterns: nothing about it but
// its requests and the types it may use matters to where it goes. (Letting hostname
// anti-affinity classes in, with the patterns holding one pod of each per node, made the
// diverse benchmark's plans dearer; topology spread needs domains the patterns do not have.)
func (c *class) packable() bool {
	return c.invalid == nil && len(c.spreads) == 0 && len(c.affinity) == 0 && len(c.anti) == 0 &&
		len(c.matches) == 0 && len(c.hostPorts) == 0 && len(c.prefs) == 0 && !c.nodeSpecific
}

func (s *solve) anyPackable() bool {
	n := 0
	for _, c := range s.classes {
		if c.packable() {
			n += len(c.pods)
		}
	}
	return n > 1
}

// packKind says which pool type a type of the guide's problem is, and for a reserved offer its
// reservation.
type packKind struct{ pool, ti, resv int }

type packKey struct{ pool, ti int }

// guideTypes are the pool types of the guide's problems, built once per prepared snapshot:
// every type at its cheapest regular offer, and each reserved offer as a type of its own whose
// count is what the reservation has left when a solve asks.
type guideTypes struct {
	types    []bound.Type
	kinds    []packKind
	regular  map[packKey]int
	reserved map[packKey][]int
	// regularOf[pool][ti] is regular's entry for the pool type, or −1 (a slice: packProblem
	// looks every class's types up).
	regularOf [][]int32
	// pareto memoizes undominated by the type list it was given.
	pareto map[string][]int
}

// undominated is list without the types another unlimited type of it dominates: one no dearer
// and at least as large in every resource, so that any node of the first could be one of the
// other for no more. The guide's LP then prices a few dozen types instead of the hundreds a
// pool of several families has (the bound package would drop most of them too, but only after
// comparing them all, on every solve: a tenth of a consolidation pass went there). A reserved
// offer (a limited type) is never dropped, nor counted as beating another. The result is
// memoized per list for the prepared snapshot.
func (g *guideTypes) undominated(types []bound.Type, list []int) []int {
	key := make([]byte, 0, 4*len(list))
	for _, t := range list {
		key = binary.LittleEndian.AppendUint32(key, uint32(t))
	}
	if out, ok := g.pareto[string(key)]; ok {
		return out
	}
	order := slices.Clone(list)
	slices.SortStableFunc(order, func(a, b int) int {
		if c := cmp.Compare(types[a].Price, types[b].Price); c != 0 {
			return c
		}
		return cmp.Compare(types[b].Capacity[scheduling.CPU]+types[b].Capacity[scheduling.Memory]>>20, types[a].Capacity[scheduling.CPU]+types[a].Capacity[scheduling.Memory]>>20)
	})
	var kept []int
	dropped := map[int]bool{}
	for _, t := range order {
		if types[t].MaxCount > 0 {
			continue
		}
		for _, s := range kept {
			if types[s].Price <= types[t].Price && types[t].Capacity.Fits(&types[s].Capacity) {
				dropped[t] = true
				break
			}
		}
		if !dropped[t] {
			kept = append(kept, t)
		}
	}
	out := make([]int, 0, len(list)-len(dropped))
	for _, t := range list {
		if !dropped[t] {
			out = append(out, t)
		}
	}
	if g.pareto == nil {
		g.pareto = map[string][]int{}
	}
	g.pareto[string(key)] = out
	return out
}

// packTypes returns the pools' types as the guide's LP sees them, built on first use.
func (p *Prepared) packTypes() *guideTypes {
	if p.guide.types == nil {
		p.guide.types = p.buildPackTypes()
	}
	return p.guide.types
}

// guideBox holds the guide's types of compiled pools, built once for every Prepared that
// shares the pools (WithNodes). Like the pools' other caches it is not safe for concurrent
// use: the Prepareds that share it solve one after the other.
type guideBox struct {
	types *guideTypes
}

// buildPackTypes lists the pools' types as the guide's LP sees them.
func (p *Prepared) buildPackTypes() *guideTypes {
	g := &guideTypes{regular: map[packKey]int{}, reserved: map[packKey][]int{}}
	for _, pl := range p.base.pools {
		if pl.reason != nil {
			continue
		}
		for ti, t := range pl.types {
			best := -1.0
			for _, o := range t.offers {
				if o.resv >= 0 {
					k := packKey{pl.index, ti}
					g.reserved[k] = append(g.reserved[k], len(g.types))
					g.types = append(g.types, bound.Type{Name: t.it.Name + "/reserved", Price: o.price, Capacity: t.alloc})
					g.kinds = append(g.kinds, packKind{pool: pl.index, ti: ti, resv: o.resv})
					continue
				}
				if best < 0 || o.price < best {
					best = o.price
				}
			}
			if best >= 0 {
				g.regular[packKey{pl.index, ti}] = len(g.types)
				g.types = append(g.types, bound.Type{Name: t.it.Name, Price: best, Capacity: t.alloc})
				g.kinds = append(g.kinds, packKind{pool: pl.index, ti: ti, resv: -1})
			}
		}
	}
	for _, pl := range p.base.pools {
		for len(g.regularOf) <= pl.index {
			g.regularOf = append(g.regularOf, nil)
		}
		idx := make([]int32, len(pl.types))
		for ti := range idx {
			idx[ti] = -1
			if i, ok := g.regular[packKey{pl.index, ti}]; ok {
				idx[ti] = int32(i)
			}
		}
		g.regularOf[pl.index] = idx
	}
	return g
}

// pack places the classes: first on the free room of existing nodes, claims in flight and the
// claims opened so far (first-fit, as that room costs nothing), then the rest by the LP's
// rounded patterns, as far as they go.
func (s *solve) pack(classes []*class) {
	s.grow = false
	for _, c := range classes {
		for _, t := range s.targets {
			if c.remaining() == 0 {
				break
			}
			s.tryTarget(c, t, c.remaining())
		}
		for i := s.cidx.first(c, 0, &c.requests, false); i >= 0 && c.remaining() > 0; i = s.cidx.first(c, i+1, &c.requests, false) {
			s.tryClaim(c, s.claims[i], c.remaining(), -1, -1)
		}
	}
	s.grow = true
	left := false
	for _, c := range classes {
		left = left || c.remaining() > 0
	}
	if !left {
		return
	}
	prob, kinds, rows := s.packProblem(classes)
	if len(prob.Classes) == 0 {
		return
	}
	budget := s.guideLP
	r := bound.Lower(prob, s.lpOptions(budget, false, bound.WithPatterns())...)
	s.guideStats.Work, s.guideStats.Budget, s.guideStats.Stopped = r.Work, budget, r.Stopped
	if len(r.Patterns) == 0 {
		return
	}
	nodes, _ := roundPatterns(prob, r.Patterns)
	s.hint = 0
	for _, n := range nodes {
		for range int(n.Multiplicity + 0.5) {
			s.realize(n, rows, kinds[n.Type])
		}
	}
}

// packProblem is the packing problem of the classes' remaining pods on the pool types, with
// like classes merged into rows (aggregate.go). A class may use the types of the heaviest pools
// that can hold it, as first-fit would.
func (s *solve) packProblem(classes []*class) (*bound.Problem, []packKind, []guideRow) {
	pt := s.prep.packTypes()
	// The types are shared by the prepared snapshot's solves (nothing below changes them); a
	// snapshot with reservations gets its own copy to count this solve's slots in.
	prob := bound.Problem{Types: pt.types}
	kinds := pt.kinds
	if len(pt.reserved) > 0 {
		prob.Types = slices.Clone(pt.types)
	}
	var members []*class
	for i, k := range kinds {
		if k.resv >= 0 {
			// A reservation used up is left out of every class below (MaxCount 0 would mean
			// unlimited).
			prob.Types[i].MaxCount = max(s.reservations[k.resv], 1)
		}
	}
	// Classes mostly share their type lists: each distinct list is kept once, and a class
	// names it by index (lists); the lists of a pool are built once per distinct compiled
	// requirements (poolLists).
	var lists [][]int
	var pools poolLists
	var listOf []int
	var types []int
	for _, c := range classes {
		if c.remaining() == 0 {
			continue
		}
		types = types[:0]
		weight, found := int32(0), false
		var only *poolList // the one pool list contributing, while there is only one
		lists0 := 0
		for pi, p := range s.pools {
			if c.poolReason[pi] != nil || p.reason != nil || p.nodesLeft == 0 {
				continue
			}
			if found && p.np.Weight < weight {
				break // pools come heaviest first
			}
			pl := pools.of(s, pt, pi, c.compiled[pi])
			if len(pl.types) == 0 {
				continue
			}
			types = append(types, pl.types...)
			if lists0++; lists0 == 1 {
				only = pl
			} else {
				only = nil
			}
			weight = p.np.Weight
			for _, ti := range pl.tis {
				if found {
					break
				}
				found = c.fit(&p.types[ti].alloc) > 0
			}
		}
		var li int
		if only != nil && only.sorted && only.list >= 0 {
			// The list of one pool, sorted and without repeats, found before: thousands of
			// classes of distinct shapes share it.
			li = only.list
		} else {
			sortInts(types)
			types = compactInts(types)
			li = slices.IndexFunc(lists, func(l []int) bool { return slices.Equal(l, types) })
			if li < 0 {
				li = len(lists)
				lists = append(lists, slices.Clone(types))
			}
			if only != nil && only.sorted {
				only.list = li
			}
		}
		listOf = append(listOf, li)
		members = append(members, c)
	}
	maxRows, fineRows := s.guideRows, s.guideFineRows
	if maxRows <= 0 {
		maxRows, fineRows = maxGuideClasses, maxFineGuideClasses
	}
	for i, l := range lists {
		lists[i] = pt.undominated(prob.Types, l)
	}
	rows, steps, finer := aggregate(members, listOf, lists, prob.Types, maxRows, fineRows)
	s.guideStats = GuideStats{Classes: len(members), Rows: len(rows), GridSteps: steps, RoundingLoss: roundingLoss(rows), Attempts: 1}
	s.guideFiner = finer
	for i := range rows {
		r := &rows[i]
		prob.Classes = append(prob.Classes, bound.Class{Count: r.count, Demand: r.demand, Types: r.types, Group: -1})
	}
	return &prob, kinds, rows
}

// realize opens one node of a rounded pattern and puts its pods there: each row's count from its
// classes, then, when rows were merged on a grid (their mean shape is only approximately each
// pod's), as many more of the pattern's rows as still fit. On a grid the node keeps the
// pattern's type: a pod that would make it grow stays pending for first-fit. (Letting it grow
// turned c6g nodes into m6g ones wherever a node's sample of a row was more memory-heavy than
// the row's mean: 2,000 distinct web pods $46.06 → $45.70/h without.) Pods that do not go where
// the pattern says stay pending for first-fit.
func (s *solve) realize(n bound.Pattern, rows []guideRow, k packKind) {
	merged := s.guideStats.GridSteps > 0
	if merged {
		grow := s.grow
		s.grow = false
		defer func() { s.grow = grow }()
	}
	var cl *newClaim
	for i, ri := range n.Classes {
		want := int(n.Counts[i])
		for _, c := range rows[ri].members {
			if want == 0 {
				break
			}
			if c.remaining() == 0 {
				continue
			}
			if cl == nil {
				if cl = s.openClaimOfType(c, s.pools[k.pool], k.ti); cl == nil {
					return
				}
			}
			want -= s.tryClaim(c, cl, min(want, c.remaining()), -1, -1)
		}
	}
	if cl == nil || !merged {
		return // exact rows: the pattern is the LP's, and first-fit places the rest
	}
	for _, ri := range n.Classes {
		for _, c := range rows[ri].members {
			if c.remaining() > 0 {
				s.tryClaim(c, cl, c.remaining(), -1, -1)
			}
		}
	}
}

// openClaimOfType opens a claim of pool p with type ti as its target, for class c.
func (s *solve) openClaimOfType(c *class, p *pool, ti int) *newClaim {
	if p.nodesLeft == 0 || c.poolReason[p.index] != nil || !p.withinLimits(nil, &p.types[ti].capacity) {
		return nil
	}
	for _, a := range c.compiled[p.index] {
		if a == nil || !a.types.Has(ti) {
			continue
		}
		mask := offerBits(a.zones, a.cts)
		if p.types[ti].bits&mask == 0 {
			continue
		}
		if _, _, ok := s.offerPrice(p, ti, mask); !ok {
			continue
		}
		cl := &newClaim{
			index: len(s.claims), host: s.nHosts + len(s.claims), pool: p, types: a.types.Clone(),
			zones: a.zones, cts: a.cts, residual: p.residual.Intersect(a.residual), target: -1, resv: -1,
			maxAlloc: a.maxAlloc,
		}
		s.claims = append(s.claims, cl)
		s.openClaims[p.index]++
		s.setTarget(cl, ti, mask)
		if p.nodesLeft > 0 {
			p.nodesLeft--
		}
		return cl
	}
	return nil
}

// nonNegative is r with overcommitted resources at zero.
func nonNegative(r scheduling.Resources) scheduling.Resources {
	for i := range r {
		r[i] = max(r[i], 0)
	}
	return r
}

func compactInts(v []int) []int {
	out := v[:0]
	for i, x := range v {
		if i == 0 || x != v[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// poolList is the guide's types of one pool for one set of compiled requirements: their
// problem indices, and the pool type of each. The list holds the types too small for a class
// as well, so that classes of one pool share it; each row keeps those its shape fits
// (aggregate).
type poolList struct {
	pi    int
	alts  []*altInPool
	types []int
	tis   []int
	// sorted says types ascend without repeats; list is then the index of the problem's type
	// list equal to types, once packProblem has one (−1 before).
	sorted bool
	list   int
}

// poolLists caches poolList by pool and requirements; it looks at its latest entries only, so
// that classes with requirements of their own each cost one build, not a scan of all.
type poolLists []*poolList

func (pls *poolLists) of(s *solve, pt *guideTypes, pi int, alts []*altInPool) *poolList {
	l := *pls
	for i := len(l) - 1; i >= max(0, len(l)-16); i-- {
		if l[i].pi == pi && sameAlts(l[i].alts, alts) {
			return l[i]
		}
	}
	p := s.pools[pi]
	// Sized once for the types the alternatives allow (grown by appends, the lists were among
	// the largest allocations of the disruption loop's solves).
	n := 0
	for _, a := range alts {
		if a != nil {
			n += a.types.Count()
		}
	}
	pl := &poolList{pi: pi, alts: alts, list: -1, types: make([]int, 0, n), tis: make([]int, 0, n)}
	regular := pt.regularOf[pi]
	for _, a := range alts {
		if a == nil {
			continue
		}
		mask := offerBits(a.zones, a.cts)
		for ti := a.types.Next(0); ti >= 0; ti = a.types.Next(ti + 1) {
			if p.types[ti].bits&mask == 0 {
				continue
			}
			if i := regular[ti]; i >= 0 {
				pl.types, pl.tis = append(pl.types, int(i)), append(pl.tis, ti)
			}
			if len(pt.reserved) == 0 {
				continue
			}
			for _, i := range pt.reserved[packKey{pi, ti}] {
				if s.reservations[pt.kinds[i].resv] > 0 {
					pl.types, pl.tis = append(pl.types, i), append(pl.tis, ti)
				}
			}
		}
	}
	pl.sorted = true
	for i := 1; i < len(pl.types); i++ {
		pl.sorted = pl.sorted && pl.types[i-1] < pl.types[i]
	}
	*pls = append(l, pl)
	return pl
}

// sameAlts reports whether two classes' compiled requirements in a pool allow the same types
// and offerings.
func sameAlts(a, b []*altInPool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		switch {
		case a[i] == b[i]:
		case a[i] == nil || b[i] == nil:
			return false
		case a[i].zones != b[i].zones || a[i].cts != b[i].cts || !slices.Equal(a[i].types, b[i].types):
			return false
		}
	}
	return true
}

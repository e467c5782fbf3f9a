package solver

import (
	"fmt"
	"slices"

	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver/bound"
)

// lowerBound proves a floor under the price of new capacity for the pods the plan placed: a
// packing problem with every pool type (at its cheapest offer, and reserved offers as
// count-limited types), the free room of existing nodes as free count-1 types, and the placed
// pods under their hard constraints only (preferences are dropped, so the floor holds for any
// plan kube-scheduler would accept).
func (s *solve) lowerBound() (float64, BoundStats) {
	prob, keys := s.boundProblemKeyed()
	if len(prob.Classes) == 0 {
		return 0, BoundStats{Exact: true}
	}
	opts := []bound.Option{bound.KnapsackNodes(boundKnapsackNodes)}
	if s.opts.BoundIterations > 0 {
		opts = append(opts, bound.MaxIterations(s.opts.BoundIterations))
	}
	orig := prob.Classes
	xs, relaxed := relaxations(prob, keys)
	st := BoundStats{Classes: len(orig)}
	value := -1.0
	for i, x := range xs {
		prob.Classes = relaxed[i]
		r := bound.Lower(prob, s.lpOptions(s.opts.BoundWork, true, opts...)...)
		st.Work += r.Work
		st.Stopped = st.Stopped || r.Stopped
		if r.Value > value {
			value = r.Value
			st.Exact, st.Iterations, st.Rows = r.Exact && x.steps == 0, r.Iterations, len(relaxed[i])
			st.Relaxation, st.RoundingLoss = x.String(), x.roundingLoss(orig, relaxed[i])
		}
	}
	if len(xs) > 1 || xs[0].steps != 0 {
		// The LPs saw merged, rounded-down classes; the counting bounds (the joint cover of
		// every resource above all) see the pods' exact demand, at a cost that does not grow
		// with the classes.
		prob.Classes = orig
		if r := bound.Lower(prob, bound.CountingOnly()); r.Value > value {
			// Rows and Iterations stay the LPs': the counting bounds solve none over the classes.
			value = r.Value
			st.Exact = false
			st.Relaxation, st.RoundingLoss = RelaxationCounting, 0
		}
	}
	return value, st
}

// boundProblem builds the packing problem whose optimum no plan can beat.
func (s *solve) boundProblem() *bound.Problem {
	prob, _ := s.boundProblemKeyed()
	return prob
}

// boundProblemKeyed is boundProblem with, per class, the key of its type list.
func (s *solve) boundProblemKeyed() (*bound.Problem, []int) {
	var prob bound.Problem
	type key struct{ pool, ti int }
	regular := map[key]int{}
	reserved := map[key][]int{}
	for _, p := range s.pools {
		for ti, t := range p.types {
			best := -1.0
			for _, o := range t.offers {
				if o.resv >= 0 {
					reserved[key{p.index, ti}] = append(reserved[key{p.index, ti}], len(prob.Types))
					prob.Types = append(prob.Types, bound.Type{Name: t.it.Name + "/reserved", Price: o.price, Capacity: t.alloc, MaxCount: max(s.reservationsInit[o.resv], 0)})
					continue
				}
				if best < 0 || o.price < best {
					best = o.price
				}
			}
			if best >= 0 {
				regular[key{p.index, ti}] = len(prob.Types)
				prob.Types = append(prob.Types, bound.Type{Name: t.it.Name, Price: best, Capacity: t.alloc})
			}
		}
	}
	existing := len(prob.Types)
	for _, t := range s.targets {
		free := t.free0 // an overcommitted node has no room, not negative room
		for i := range free {
			free[i] = max(free[i], 0)
		}
		prob.Types = append(prob.Types, bound.Type{Name: t.node.Name, Price: 0, Capacity: free, MaxCount: 1})
	}
	groups := map[*group]int{}
	merged := map[boundKey]int{}
	var keys []int
	// Classes mostly share their type lists: each distinct one is kept once (lists), and
	// classes are merged by its index.
	var lists [][]int
	var types []int
	seen := make([]bool, len(prob.Types))
	for _, c := range s.classes {
		placed := c.placed
		if placed == 0 {
			continue
		}
		types = types[:0]
		clear(seen)
		for pi, p := range s.pools {
			if p.reason != nil || c.poolReason[pi] != nil && c.poolReason[pi].Kind == ReasonTaint {
				continue
			}
			for _, alt := range c.alts {
				a, _ := s.compileAlt(p, c, alt)
				if a == nil {
					continue
				}
				mask := offerBits(a.zones, a.cts)
				for ti := a.types.Next(0); ti >= 0; ti = a.types.Next(ti + 1) {
					if p.types[ti].bits&mask == 0 {
						continue
					}
					if i, ok := regular[key{pi, ti}]; ok && !seen[i] {
						seen[i] = true
						types = append(types, i)
					}
					for _, i := range reserved[key{pi, ti}] {
						if !seen[i] {
							seen[i] = true
							types = append(types, i)
						}
					}
				}
			}
		}
		for ti, t := range s.targets {
			if s.hardCompatTarget(c, t) {
				types = append(types, existing+ti)
			}
		}
		sortInts(types)
		grp := -1
		for _, at := range c.anti {
			if at.weight == 0 && at.self && at.g.dim == dimHostname {
				i, ok := groups[at.g]
				if !ok {
					i = len(prob.Groups)
					groups[at.g] = i
					prob.Groups = append(prob.Groups, bound.Group{PerNode: 1})
				}
				grp = i
				break
			}
		}
		// Classes that differ only in what the bound ignores (labels, preferences) are one.
		li := slices.IndexFunc(lists, func(l []int) bool { return slices.Equal(l, types) })
		if li < 0 {
			li = len(lists)
			lists = append(lists, slices.Clone(types))
		}
		k := boundKey{demand: c.requests, group: grp, types: li}
		if i, ok := merged[k]; ok {
			prob.Classes[i].Count += placed
			continue
		}
		merged[k] = len(prob.Classes)
		prob.Classes = append(prob.Classes, bound.Class{Count: placed, Demand: c.requests, Types: lists[li], Group: grp})
		keys = append(keys, li)
	}
	return &prob, keys
}

type boundKey struct {
	demand scheduling.Resources
	group  int
	types  int // index of the type list
}

// hardCompatTarget is compatTarget with the required node affinity only.
func (s *solve) hardCompatTarget(c *class, t *target) bool {
	saved := c.active
	c.active = c.alts
	ok := s.checkTarget(c, t)
	c.active = saved
	return ok
}

// boundKnapsackNodes is the branch-and-bound nodes the bound's certificate may spend proving one
// knapsack (bound.KnapsackNodes; the package's default is 2,000). The solver's problems have
// knapsacks of many pods under group caps (hostname anti-affinity, spreads), which 2,000 nodes
// leave unproven: on SolveAWS/mix=spread the bound was $7.08/h where the configuration LP's
// optimum, proven with more, is $7.40 (the plan $7.71). It costs milliseconds there; a run of
// `tenon plan` may spend up to twice this per certificate.
const boundKnapsackNodes = 100_000

// RelaxationCounting is BoundStats.Relaxation when the counting bounds on every pod's exact
// request (the joint cover of all resources) proved more than the LPs on merged rows.
const RelaxationCounting = "every request exact, the joint cover of all resources"

// maxBoundClasses caps the classes of the bound's LP: beyond it, classes of like shape are
// merged with their requests rounded down (relaxations).
const maxBoundClasses = 96

// relaxation is a way of rounding the bound's classes down onto a grid: every request on
// steps per doubling (gridSteps), or, with only ≥ 0, that resource alone on steps and every
// other request above gridExact dropped.
type relaxation struct {
	steps, only int
}

func (x relaxation) round(d scheduling.Resources) scheduling.Resources {
	for i, v := range d {
		switch {
		case x.only < 0 || i == x.only:
			d[i] = roundDown(v, x.steps)
		case v > gridExact:
			d[i] = 0
		}
	}
	return d
}

// String names the relaxation for Plan.Bound.
func (x relaxation) String() string {
	if x.steps == 0 {
		return "exact"
	}
	if x.only < 0 {
		return fmt.Sprintf("requests rounded down, %d steps per doubling", x.steps)
	}
	return fmt.Sprintf("%s rounded down, %d steps per doubling; other requests dropped", scheduling.ResourceNameAt(x.only), x.steps)
}

// relaxations are the problems whose bounds, all valid, the bound takes the best of: the
// problem itself when it has at most maxBoundClasses classes; else its classes merged with
// every request rounded down onto the finest grid that leaves at most that many, and, for
// each resource the pods ask much of, that resource alone on the finest grid that leaves at
// most that many (a fine grid on the resource that decides the price beats a coarse one on
// all). Rounding down, or dropping a request, only relaxes the problem.
func relaxations(prob *bound.Problem, keys []int) ([]relaxation, [][]bound.Class) {
	if len(prob.Classes) <= maxBoundClasses {
		return []relaxation{{}}, [][]bound.Class{prob.Classes}
	}
	var big [scheduling.NumResources]bool
	for _, c := range prob.Classes {
		for i, v := range c.Demand {
			big[i] = big[i] || v > gridExact
		}
	}
	var xs []relaxation
	var out [][]bound.Class
	finest := func(only int) {
		for _, st := range gridSteps[1:] {
			x := relaxation{steps: st, only: only}
			if cls, ok := merge(prob.Classes, keys, x); ok || st == gridSteps[len(gridSteps)-1] {
				xs, out = append(xs, x), append(out, cls)
				return
			}
		}
	}
	finest(-1)
	for i := range big {
		if big[i] {
			finest(i)
		}
	}
	return xs, out
}

// merge is the classes rounded by x, like ones merged; false when more than maxBoundClasses
// remain (it stops counting there).
func merge(classes []bound.Class, keys []int, x relaxation) ([]bound.Class, bool) {
	type key struct {
		demand scheduling.Resources
		group  int
		types  int
	}
	var out []bound.Class
	index := map[key]int{}
	for i, c := range classes {
		k := key{demand: x.round(c.Demand), group: c.Group, types: keys[i]}
		if j, ok := index[k]; ok {
			out[j].Count += c.Count
			continue
		}
		if len(out) == maxBoundClasses {
			return out, false
		}
		index[k] = len(out)
		out = append(out, bound.Class{Count: c.Count, Demand: k.demand, Types: c.Types, Group: c.Group})
	}
	return out, true
}

// roundingLoss is the share of the demand the relaxed classes lost against orig, in the
// resource the relaxation keeps that lost most.
func (x relaxation) roundingLoss(orig, relaxed []bound.Class) float64 {
	var real, kept [scheduling.NumResources]float64
	for _, c := range orig {
		for i, d := range c.Demand {
			real[i] += float64(c.Count) * float64(d)
		}
	}
	for _, c := range relaxed {
		for i, d := range c.Demand {
			kept[i] += float64(c.Count) * float64(d)
		}
	}
	loss := 0.0
	for i := range real {
		if real[i] > 0 && kept[i] > 0 {
			loss = max(loss, 1-kept[i]/real[i])
		}
	}
	return loss
}

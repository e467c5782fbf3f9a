package solver

import (
	"fmt"

	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver/bound"
)

// lowerBound proves a floor under the price of new capacity for the pods the plan placed: a
// packing problem with every pool type (at its cheapest offer, and reserved offers as
// count-limited types), the free room of existing nodes as free count-1 types, and the placed
// pods under their hard constraints only (preferences are dropped, so the floor holds for any
// plan kube-scheduler would accept).
func (s *solve) lowerBound() float64 {
	prob := s.boundProblem()
	if len(prob.Classes) == 0 {
		return 0
	}
	var opts []bound.Option
	if s.opts.BoundIterations > 0 {
		opts = append(opts, bound.MaxIterations(s.opts.BoundIterations))
	}
	return bound.Lower(prob, opts...).Value
}

// boundProblem builds the packing problem whose optimum no plan can beat.
func (s *solve) boundProblem() *bound.Problem {
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
	for _, c := range s.classes {
		placed := c.placed
		if placed == 0 {
			continue
		}
		var types []int
		seen := map[int]bool{}
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
		k := boundKey{demand: c.requests, group: grp, types: fmt.Sprint(types)}
		if i, ok := merged[k]; ok {
			prob.Classes[i].Count += placed
			continue
		}
		merged[k] = len(prob.Classes)
		prob.Classes = append(prob.Classes, bound.Class{Count: placed, Demand: c.requests, Types: types, Group: grp})
	}
	return &prob
}

type boundKey struct {
	demand scheduling.Resources
	group  int
	types  string
}

// hardCompatTarget is compatTarget with the required node affinity only.
func (s *solve) hardCompatTarget(c *class, t *target) bool {
	saved := c.active
	c.active = c.alts
	ok := s.checkTarget(c, t)
	c.active = saved
	return ok
}

package solver

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Independent parts. Pods that can share nothing cannot change where each other go: the solve
// splits the pending pods into components and solves each on its own (first-fit, the guided
// packing, the repair, and the choice between them), so that one part's choice of plan does not
// decide another's. Two classes are in one component when they may use the same NodePool, the
// same existing node or in-flight claim (judged per node signature), the same topology group
// (a spread, pod affinity or anti-affinity term, or a term that selects them), or NodePools that
// draw on the same reservation. NodePool limits, DaemonSets and minValues are per pool and so
// inside a component.

// minPartGuideRows is the fewest rows a part's guide LP may have (a part's share of
// maxGuideClasses, by its pods, otherwise).
const minPartGuideRows = 16

// maxComponentChecks caps the class × node-signature checks the split may make; past it the
// solve stays whole (a deterministic count, not a time).
const maxComponentChecks = 1 << 18

// components returns the pending pods split into independent parts, each in the order of
// s.pending, ordered by their first pod; nil when there is at most one part. Classes that can
// use nothing (invalid, or no pool and no node takes them) form one part of their own.
func (s *solve) components() [][]*corev1.Pod {
	if len(s.classes) < 2 {
		return nil
	}
	nsig := 0
	for _, t := range s.targets {
		nsig = max(nsig, t.sig+1)
	}
	if len(s.classes)*max(nsig, 1) > maxComponentChecks {
		return nil
	}
	nc, np := len(s.classes), len(s.pools)
	sigBase := nc + np
	groups := map[*group]int{}
	resv := map[int]int{}
	// Node ids: classes, pools, node signatures, then groups and reservations as met, and one
	// for the classes that can use nothing.
	uf := newUnionFind(sigBase + nsig + 1)
	none := sigBase + nsig
	node := func(m map[*group]int, g *group) int {
		if i, ok := m[g]; ok {
			return i
		}
		i := uf.add()
		m[g] = i
		return i
	}
	for pi, p := range s.pools {
		if p.reason != nil {
			continue
		}
		for _, t := range p.types {
			for _, o := range t.offers {
				if o.resv < 0 {
					continue
				}
				r, ok := resv[o.resv]
				if !ok {
					r = uf.add()
					resv[o.resv] = r
				}
				uf.union(nc+pi, r)
			}
		}
	}
	var seen []bool
	if nsig > 0 {
		seen = make([]bool, nsig)
	}
	for ci, c := range s.classes {
		linked := false
		if c.invalid == nil {
			for pi, p := range s.pools {
				// A preferred node-affinity term may keep a class off a pool until it is
				// relaxed: its required terms alone decide.
				if p.reason == nil && (c.poolReason[pi] == nil || c.required != nil && slices.ContainsFunc(c.required[pi], func(a *altInPool) bool { return a != nil })) {
					uf.union(ci, nc+pi)
					linked = true
				}
			}
			clear(seen)
			for _, t := range s.targets {
				if seen[t.sig] {
					continue
				}
				if c.nodeSpecific || s.hardCompatTarget(c, t) {
					// A class that names nodes is judged by signature too, conservatively:
					// every node of a signature it might use links it.
					seen[t.sig] = true
					uf.union(ci, sigBase+t.sig)
					linked = true
				}
			}
			for _, g := range c.matches {
				uf.union(ci, node(groups, g))
				linked = true
			}
			for _, g := range c.owned {
				uf.union(ci, node(groups, g))
				linked = true
			}
			for _, st := range c.spreads {
				uf.union(ci, node(groups, st.g))
				linked = true
			}
			for _, at := range c.affinity {
				uf.union(ci, node(groups, at.g))
				linked = true
			}
			for _, at := range c.anti {
				uf.union(ci, node(groups, at.g))
				linked = true
			}
		}
		if !linked {
			uf.union(ci, none)
		}
	}
	root := uf.find(0)
	one := true
	for ci := 1; ci < nc && one; ci++ {
		one = uf.find(ci) == root
	}
	if one {
		return nil
	}
	// Number the parts by their first pod in s.pending.
	classOf := make(map[*corev1.Pod]int, len(s.pending))
	for ci, c := range s.classes {
		for _, pod := range c.pods {
			classOf[pod] = ci
		}
	}
	part := map[int]int{}
	var parts [][]*corev1.Pod
	for _, pod := range s.pending {
		ci, ok := classOf[pod]
		if !ok {
			return nil // every pending pod is in a class; stay whole if not
		}
		root := uf.find(ci)
		k, ok := part[root]
		if !ok {
			k = len(parts)
			part[root] = k
			parts = append(parts, nil)
		}
		parts[k] = append(parts[k], pod)
	}
	if len(parts) < 2 {
		return nil
	}
	return parts
}

// unionFind is a disjoint-set forest with path halving and union by size.
type unionFind struct{ parent, size []int }

func newUnionFind(n int) *unionFind {
	u := &unionFind{parent: make([]int, n), size: make([]int, n)}
	for i := range u.parent {
		u.parent[i], u.size[i] = i, 1
	}
	return u
}

func (u *unionFind) add() int {
	u.parent = append(u.parent, len(u.parent))
	u.size = append(u.size, 1)
	return len(u.parent) - 1
}

func (u *unionFind) find(x int) int {
	for u.parent[x] != x {
		u.parent[x] = u.parent[u.parent[x]]
		x = u.parent[x]
	}
	return x
}

func (u *unionFind) union(a, b int) {
	a, b = u.find(a), u.find(b)
	if a == b {
		return
	}
	if u.size[a] < u.size[b] || u.size[a] == u.size[b] && b < a {
		a, b = b, a
	}
	u.parent[b] = a
	u.size[a] += u.size[b]
}

// mergePlans joins the plans of independent parts, in order, into one: their placements,
// claims and unschedulable pods one after the other, prices, bounds and counts summed. The
// bound of the whole is the sum of the parts' bounds: the parts share no capacity, so any plan
// for the whole is a plan for each part.
func mergePlans(parts []*Plan) *Plan {
	out := &Plan{}
	exact := true
	for _, p := range parts {
		out.Placements = append(out.Placements, p.Placements...)
		out.Claims = append(out.Claims, p.Claims...)
		out.Unschedulable = append(out.Unschedulable, p.Unschedulable...)
		out.Price += p.Price
		out.LowerBound += p.LowerBound
		out.Relaxed += p.Relaxed
		out.Repaired += p.Repaired
		g := &out.Guide
		g.Classes += p.Guide.Classes
		g.Rows += p.Guide.Rows
		g.GridSteps = max(g.GridSteps, p.Guide.GridSteps)
		g.RoundingLoss = max(g.RoundingLoss, p.Guide.RoundingLoss)
		g.Work += p.Guide.Work
		g.Budget += p.Guide.Budget
		g.Stopped = g.Stopped || p.Guide.Stopped
		g.Price += p.Guide.Price
		g.Won = g.Won || p.Guide.Won
		g.Attempts = max(g.Attempts, p.Guide.Attempts)
		b := &out.Bound
		exact = exact && p.Bound.Exact
		b.Iterations = max(b.Iterations, p.Bound.Iterations)
		b.Work += p.Bound.Work
		b.Stopped = b.Stopped || p.Bound.Stopped
		b.Classes += p.Bound.Classes
		b.Rows += p.Bound.Rows
		b.RoundingLoss = max(b.RoundingLoss, p.Bound.RoundingLoss)
		if b.Relaxation == "" {
			b.Relaxation = p.Bound.Relaxation
		} else if p.Bound.Relaxation != "" && p.Bound.Relaxation != b.Relaxation {
			b.Relaxation = "mixed"
		}
	}
	out.Bound.Exact = exact
	return out
}

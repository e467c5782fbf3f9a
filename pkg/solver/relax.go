package solver

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// A preference is a soft constraint the solver enforces as if it were hard until the class
// cannot be placed: a preferred node-affinity term, a preferred pod (anti-)affinity term, or a
// ScheduleAnyway topology spread.
type preference struct {
	weight int32
	order  int // kind order for equal weights: spreads, pod affinity, anti-affinity, node affinity
	set    func(bool)
}

func (s *solve) preferences(c *class) []preference {
	var out []preference
	for _, at := range c.affinity {
		if at.weight > 0 && at.active {
			at := at
			out = append(out, preference{weight: at.weight, order: 0, set: func(on bool) { at.active = on }})
		}
	}
	for _, at := range c.anti {
		if at.weight > 0 && at.active {
			at := at
			out = append(out, preference{weight: at.weight, order: 1, set: func(on bool) { at.active = on }})
		}
	}
	if c.pref < len(c.prefs) {
		cur := c.pref
		out = append(out, preference{weight: c.prefs[cur].Weight, order: 2, set: func(on bool) {
			if on {
				c.pref = cur
			} else {
				c.pref = cur + 1
			}
			s.refresh(c)
		}})
	}
	for _, st := range c.spreads {
		if !st.hard && st.active {
			st := st
			out = append(out, preference{weight: 0, order: 3, set: func(on bool) { st.active = on }})
		}
	}
	if c.honourMatched {
		for _, g := range c.matches {
			if g.kind == kindSpread && g.maxSkew > 0 && !c.ownsSpread(g) {
				out = append(out, preference{weight: 0, order: 4, set: func(on bool) { c.honourMatched = on }})
				break
			}
		}
	}
	if c.countPlanned {
		for _, st := range c.spreads {
			if st.active && st.self {
				out = append(out, preference{weight: 0, order: 5, set: func(on bool) { c.countPlanned = on }})
				break
			}
		}
	}
	// Pod affinity, then anti-affinity, then node affinity, then ScheduleAnyway spreads, then
	// the skews of groups the class is only counted by, then its own spreads' counts of pods
	// that do not carry them; within a kind the
	// heaviest first, since the heaviest preference is the likeliest to be the one that cannot
	// hold for every pod.
	slices.SortStableFunc(out, func(a, b preference) int {
		if x := cmp.Compare(a.order, b.order); x != 0 {
			return x
		}
		return cmp.Compare(b.weight, a.weight)
	})
	return out
}

// relax drops one preference of a class that could not be placed: the first (in the order of
// preferences) whose removal alone lets a pod be placed, or else the first. It reports whether
// anything was dropped.
func (s *solve) relax(c *class) bool {
	prefs := s.preferences(c)
	if len(prefs) == 0 {
		return false
	}
	if c.relaxedFrom < 0 {
		c.relaxedFrom = c.next
	}
	for _, p := range prefs {
		p.set(false)
		ok := s.canPlace(c)
		if ok {
			return true
		}
		p.set(true)
	}
	prefs[0].set(false)
	return true
}

// refresh recompiles what depends on the class's enforced node-affinity preference.
func (s *solve) refresh(c *class) {
	c.active = c.activeAlts()
	c.sigCompat = nil
	c.eligibleCache = nil
	s.compileForPools(c)
}

// canPlace reports whether one more pod of the class could be placed anywhere, without placing
// it.
func (s *solve) canPlace(c *class) bool {
	s.dry = true
	defer func() { s.dry = false }()
	c.dims = s.constrainedDims(c)
	D := -1
	if len(c.dims) > 0 {
		D = c.dims[0]
	}
	try := func(d, v int) bool {
		for _, t := range s.targets {
			if (d < 0 || t.domain(s, d) == v) && s.tryTarget(c, t, 1) > 0 {
				return true
			}
		}
		for _, cl := range s.claims {
			if s.tryClaim(c, cl, 1, d, v) > 0 {
				return true
			}
		}
		if s.openClaim(c, d, v, 1) != nil {
			return true
		}
		s.force = true
		defer func() { s.force = false }()
		for _, cl := range s.claims {
			if s.tryClaim(c, cl, 1, d, v) > 0 {
				return true
			}
		}
		return false
	}
	if D < 0 {
		return try(-1, -1)
	}
	for _, v := range s.eligible(c, D) {
		if s.domainCap(c, D, v) > 0 && try(D, v) {
			return true
		}
	}
	return false
}

// reasons explains why the rest of a class could not be placed, one reason per pool.
func (s *solve) reasons(c *class) []Reason {
	if len(s.pools) == 0 {
		return []Reason{{Kind: ReasonNoNodePool}}
	}
	var out []Reason
	for pi, p := range s.pools {
		if r := c.poolReason[pi]; r != nil {
			out = append(out, *r)
			continue
		}
		switch {
		case p.nodesLeft == 0:
			out = append(out, Reason{Kind: ReasonLimits, NodePool: p.name(), Detail: "no nodes left under limits.nodes"})
		case s.blockedByLimits(c, p):
			out = append(out, Reason{Kind: ReasonLimits, NodePool: p.name(), Detail: "no instance type that holds the pod fits in what the limits leave"})
		case len(c.hostPorts) > 0 && s.hostPortsOnly(c):
			out = append(out, Reason{Kind: ReasonHostPort, NodePool: p.name(), Detail: fmt.Sprint(c.hostPorts)})
		default:
			out = append(out, Reason{Kind: ReasonTopology, NodePool: p.name(), Detail: s.describeTerms(c)})
		}
	}
	return out
}

func (s *solve) blockedByLimits(c *class, p *pool) bool {
	for _, a := range c.compiled[p.index] {
		if a == nil {
			continue
		}
		for ti := a.types.Next(0); ti >= 0; ti = a.types.Next(ti + 1) {
			t := p.types[ti]
			if fitCount(c.requests, t.alloc) > 0 && p.withinLimits(nil, &t.capacity) {
				return false
			}
		}
	}
	return true
}

// hostPortsOnly reports whether the class has no topology terms, so host ports are the only
// constraint left to blame.
func (s *solve) hostPortsOnly(c *class) bool {
	return len(c.spreads) == 0 && len(c.affinity) == 0 && len(c.anti) == 0
}

func (s *solve) describeTerms(c *class) string {
	var parts []string
	for _, st := range c.spreads {
		if st.active {
			parts = append(parts, fmt.Sprintf("topology spread on %s (maxSkew %d)", s.topo.describe(st.g), st.maxSkew))
		}
	}
	for _, at := range c.affinity {
		if at.active {
			parts = append(parts, "pod affinity on "+s.topo.describe(at.g))
		}
	}
	for _, at := range c.anti {
		if at.active {
			parts = append(parts, "pod anti-affinity on "+s.topo.describe(at.g))
		}
	}
	for _, g := range c.matches {
		if g.kind == kindAnti && len(g.owners) > 0 {
			parts = append(parts, "anti-affinity of running pods on "+s.topo.describe(g))
		}
	}
	if len(parts) == 0 {
		return "no node or new claim can hold the pod"
	}
	return "cannot satisfy " + joinComma(parts)
}

func joinComma(parts []string) string {
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += ", "
		}
		out += p
	}
	return out
}

// giveUp reports the class's remaining pods as unschedulable.
func (s *solve) giveUp(c *class, reasons []Reason) {
	for _, pod := range c.skip(c.remaining()) {
		s.unschedulable = append(s.unschedulable, Unschedulable{Pod: pod, Reasons: reasons})
	}
}

// take marks the next n pods of the class as placed and returns them.
func (c *class) take(n int) []*corev1.Pod {
	c.placed += n
	return c.skip(n)
}

// skip marks the next n pods of the class as handled without placing them.
func (c *class) skip(n int) []*corev1.Pod {
	pods := c.pods[c.next : c.next+n]
	c.next += n
	return pods
}

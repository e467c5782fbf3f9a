package disruption

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tenon-sh/tenon/pkg/solver"
)

// A PodGroup whose disruption mode is All (spec.disruptionMode.all) may only be disrupted
// whole: evicting part of a training job stops all of it, while its other nodes keep costing.
// The nodes running its pods form a unit: every method takes the unit's nodes in one command or
// leaves them all, and the budgets count them together. Units are closed under sharing: two such
// groups with pods on one node make a single unit of all their nodes.

// linkUnits sets unit, group and outside on the candidates that run pods of the snapshot's
// WholeGroups.
func (d *decider) linkUnits() {
	if len(d.snap.WholeGroups) == 0 {
		return
	}
	whole := map[string]bool{}
	for _, g := range d.snap.WholeGroups {
		whole[g] = true
	}
	// parent is a union-find over candidate names; first is, per group, the first candidate
	// seen with its pods; outside, per group, a node with its pods that tenon does not manage.
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		if p := parent[x]; p != x {
			parent[x] = find(p)
		}
		return parent[x]
	}
	first, outside := map[string]string{}, map[string]string{}
	var groups []string
	for i := range d.snap.Solver.Nodes {
		n := &d.snap.Solver.Nodes[i]
		c := d.byName[n.Name]
		for _, p := range n.Pods {
			g := solver.GangOf(p)
			if !whole[g] {
				continue
			}
			if c == nil {
				if outside[g] == "" {
					outside[g] = n.Name
				}
				continue
			}
			if _, ok := parent[c.Name]; !ok {
				parent[c.Name] = c.Name
			}
			if f, ok := first[g]; ok {
				parent[find(c.Name)] = find(f)
			} else {
				first[g] = c.Name
				groups = append(groups, g)
			}
		}
	}
	slices.Sort(groups)
	units := map[string]*unit{}
	for _, g := range groups {
		root := find(first[g])
		u := units[root]
		if u == nil {
			u = &unit{}
			units[root] = u
		}
		u.groups = append(u.groups, g)
		if u.outside == "" && outside[g] != "" {
			u.outside, u.outsideGroup = outside[g], g
		}
	}
	for _, c := range d.cands {
		if _, ok := parent[c.Name]; !ok {
			continue
		}
		u := units[find(c.Name)]
		u.nodes = append(u.nodes, c)
		c.unit = u
	}
}

// unit is the set of nodes running the pods of PodGroups disrupted only whole.
type unit struct {
	nodes  []*candidate // in the snapshot's order
	groups []string     // the PodGroups (namespace/name) that link them, sorted
	// outside is a node running pods of outsideGroup that tenon does not manage: the unit
	// cannot be disrupted whole, so it is not disrupted.
	outside, outsideGroup string
}

// whole returns the nodes that must go with c: its unit's, or c alone.
func (c *candidate) whole() []*candidate {
	if c.unit == nil {
		return []*candidate{c}
	}
	return c.unit.nodes
}

// names says which PodGroups hold the unit together.
func (u *unit) names() string {
	return "podgroup " + strings.Join(u.groups, ", ")
}

// unitBlocked says why c's unit may not be disrupted because of another of its nodes, or "".
// c's own state is blocked's to judge.
func (d *decider) unitBlocked(c *candidate) (SkipReason, string) {
	msg := d.unitHeld(c, "cannot be", func(m *candidate) string {
		_, why := d.blockedAlone(m)
		return why
	})
	if msg == "" {
		return "", ""
	}
	return SkipPodGroup, msg
}

// unitHeld says why c's unit cannot go now because of another of its nodes, or "": the group
// also runs outside tenon, another node is in another command of this pass, or held says why it
// may not go (described as what).
func (d *decider) unitHeld(c *candidate, what string, held func(m *candidate) string) string {
	u := c.unit
	if u == nil {
		return ""
	}
	if u.outside != "" {
		return fmt.Sprintf("podgroup %s is disrupted only whole (disruptionMode All) and also runs on node %s, which tenon does not manage", u.outsideGroup, u.outside)
	}
	for _, m := range u.nodes {
		if m == c {
			continue
		}
		if why := held(m); why != "" {
			return fmt.Sprintf("%s is disrupted only whole (disruptionMode All), and its node %s %s: %s", u.names(), m.Name, what, why)
		}
		if d.taken[m.Name] || d.receiving[m.Name] {
			return fmt.Sprintf("%s is disrupted only whole (disruptionMode All), and its node %s is in another command of this pass", u.names(), m.Name)
		}
	}
	return ""
}

// isUnit reports whether cs are exactly the nodes of one unit.
func isUnit(cs []*candidate) bool {
	u := cs[0].unit
	if u == nil || len(cs) != len(u.nodes) {
		return false
	}
	for _, c := range cs {
		if c.unit != u {
			return false
		}
	}
	return true
}

// splitsUnit names a node that must go with the candidates and is not among them, or "".
func splitsUnit(cs []*candidate) string {
	in := map[*candidate]bool{}
	for _, c := range cs {
		in[c] = true
	}
	for _, c := range cs {
		for _, m := range c.whole() {
			if !in[m] {
				return fmt.Sprintf("%s is disrupted only whole (disruptionMode All), and its node %s is not in the command", c.unit.names(), m.Name)
			}
		}
	}
	return ""
}

// unitUnforceable says why c's unit cannot be replaced by force (expiration) now: another of its
// nodes is going already, not initialized, in another command, or outside tenon; "" when it can.
func (d *decider) unitUnforceable(c *candidate) string {
	return d.unitHeld(c, "cannot be replaced", func(m *candidate) string {
		switch {
		case m.Deleting:
			return "already being deleted"
		case !m.Initialized:
			return "not initialized"
		case m.pool == nil:
			return fmt.Sprintf("nodepool %q does not exist", m.NodePool)
		}
		return ""
	})
}

// wholeUnits keeps, of the nodes eligible for consolidation one by one, those in no unit and
// those whose unit is eligible whole (a node of a unit whose other nodes are not is skipped,
// naming one).
func (d *decider) wholeUnits(eligible []*candidate) []*candidate {
	in := map[*candidate]bool{}
	for _, c := range eligible {
		in[c] = true
	}
	var kept []*candidate
	for _, c := range eligible {
		if c.unit == nil {
			kept = append(kept, c)
			continue
		}
		i := slices.IndexFunc(c.unit.nodes, func(m *candidate) bool { return !in[m] })
		if i < 0 {
			kept = append(kept, c)
			continue
		}
		d.skip(c, SkipPodGroup, "%s is disrupted only whole (disruptionMode All), and its node %s is not a consolidation candidate now", c.unit.names(), c.unit.nodes[i].Name)
	}
	return kept
}

// skipAll records one reason for several nodes.
func (d *decider) skipAll(cs []*candidate, r SkipReason, msg string) {
	for _, c := range cs {
		d.skip(c, r, "%s", msg)
	}
}

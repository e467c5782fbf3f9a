package disruption

import (
	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// reservedRules keeps reserved capacity where it pays: a reserved node is never swapped for
// another reserved node (its near-zero price would make any swap look free), and a reserved node
// holding pods is never consolidated onto capacity that is not reserved.
func (d *decider) reservedRules(cs []*candidate, o *outcome) (SkipReason, string) {
	for _, c := range cs {
		if c.CapacityType != apisv1.CapacityTypeReserved {
			continue
		}
		for _, r := range o.replacements {
			if r.Offering.CapacityType == apisv1.CapacityTypeReserved {
				return SkipReserved, "a reserved node is not swapped for another reserved node"
			}
		}
		if len(c.place) > 0 && !d.onReserved(c, o) {
			return SkipReserved, "a reserved node holding pods is not consolidated onto capacity that is not reserved"
		}
	}
	return "", ""
}

// onReserved reports whether all the node's pods would land on other reserved nodes.
func (d *decider) onReserved(c *candidate, o *outcome) bool {
	moved := map[*corev1.Pod]bool{}
	for _, p := range c.place {
		moved[p] = true
	}
	for _, pl := range o.plan.Placements {
		if !moved[pl.Pod] {
			continue
		}
		if t, ok := d.byName[pl.Node]; !ok || t.CapacityType != apisv1.CapacityTypeReserved {
			return false
		}
	}
	for _, cl := range o.replacements {
		if cl.Offering.CapacityType != apisv1.CapacityTypeReserved {
			return false
		}
	}
	return true
}

func reserved(c *candidate) bool { return c.CapacityType == apisv1.CapacityTypeReserved }

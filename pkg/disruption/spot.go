package disruption

import (
	"fmt"
	"slices"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// spotRules lets a spot node be replaced by spot only when it is old enough and enough instance
// types are cheaper than it, and narrows the replacement to those cheaper types.
func (d *decider) spotRules(cs []*candidate, o *outcome, opts Options) (SkipReason, string) {
	if !opts.SpotToSpotConsolidation && allSpot(cs) && slices.ContainsFunc(o.replacements, func(r *solver.Claim) bool {
		return r.Offering.CapacityType == apisv1.CapacityTypeSpot
	}) {
		return SkipSpotToSpot, "spot-to-spot consolidation is off (feature gate SpotToSpotConsolidation): spot nodes are not replaced by spot"
	}
	if len(cs) != 1 || cs[0].CapacityType != apisv1.CapacityTypeSpot {
		return "", ""
	}
	c := cs[0]
	for _, r := range o.replacements {
		if r.Offering.CapacityType != apisv1.CapacityTypeSpot {
			continue
		}
		if age := d.snap.Now.Sub(c.CreatedAt); age < opts.SpotToSpotMinAge {
			return SkipSpotToSpotTooNew, fmt.Sprintf("spot-to-spot waits until the node is %s old (it is %s)", opts.SpotToSpotMinAge, age.Round(1e9))
		}
		cheaper := 0
		q := catalog.NewQuery(r.Requirements)
		for _, it := range r.InstanceTypes {
			if i := q.CheapestOffered(it); i >= 0 && it.Offerings[i].Price < c.Price {
				cheaper++
			}
		}
		if cheaper < opts.SpotToSpotMinInstanceTypes {
			return SkipSpotToSpot, fmt.Sprintf("spot-to-spot needs %d instance types cheaper than the node, %d are", opts.SpotToSpotMinInstanceTypes, cheaper)
		}
		truncateCheaper(r, c.Price)
	}
	return "", ""
}

// spotFloor applies spotRules before a solve, from the pods of a spot node that no other node
// has room for (homeless): each lands on a replacement whose instance type holds it. When no type
// that is not spot holds one of them for less than the node, its replacement is spot or no
// cheaper than the node, and spot needs the feature gate and enough cheaper types holding it.
func (d *decider) spotFloor(cs []*candidate, homeless []scheduling.Resources, opts Options) (SkipReason, string) {
	if !spotFloors(cs) {
		return "", ""
	}
	price := cs[0].Price
	for i := range homeless {
		h := &homeless[i]
		if d.world.prep.TypesHolding(h, price, true, 1) > 0 {
			continue
		}
		if !opts.SpotToSpotConsolidation {
			return SkipSpotToSpot, "spot-to-spot consolidation is off (feature gate SpotToSpotConsolidation): only spot capacity cheaper than the node holds its pods"
		}
		if n := d.world.prep.TypesHolding(h, price, false, opts.SpotToSpotMinInstanceTypes); n < opts.SpotToSpotMinInstanceTypes {
			return SkipSpotToSpot, fmt.Sprintf("spot-to-spot needs %d instance types cheaper than the node, at most %d hold its pods", opts.SpotToSpotMinInstanceTypes, n)
		}
	}
	return "", ""
}

// spotFloors reports whether spotFloor judges a set of candidates: one spot node.
func spotFloors(cs []*candidate) bool {
	return len(cs) == 1 && cs[0].CapacityType == apisv1.CapacityTypeSpot
}

func allSpot(cs []*candidate) bool {
	return !slices.ContainsFunc(cs, func(c *candidate) bool { return c.CapacityType != apisv1.CapacityTypeSpot })
}

// truncateCheaper keeps only the options of a spot replacement that are cheaper than the node
// it replaces, so that the launch cannot land on something dearer.
func truncateCheaper(r *solver.Claim, price float64) {
	r.Narrow(func(_ *catalog.InstanceType, p float64) bool { return p < price })
}

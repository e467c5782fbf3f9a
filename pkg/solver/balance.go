package solver

import (
	"cmp"
	"slices"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// balanceZones pins the new claims of the pools with a ZoneMaxSkew to zones, in plan order, so
// that the pool's nodes stay balanced across the zones it can launch in. A claim whose pods
// already confine it to one zone (a spread, a volume, a zone selector) keeps it and counts
// there; a claim on reserved capacity is left as it is (its reservation decides). Any other
// claim goes to the cheapest of its zones where one more node keeps the most and least filled
// zones within ZoneMaxSkew nodes of each other, or, when none does, to its least filled zone
// (the cheapest among equals). The pool's existing nodes and claims in flight count, except
// excluded ones. Pinning only narrows a claim's requirements: every pod on it still fits.
func balanceZones(plan *Plan, snap *Snapshot, excluded map[string]bool) {
	for i := range snap.NodePools {
		pool := &snap.NodePools[i]
		if pool.ZoneMaxSkew <= 0 {
			continue
		}
		count := poolZones(pool)
		if len(count) < 2 {
			continue
		}
		for _, n := range snap.Nodes {
			if n.NodePool != pool.Name || n.MarkedForDeletion || excluded[n.Name] {
				continue
			}
			if z, ok := n.Labels[apisv1.LabelZone]; ok {
				if _, in := count[z]; in {
					count[z]++
				}
			}
		}
		var claims []*Claim
		for _, c := range plan.Claims {
			if c.NodePool == pool.Name {
				claims = append(claims, c)
			}
		}
		// Claims with no choice count first, so the others balance around them.
		var free []*Claim
		for _, c := range claims {
			zones := claimZones(c)
			if len(zones) == 1 || c.Offering.CapacityType == apisv1.CapacityTypeReserved {
				if _, in := count[c.Offering.Zone]; in {
					count[c.Offering.Zone]++
				}
				continue
			}
			free = append(free, c)
		}
		for _, c := range free {
			before := c.Price
			if z := pickZone(c, count, pool.ZoneMaxSkew); z != "" {
				count[z]++
				plan.Price += c.Price - before
			}
		}
	}
}

// poolZones returns the zones the pool can launch in (a usable offering of a type it allows),
// each with a count of zero.
func poolZones(pool *NodePool) map[string]int {
	q := catalog.NewQuery(pool.Requirements)
	out := map[string]int{}
	for _, it := range pool.InstanceTypes {
		if !q.TypeMatches(it) {
			continue
		}
		for j := range it.Offerings {
			if o := &it.Offerings[j]; o.Usable() && q.OfferingMatches(o) {
				out[o.Zone] = 0
			}
		}
	}
	return out
}

// claimZones returns the zones a claim's options can launch in under its requirements, sorted.
func claimZones(c *Claim) []string {
	q := catalog.NewQuery(c.Requirements)
	var out []string
	for _, it := range c.InstanceTypes {
		for j := range it.Offerings {
			if o := &it.Offerings[j]; o.Usable() && q.OfferingMatches(o) && !slices.Contains(out, o.Zone) {
				out = append(out, o.Zone)
			}
		}
	}
	slices.Sort(out)
	return out
}

// pickZone pins c to the zone balance asks for and returns it ("" when c is left as it was).
func pickZone(c *Claim, count map[string]int, maxSkew int) string {
	type choice struct {
		zone  string
		price float64
		after int // the skew with one more node there
	}
	var choices []choice
	for _, z := range claimZones(c) {
		if _, in := count[z]; !in {
			continue
		}
		price, ok := cheapestIn(c, z)
		if !ok {
			continue
		}
		count[z]++
		choices = append(choices, choice{zone: z, price: price, after: skew(count)})
		count[z]--
	}
	if len(choices) == 0 {
		return ""
	}
	slices.SortStableFunc(choices, func(a, b choice) int {
		aOK, bOK := a.after <= maxSkew, b.after <= maxSkew
		switch {
		case aOK && !bOK:
			return -1
		case bOK && !aOK:
			return 1
		case !aOK: // neither keeps the skew: the least filled zone
			if x := cmp.Compare(count[a.zone], count[b.zone]); x != 0 {
				return x
			}
		}
		return cmp.Or(cmp.Compare(a.price, b.price), cmp.Compare(a.zone, b.zone))
	})
	z := choices[0].zone
	saved := *c
	c.Requirements = c.Requirements.Add(scheduling.In(apisv1.LabelZone, z))
	if !c.Narrow(func(*catalog.InstanceType, float64) bool { return true }) || c.Offering.CapacityType == apisv1.CapacityTypeReserved {
		*c = saved
		return ""
	}
	return z
}

// cheapestIn returns the price of c's cheapest usable offering in zone z that is not reserved.
func cheapestIn(c *Claim, z string) (float64, bool) {
	q := catalog.NewQuery(c.Requirements.Add(scheduling.In(apisv1.LabelZone, z)))
	best, ok := 0.0, false
	for _, it := range c.InstanceTypes {
		for j := range it.Offerings {
			o := &it.Offerings[j]
			if o.Usable() && o.CapacityType != apisv1.CapacityTypeReserved && q.OfferingMatches(o) && (!ok || o.Price < best) {
				best, ok = o.Price, true
			}
		}
	}
	return best, ok
}

// skew is the most filled zone's count less the least filled one's.
func skew(count map[string]int) int {
	lo, hi, first := 0, 0, true
	for _, n := range count {
		if first {
			lo, hi, first = n, n, false
			continue
		}
		lo, hi = min(lo, n), max(hi, n)
	}
	return hi - lo
}

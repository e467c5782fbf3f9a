package solver

import (
	"cmp"
	"maps"
	"math/bits"
	"slices"
	"strings"

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
		if len(count) < 2 || len(count) > 64 {
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
		m := newOfferingMemo(count)
		// Claims with no choice count first, so the others balance around them.
		var free []*Claim
		var options []zoneOptions
		for _, c := range plan.Claims {
			if c.NodePool != pool.Name {
				continue
			}
			zo := m.claimZones(c)
			if bits.OnesCount64(zo.any) <= 1 || c.Offering.CapacityType == apisv1.CapacityTypeReserved {
				if _, in := count[c.Offering.Zone]; in {
					count[c.Offering.Zone]++
				}
				continue
			}
			free = append(free, c)
			options = append(options, zo)
		}
		for i, c := range free {
			before := c.Price
			if z := m.pickZone(c, options[i], count, pool.ZoneMaxSkew); z != "" {
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

// offeringMemo holds a pool's zones by index and, by the requirements a claim puts on the keys
// offerings decide, each type's offerings those requirements allow with their zone's index:
// the claims of one pool mostly share those requirements.
type offeringMemo struct {
	zones  []string
	zoneID map[string]int
	byKey  map[string]map[*catalog.InstanceType][]allowedOffering
}

type allowedOffering struct{ o, zone int }

func newOfferingMemo(count map[string]int) *offeringMemo {
	m := &offeringMemo{zoneID: map[string]int{}, byKey: map[string]map[*catalog.InstanceType][]allowedOffering{}}
	m.zones = slices.Sorted(maps.Keys(count))
	for i, z := range m.zones {
		m.zoneID[z] = i
	}
	return m
}

var offeringKeys = []string{apisv1.LabelZone, apisv1.LabelTopologyZoneID, apisv1.CapacityTypeLabelKey, apisv1.LabelCapacityReservationID}

// zoneOptions is, for one claim, the zones its options can launch in (bit z of any for the
// pool's zone z), each with the cheapest usable offering there that is not reserved.
type zoneOptions struct {
	any  uint64
	best []zoneBest // by zone index
	// in[t] has bit z set when option t has an offering in zone z.
	in []uint64
}

type zoneBest struct {
	t, o  int // t < 0: no offering there that is not reserved
	price float64
}

// claimZones reads the zones of a claim's options under its requirements.
func (m *offeringMemo) claimZones(c *Claim) zoneOptions {
	var key strings.Builder
	sub := scheduling.Requirements{}
	for _, k := range offeringKeys {
		if r, ok := c.Requirements.Get(k); ok {
			key.WriteString(r.String())
			sub = sub.Add(r)
		}
		key.WriteByte(0)
	}
	byType := m.byKey[key.String()]
	if byType == nil {
		byType = map[*catalog.InstanceType][]allowedOffering{}
		m.byKey[key.String()] = byType
	}
	var q *catalog.Query
	zo := zoneOptions{best: make([]zoneBest, len(m.zones)), in: make([]uint64, len(c.InstanceTypes))}
	for z := range zo.best {
		zo.best[z].t = -1
	}
	for t, it := range c.InstanceTypes {
		offs, ok := byType[it]
		if !ok {
			if q == nil {
				q = catalog.NewQuery(sub)
			}
			offs = []allowedOffering{}
			for j := range it.Offerings {
				o := &it.Offerings[j]
				if z, known := m.zoneID[o.Zone]; known && o.Usable() && q.OfferingMatches(o) {
					offs = append(offs, allowedOffering{o: j, zone: z})
				}
			}
			byType[it] = offs
		}
		for _, a := range offs {
			zo.in[t] |= 1 << a.zone
			o := &it.Offerings[a.o]
			if b := &zo.best[a.zone]; o.CapacityType != apisv1.CapacityTypeReserved && (b.t < 0 || o.Price < b.price) {
				*b = zoneBest{t: t, o: a.o, price: o.Price}
			}
		}
		zo.any |= zo.in[t]
	}
	return zo
}

// pickZone pins c to the zone balance asks for and returns it ("" when c is left as it was).
func (m *offeringMemo) pickZone(c *Claim, zo zoneOptions, count map[string]int, maxSkew int) string {
	type choice struct {
		z     int
		price float64
		after int // the skew with one more node there
	}
	var choices []choice
	for z, name := range m.zones {
		if zo.best[z].t < 0 {
			continue
		}
		count[name]++
		choices = append(choices, choice{z: z, price: zo.best[z].price, after: skew(count)})
		count[name]--
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
			if x := cmp.Compare(count[m.zones[a.z]], count[m.zones[b.z]]); x != 0 {
				return x
			}
		}
		return cmp.Or(cmp.Compare(a.price, b.price), cmp.Compare(a.z, b.z))
	})
	z := choices[0].z
	reqs := c.Requirements.Add(scheduling.In(apisv1.LabelZone, m.zones[z]))
	var kept []*catalog.InstanceType
	for t, it := range c.InstanceTypes {
		if zo.in[t]&(1<<z) != 0 {
			kept = append(kept, it)
		}
	}
	if !keepsMinValues(reqs, kept) {
		return ""
	}
	b := zo.best[z]
	best := c.InstanceTypes[b.t]
	c.Requirements, c.InstanceTypes = reqs, kept
	c.InstanceType, c.Offering, c.Price = best, best.Offerings[b.o], best.Offerings[b.o].Price
	return m.zones[z]
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

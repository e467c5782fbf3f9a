package solver

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// Capacity-type slots in offering masks.
const (
	ctSpot = iota
	ctOnDemand
	ctReserved
	numCT
)

// maxZones is how many distinct zones a snapshot may span: offering masks are one 64-bit word of
// zone × capacity-type bits.
const maxZones = 64 / numCT

var ctNames = [numCT]string{apisv1.CapacityTypeSpot, apisv1.CapacityTypeOnDemand, apisv1.CapacityTypeReserved}

func ctIndex(name string) int {
	for i, n := range ctNames {
		if n == name {
			return i
		}
	}
	return -1
}

// offeringKey reports whether an offering, not the instance type, decides key.
func offeringKey(key string) bool {
	switch key {
	case apisv1.LabelZone, apisv1.LabelTopologyZoneID, apisv1.CapacityTypeLabelKey, apisv1.LabelCapacityReservationID:
		return true
	}
	return false
}

// zoneMask and ctMask are sets of zone and capacity-type indices.
type (
	zoneMask uint32
	ctMask   uint8
)

const (
	allZones zoneMask = 1<<maxZones - 1
	allCTs   ctMask   = 1<<numCT - 1
)

// offerBits returns the zone × capacity-type bits of the product of zs and cs.
func offerBits(zs zoneMask, cs ctMask) uint64 {
	var out uint64
	for z := 0; zs != 0; z, zs = z+1, zs>>1 {
		if zs&1 != 0 {
			out |= uint64(cs) << (z * numCT)
		}
	}
	return out
}

// offer is one usable offering of a type, compiled.
type offer struct {
	zone, ct int
	price    float64
	resv     int // index into the solve's reservation table, or -1
	index    int // in InstanceType.Offerings
}

// ptype is an instance type as one pool sees it.
type ptype struct {
	it       *catalog.InstanceType
	capacity scheduling.Resources
	// alloc is what pending pods may use: allocatable minus the pool's DaemonSet overhead (ds),
	// never negative: a type its DaemonSets do not fit is not offered at all.
	alloc scheduling.Resources
	ds    scheduling.Resources
	// dsPorts are the host ports the DaemonSets bind on nodes of this type, with the
	// DaemonSet that binds each (dsPortOwner[i] indexes solve.daemons).
	dsPorts     []scheduling.HostPort
	dsPortOwner []int
	// offers are the usable offerings the pool allows, cheapest first.
	offers []offer
	// bits has zone*numCT+ct set for every offer.
	bits uint64
}

// cheapest returns the cheapest offer within bits allowed by mask, honouring reservation
// capacity, or nil.
func (t *ptype) cheapest(mask uint64, resv []int) *offer {
	if t.bits&mask == 0 {
		return nil
	}
	for i := range t.offers {
		o := &t.offers[i]
		if mask&(1<<(o.zone*numCT+o.ct)) == 0 || (o.resv >= 0 && resv[o.resv] <= 0) {
			continue
		}
		return o
	}
	return nil
}

// keyIndex answers "which of the pool's types allow this requirement" for one label key that
// instance types decide.
type keyIndex struct {
	key    string
	values []string
	sets   []scheduling.Bitset // types whose label has values[i]
	absent scheduling.Bitset   // types without the label
	free   scheduling.Bitset   // types that do not decide the key
}

func (ki *keyIndex) match(r scheduling.Requirement) scheduling.Bitset {
	out := scheduling.NewBitset(len(ki.absent) * 64)
	for i, v := range ki.values {
		if r.Has(v) {
			out.Or(ki.sets[i])
		}
	}
	if r.AllowsAbsent() {
		out.Or(ki.absent)
	}
	if !r.IsEmpty() {
		out.Or(ki.free)
	}
	return out
}

// pool is a NodePool compiled for one solve.
type pool struct {
	index int
	np    *NodePool
	// reqs are the template's requirements with the pool label and template labels folded in;
	// residual keeps the keys neither types nor offerings decide.
	reqs     scheduling.Requirements
	residual scheduling.Requirements
	zones    zoneMask
	cts      ctMask
	types    []*ptype // compatible types with a usable offering that hold its DaemonSets, cheapest first
	maxAlloc scheduling.Resources
	// dsPorts says whether some type's DaemonSets bind host ports.
	dsPorts bool
	keys    []keyIndex
	taints  []corev1.Taint
	// remaining is what the limits still allow; limited says which slots apply.
	remaining scheduling.Resources
	limited   [scheduling.NumResources]bool
	nodesLeft int // negative: unlimited
	// reason is set when the pool can launch nothing at all.
	reason *Reason
	// minValues are the requirements that ask for minValues distinct values of a type key.
	minValues []minValue
	// larger[ti] is the first type after ti with more allocatable in some resource (see
	// largerTypes): a walk over the types for one that holds a request skips to it.
	larger []int32
	// fits indexes the types' allocatable in the indexed resources, in price order: the
	// cheapest types that may hold a request are found without walking the smaller ones
	// (cheapestFitting).
	fits slotTree
}

func (p *pool) name() string { return p.np.Name }

// typeSet returns the bitset of the pool's types that allow every requirement of reqs on keys
// the types decide; the requirement that empties it, if any, is returned too.
func (p *pool) typeSet(reqs scheduling.Requirements) (scheduling.Bitset, *scheduling.Requirement) {
	set := scheduling.FullBitset(len(p.types))
	for i := range p.keys {
		ki := &p.keys[i]
		r, ok := reqs.Get(ki.key)
		if !ok {
			continue
		}
		set.And(ki.match(r))
		if set.IsEmpty() {
			return set, &r
		}
	}
	return set, nil
}

// compilePool builds a pool from a NodePool: keeps the instance types compatible with its
// requirements that have a usable offering and room for the DaemonSets that would run on them,
// orders them by price, and computes DaemonSet overhead per type.
func (s *solve) compilePool(index int, np *NodePool) *pool {
	p := &pool{index: index, np: np, taints: np.Taints, nodesLeft: -1}
	reqs := np.Requirements.Add(scheduling.In(apisv1.NodePoolLabelKey, np.Name))
	for k, v := range np.Labels {
		reqs = reqs.Add(scheduling.In(k, v))
	}
	p.reqs = reqs
	p.zones, p.cts = s.offeringMasks(reqs)
	for i, r := range reqs.Items() {
		if s.typeKeys[r.Key] || offeringKey(r.Key) {
			continue
		}
		p.residual = p.residual.Add(reqs.Items()[i])
	}
	if !reqs.IsSatisfiable() {
		for _, r := range reqs.Items() {
			if r.IsEmpty() {
				p.reason = &Reason{Kind: ReasonRequirement, NodePool: np.Name, Key: r.Key, Requirement: r.String(), Detail: "itself"}
				break
			}
		}
		return p
	}
	// Limits.
	for i := range np.Limits {
		if np.HasLimit[i] {
			p.limited[i] = true
			p.remaining[i] = scheduling.SatSub(np.Limits[i], np.Usage[i])
		}
	}
	if np.NodeLimit >= 0 {
		p.nodesLeft = max(0, np.NodeLimit-np.Nodes)
	}
	// Types.
	mask := offerBits(p.zones, p.cts)
	q := catalog.NewQuery(np.Requirements)
	dsTooBig, dsExample := 0, (*ptype)(nil)
	for _, it := range np.InstanceTypes {
		if !q.TypeMatches(it) {
			continue
		}
		t := &ptype{it: it, capacity: it.Capacity}
		for oi := range it.Offerings {
			o := &it.Offerings[oi]
			z, ok := s.zoneIndex[o.Zone]
			ct := ctIndex(o.CapacityType)
			if !ok || ct < 0 || !o.Usable() || !q.OfferingMatches(o) {
				continue
			}
			bit := uint64(1) << (z*numCT + ct)
			if mask&bit == 0 {
				continue
			}
			resv := -1
			if ct == ctReserved {
				resv = s.reservation(it.Name, o)
			}
			t.offers = append(t.offers, offer{zone: z, ct: ct, price: o.Price, resv: resv, index: oi})
			t.bits |= bit
		}
		if len(t.offers) == 0 {
			continue
		}
		t.ds, t.dsPorts, t.dsPortOwner = s.daemonOverhead(p, it)
		if alloc := it.Allocatable(); !t.ds.Fits(&alloc) {
			// The pool's DaemonSets alone overfill the type: a node of it could hold no pod
			// beside them (or not even them), so the pool does not offer it.
			dsTooBig++
			if dsExample == nil || alloc[scheduling.CPU] > dsExample.it.Allocatable()[scheduling.CPU] {
				dsExample = t
			}
			continue
		}
		slices.SortStableFunc(t.offers, func(a, b offer) int { return cmp.Compare(a.price, b.price) })
		t.alloc = it.Allocatable().Sub(t.ds)
		p.dsPorts = p.dsPorts || len(t.dsPorts) > 0
		p.types = append(p.types, t)
	}
	slices.SortStableFunc(p.types, func(a, b *ptype) int {
		if c := cmp.Compare(a.offers[0].price, b.offers[0].price); c != 0 {
			return c
		}
		return strings.Compare(a.it.Name, b.it.Name)
	})
	if len(p.types) == 0 {
		p.reason = &Reason{Kind: ReasonNoOffering, NodePool: np.Name}
		if dsTooBig > 0 {
			p.reason = &Reason{Kind: ReasonDaemonSets, NodePool: np.Name,
				Detail: fmt.Sprintf("%s, more than any of its %d instance types holds (the largest, %s, has %s)", dsExample.ds, dsTooBig, dsExample.it.Name, dsExample.it.Allocatable())}
		}
		return p
	}
	p.keys = s.buildKeyIndex(p.types)
	p.compileMinValues()
	p.maxAlloc = maxAlloc(p, scheduling.FullBitset(len(p.types)))
	p.larger = largerTypes(p.types)
	for ti, t := range p.types {
		p.fits.set(ti, &t.alloc)
	}
	return p
}

// largerTypes is, for each type (by index), the index of the first later type with more
// allocatable than it in some resource (len(types) if none): every type in between has no more
// of anything, so whatever the type cannot hold, none of them can. One pass per resource, with
// a stack of the types still waiting for a larger one.
func largerTypes(types []*ptype) []int32 {
	n := len(types)
	larger := make([]int32, n)
	for i := range larger {
		larger[i] = int32(n)
	}
	stack := make([]int32, 0, n)
	for r := range scheduling.NumResources {
		stack = stack[:0]
		for j := range types {
			for len(stack) > 0 && types[stack[len(stack)-1]].alloc[r] < types[j].alloc[r] {
				i := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				larger[i] = min(larger[i], int32(j))
			}
			stack = append(stack, int32(j))
		}
	}
	return larger
}

// buildKeyIndex indexes every type-decided key over the pool's types.
func (s *solve) buildKeyIndex(types []*ptype) []keyIndex {
	keys := make([]string, 0, len(s.typeKeys))
	for k := range s.typeKeys {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]keyIndex, len(keys))
	index := make(map[string]int, len(keys))
	pos := make([]map[string]int, len(keys))
	for i, k := range keys {
		out[i] = keyIndex{key: k, absent: scheduling.NewBitset(len(types)), free: scheduling.NewBitset(len(types))}
		index[k] = i
		pos[i] = map[string]int{}
	}
	// One pass over each type's requirements (rather than a look-up per key and type); a key
	// the type has no requirement on leaves it free.
	found := make([]bool, len(keys))
	for ti, t := range types {
		clear(found)
		for _, r := range t.it.Requirements.Items() {
			i, ok := index[r.Key]
			if !ok {
				continue
			}
			found[i] = true
			ki := &out[i]
			switch {
			case r.IsComplement():
				ki.free.Set(ti)
			case len(r.Values()) == 0:
				ki.absent.Set(ti)
			default:
				for _, v := range r.Values() {
					vi, seen := pos[i][v]
					if !seen {
						vi = len(ki.values)
						pos[i][v] = vi
						ki.values = append(ki.values, v)
						ki.sets = append(ki.sets, scheduling.NewBitset(len(types)))
					}
					ki.sets[vi].Set(ti)
				}
			}
		}
		for i, f := range found {
			if !f {
				out[i].free.Set(ti)
			}
		}
	}
	return out
}

// offeringMasks compiles requirements on the zone, zone-ID and capacity-type keys into masks.
func (s *solve) offeringMasks(reqs scheduling.Requirements) (zoneMask, ctMask) {
	zones, cts := allZones, allCTs
	if r, ok := reqs.Get(apisv1.LabelZone); ok {
		var m zoneMask
		for i, z := range s.zones {
			if r.Has(z) {
				m |= 1 << i
			}
		}
		zones &= m
	}
	if r, ok := reqs.Get(apisv1.LabelTopologyZoneID); ok {
		var m zoneMask
		for i, id := range s.zoneIDs {
			if id != "" && r.Has(id) {
				m |= 1 << i
			}
		}
		zones &= m
	}
	if r, ok := reqs.Get(apisv1.CapacityTypeLabelKey); ok {
		var m ctMask
		for i, n := range ctNames {
			if r.Has(n) {
				m |= 1 << i
			}
		}
		cts &= m
	}
	if r, ok := reqs.Get(apisv1.LabelCapacityReservationID); ok && !r.AllowsAbsent() {
		// Only reserved offerings carry a reservation ID.
		cts &= 1 << ctReserved
	} else if ok && !r.AllowsSomeValue() {
		cts &^= 1 << ctReserved
	}
	return zones, cts
}

// daemonOverhead sums the requests of the DaemonSets that would run on a node of type it in
// pool p (those whose pods tolerate the pool's taints and whose node requirements are
// compatible with the pool's and the type's), saturating, and lists the host ports they bind
// with the index of the DaemonSet binding each.
func (s *solve) daemonOverhead(p *pool, it *catalog.InstanceType) (scheduling.Resources, []scheduling.HostPort, []int) {
	var total scheduling.Resources
	var ports []scheduling.HostPort
	var owners []int
	for i := range s.daemons {
		d := &s.daemons[i]
		if scheduling.UntoleratedTaint(d.tolerations, p.taints) != nil {
			continue
		}
		node := p.reqs.Intersect(it.Requirements)
		ok := false
		for _, alt := range d.alts {
			if scheduling.Compatible(node, alt, scheduling.AllowUndefinedWellKnown) == nil {
				ok = true
				break
			}
		}
		if ok {
			total = total.Add(d.requests)
			for _, hp := range d.ports {
				ports = append(ports, hp)
				owners = append(owners, i)
			}
		}
	}
	return total, ports, owners
}

// describeMask formats the zones and capacity types a mask allows, for reasons.
func (s *solve) describeMask(zs zoneMask, cs ctMask) string {
	var zones, cts []string
	for i, z := range s.zones {
		if zs&(1<<i) != 0 {
			zones = append(zones, z)
		}
	}
	for i, n := range ctNames {
		if cs&(1<<i) != 0 {
			cts = append(cts, n)
		}
	}
	return fmt.Sprintf("zones %v, capacity types %v", zones, cts)
}

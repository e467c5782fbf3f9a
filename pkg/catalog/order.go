package catalog

import (
	"cmp"
	"slices"
	"strings"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// MaxInstanceTypes is how many instance-type options a new claim carries by default: the cheapest
// ones. It bounds the size of NodeClaims and of the launch request.
const MaxInstanceTypes = 600

// offeringKeys are the labels an offering, not its type, decides.
var offeringKeys = [...]string{
	apisv1.LabelZone, apisv1.LabelTopologyZoneID, apisv1.CapacityTypeLabelKey, apisv1.LabelCapacityReservationID,
}

// Query is requirements compiled for judging many instance types and offerings against them.
//
// A type matches when scheduling.Compatible(type.Requirements, reqs, ...) holds with every key
// the type leaves undefined treated as free (types from this package define all the catalog's
// labels, so only labels such as a NodePool's own are undefined, and those are the NodePool's
// business). An offering matches when its zone, zone ID, capacity type and reservation ID (absent
// unless reserved) satisfy reqs.
type Query struct {
	reqs     scheduling.Requirements
	offering []scheduling.Requirement // the constrained offering keys only
}

// NewQuery compiles reqs.
func NewQuery(reqs scheduling.Requirements) *Query {
	q := &Query{reqs: reqs}
	for _, k := range offeringKeys {
		if r, ok := reqs.Get(k); ok {
			q.offering = append(q.offering, r)
		}
	}
	return q
}

func undefinedIsFree(string) bool { return true }

// TypeMatches reports whether the type's requirements are compatible with the query's.
func (q *Query) TypeMatches(it *InstanceType) bool {
	return scheduling.Compatible(it.Requirements, q.reqs, undefinedIsFree) == nil
}

// OfferingMatches reports whether offering o satisfies the query's requirements on offering
// labels. It does not look at availability.
func (q *Query) OfferingMatches(o *Offering) bool {
	for i := range q.offering {
		r := &q.offering[i]
		v, present, _ := o.Label(r.Key)
		if !r.Matches(v, present) {
			return false
		}
	}
	return true
}

// Cheapest returns the index in it.Offerings of the cheapest usable offering that the query
// allows (the first of equals), or -1 when there is none or the type does not match.
func (q *Query) Cheapest(it *InstanceType) int {
	if !q.TypeMatches(it) {
		return -1
	}
	return q.CheapestOffered(it)
}

// CheapestOffered is Cheapest for a type already known to match the query's requirements (a
// solver claim's options): only the offerings are looked at.
func (q *Query) CheapestOffered(it *InstanceType) int {
	best := -1
	for i := range it.Offerings {
		o := &it.Offerings[i]
		if !o.Usable() || (best >= 0 && o.Price >= it.Offerings[best].Price) || !q.OfferingMatches(o) {
			continue
		}
		best = i
	}
	return best
}

// CheapestOffering returns the cheapest usable offering of it compatible with reqs.
func (it *InstanceType) CheapestOffering(reqs scheduling.Requirements) (Offering, bool) {
	if i := NewQuery(reqs).Cheapest(it); i >= 0 {
		return it.Offerings[i], true
	}
	return Offering{}, false
}

// Ranked is an instance type with the offering that makes its price.
type Ranked struct {
	Type     *InstanceType
	Offering int // index in Type.Offerings
	Price    float64
}

// Rank returns the types that match reqs and have a usable offering it allows, each with its
// cheapest such offering, cheapest first; equal prices are ordered by name, so the result
// depends only on the input.
func Rank(types []*InstanceType, reqs scheduling.Requirements) []Ranked {
	q := NewQuery(reqs)
	out := make([]Ranked, 0, len(types))
	for _, it := range types {
		if i := q.Cheapest(it); i >= 0 {
			out = append(out, Ranked{Type: it, Offering: i, Price: it.Offerings[i].Price})
		}
	}
	slices.SortFunc(out, func(a, b Ranked) int {
		if c := cmp.Compare(a.Price, b.Price); c != 0 {
			return c
		}
		return strings.Compare(a.Type.Name, b.Type.Name)
	})
	return out
}

// OrderByPrice returns, in a new slice, the types that match reqs and have a usable offering it
// allows, ordered by the price of their cheapest such offering, then by name.
func OrderByPrice(types []*InstanceType, reqs scheduling.Requirements) []*InstanceType {
	ranked := Rank(types, reqs)
	out := make([]*InstanceType, len(ranked))
	for i, r := range ranked {
		out[i] = r.Type
	}
	return out
}

// Truncate keeps the first n of types, which must be in price order (OrderByPrice), so it keeps
// the cheapest n; n ≤ 0 means MaxInstanceTypes. The result shares types' backing array but has
// no spare capacity, so appending to it never overwrites types.
func Truncate(types []*InstanceType, n int) []*InstanceType {
	if n <= 0 {
		n = MaxInstanceTypes
	}
	n = min(n, len(types))
	return types[:n:n]
}

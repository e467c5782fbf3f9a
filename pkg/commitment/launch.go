package commitment

import (
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// Option is an offering of an instance type a launch may take.
type Option struct {
	Type     *catalog.InstanceType
	Offering *catalog.Offering
}

// Pick returns the index of the option a launch takes on the room left: the lowest
// MarginalPrice, the first among equals; -1 when there is none. A batch of launches must pick
// one after another, each on the room the ones before it left (Room of the fleet with them),
// or every launch of the batch takes the same room.
func Pick(room *Room, opts []Option, region string) int {
	best, bestPrice := -1, 0.0
	for i, o := range opts {
		if p := MarginalPrice(room, o.Type, o.Offering, region); best < 0 || p < bestPrice {
			best, bestPrice = i, p
		}
	}
	return best
}

// Options are the offerings a launch may take among the types: usable offerings its
// requirements allow, of types whose allocatable holds need.
func Options(its []*catalog.InstanceType, reqs scheduling.Requirements, need scheduling.Resources) []Option {
	q := catalog.NewQuery(reqs)
	var out []Option
	for _, it := range its {
		if !q.TypeMatches(it) || !need.FitsIn(it.Allocatable()) {
			continue
		}
		for i := range it.Offerings {
			if o := &it.Offerings[i]; o.Usable() && q.OfferingMatches(o) {
				out = append(out, Option{Type: it, Offering: o})
			}
		}
	}
	return out
}

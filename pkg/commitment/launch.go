package commitment

import "github.com/tenon-sh/tenon/pkg/catalog"

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

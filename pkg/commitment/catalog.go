package commitment

import (
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// InstanceOf is an offering of an instance type as the bill sees it, in region ("" unknown).
func InstanceOf(it *catalog.InstanceType, o *catalog.Offering, region string) Instance {
	return Instance{
		Type: it.Name, Family: Family(it.Name), Zone: o.Zone, Region: region,
		OnDemand: o.CapacityType == apisv1.CapacityTypeOnDemand, Price: o.Price,
		Units: Units(it.Name, it.Capacity[scheduling.CPU]/1000),
	}
}

// MarginalPrice is what an offering adds to the bill on the room left, plus its list price /
// catalog.ReservedPriceDivisor so that among offerings adding the same (nothing, while
// covered) the one with the lower list price wins, as among reserved offerings.
func MarginalPrice(room *Room, it *catalog.InstanceType, o *catalog.Offering, region string) float64 {
	return room.Marginal(InstanceOf(it, o, region)) + o.Price/catalog.ReservedPriceDivisor
}

// Reprice returns the types with every on-demand offering at its MarginalPrice on the room.
// The types given are never written: a repriced type is a copy with its own offerings, the
// others are returned as they are.
func Reprice(its []*catalog.InstanceType, room *Room, region string) []*catalog.InstanceType {
	out := make([]*catalog.InstanceType, len(its))
	for i, it := range its {
		out[i] = it
		var offers []catalog.Offering
		for j := range it.Offerings {
			o := &it.Offerings[j]
			if o.CapacityType != apisv1.CapacityTypeOnDemand {
				continue
			}
			if p := MarginalPrice(room, it, o, region); p != o.Price {
				if offers == nil {
					offers = append([]catalog.Offering(nil), it.Offerings...)
				}
				offers[j].Price = p
			}
		}
		if offers != nil {
			cp := *it
			cp.Offerings = offers
			out[i] = &cp
		}
	}
	return out
}

// Find returns the offering of a type in a zone and capacity type (and reservation, for
// reserved capacity), or nil.
func Find(it *catalog.InstanceType, zone, capacityType, reservation string) *catalog.Offering {
	if it == nil {
		return nil
	}
	for i := range it.Offerings {
		o := &it.Offerings[i]
		if o.Zone == zone && o.CapacityType == capacityType && (capacityType != apisv1.CapacityTypeReserved || o.ReservationID == reservation) {
			return o
		}
	}
	return nil
}

package instancetype

import (
	"slices"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// view is one NodeClass's instance types before unavailable offerings are applied.
type view struct {
	types   []*catalog.InstanceType
	dataGen uint64
}

// build makes a NodeClass's types from the region's data: offerings in its zones, priced;
// its reservations; capacity and overhead from its settings.
func (p *Provider) build(d *data, zones []catalog.Zone, s *settings, reserved []reservedOffering) (*view, error) {
	return build(d, zones, s, reserved, p.prices, p.opts.Region)
}

func build(d *data, zones []catalog.Zone, s *settings, reserved []reservedOffering, prices Prices, region string) (*view, error) {
	v := &view{types: make([]*catalog.InstanceType, 0, len(d.types))}
	for i := range d.types {
		td := &d.types[i]
		var offerings []catalog.Offering
		od, odOK := prices.OnDemand(td.name)
		if td.onDemand && odOK {
			for _, z := range zones {
				if offered(td, z.Name) {
					offerings = append(offerings, catalog.Offering{Zone: z.Name, ZoneID: z.ID, CapacityType: apisv1.CapacityTypeOnDemand, Price: od, Available: true})
				}
			}
		}
		if td.spot {
			for _, z := range zones {
				if price, ok := prices.Spot(td.name, z.Name); ok && offered(td, z.Name) {
					offerings = append(offerings, catalog.Offering{Zone: z.Name, ZoneID: z.ID, CapacityType: apisv1.CapacityTypeSpot, Price: price, Available: true})
				}
			}
		}
		for _, r := range reserved {
			if r.instanceType == td.name {
				o := r.offering
				o.Price = od / catalog.ReservedPriceDivisor
				offerings = append(offerings, o)
			}
		}
		it, err := s.instanceType(td, region, offerings)
		if err != nil {
			return nil, err
		}
		v.types = append(v.types, it)
	}
	return v, nil
}

func offered(td *typeData, zone string) bool {
	_, ok := slices.BinarySearch(td.zones, zone)
	return ok
}

// instanceType builds one type with the catalog's builder, then sets its pods and the parts
// of its overhead the kubelet settings decide.
func (s *settings) instanceType(td *typeData, region string, offerings []catalog.Offering) (*catalog.InstanceType, error) {
	volume := s.rootVolume
	if s.raid0 && td.shape.LocalNVMeGB > 0 {
		volume = td.shape.LocalNVMeGB * 1_000_000_000
	}
	pods := s.pods(&td.shape)
	cfg := s.overheadConfig(&td.shape, pods, volume)
	it, err := catalog.NewInstanceType(td.name, region, td.shape, offerings, catalog.WithRootVolume(volume), catalog.WithOverhead(cfg))
	if err != nil {
		return nil, err
	}
	it.Capacity[scheduling.Pods] = pods
	if t := s.evictNodeFS; t.set && !t.percent {
		it.Overhead.EvictionThreshold[scheduling.EphemeralStorage] = t.amount
	}
	return it, nil
}

// apply returns the view's types with the offerings u marks unavailable made so, copying only
// the types that change.
func (v *view) apply(u Unavailable) []*catalog.InstanceType {
	out := slices.Clone(v.types)
	if u == nil {
		return out
	}
	for i, it := range out {
		var offerings []catalog.Offering
		for j := range it.Offerings {
			o := &it.Offerings[j]
			if !o.Available || !u.IsUnavailable(it.Name, o.Zone, o.CapacityType) {
				continue
			}
			if offerings == nil {
				offerings = slices.Clone(it.Offerings)
			}
			offerings[j].Available = false
		}
		if offerings != nil {
			cp := *it
			cp.Offerings = offerings
			out[i] = &cp
		}
	}
	return out
}

package instancetype

import (
	"fmt"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
)

// Embedded returns the instance types an EC2NodeClass gets from the embedded catalog of a
// region, without any API: what tenon plan prices a NodePool that references it with. The
// zones are those of its status.subnets when it has any (a manifest usually has no status),
// else every zone of the region; prices are the catalog's; the kubelet, block-device and
// instance-store settings apply as in List. Reservations are left out: their free capacity is
// only known to EC2.
func Embedded(region string, nc *awsv1.EC2NodeClass) ([]*catalog.InstanceType, error) {
	if nc == nil {
		return nil, fmt.Errorf("instancetype: no EC2NodeClass")
	}
	s, err := parseSettings(nc)
	if err != nil {
		return nil, err
	}
	c, err := catalog.Load(region)
	if err != nil {
		return nil, fmt.Errorf("instancetype: EC2NodeClass %s: %w", nc.Name, err)
	}
	zones := subnetZones(nc)
	for i := range zones {
		if z, ok := c.Zone(zones[i].Name); ok && zones[i].ID == "" {
			zones[i].ID = z.ID
		}
	}
	if len(zones) == 0 {
		zones = c.Zones
	}
	types, err := embeddedData(c.Region)
	if err != nil {
		return nil, err
	}
	v, err := build(&data{types: types, embedded: true}, zones, &s, nil, catalogPricesOf(c), c.Region)
	if err != nil {
		return nil, fmt.Errorf("instancetype: EC2NodeClass %s: %w", nc.Name, err)
	}
	// The simulator draws spot interruptions from the Spot Advisor's figures.
	for _, it := range v.types {
		if ct, ok := c.Get(it.Name); ok {
			it.SpotAdvice = ct.SpotAdvice
		}
	}
	return v.types, nil
}

// catalogPrices prices offerings as a catalog does.
type catalogPrices struct {
	onDemand map[string]float64
	spot     map[[2]string]float64
}

func catalogPricesOf(c *catalog.Catalog) *catalogPrices {
	p := &catalogPrices{onDemand: map[string]float64{}, spot: map[[2]string]float64{}}
	for _, it := range c.Types {
		if v, ok := it.OnDemandPrice(); ok {
			p.onDemand[it.Name] = v
		}
		for _, o := range it.Offerings {
			if o.CapacityType == apisv1.CapacityTypeSpot {
				p.spot[[2]string{it.Name, o.Zone}] = o.Price
			}
		}
	}
	return p
}

func (p *catalogPrices) OnDemand(t string) (float64, bool) { v, ok := p.onDemand[t]; return v, ok }
func (p *catalogPrices) Spot(t, z string) (float64, bool) {
	v, ok := p.spot[[2]string{t, z}]
	return v, ok
}
func (p *catalogPrices) Generation() uint64 { return 0 }

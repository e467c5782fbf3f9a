package aws

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
)

// CatalogTypes serves InstanceTypes from the embedded catalog: the region's types, offered in
// the zones of the NodeClass's status subnets, with its status capacity reservations as
// reserved offerings (one free instance each: the status does not say how many are free).
// It is the offline stand-in for the instancetype package's Provider, which reads the EC2 and
// Pricing APIs. Catalogs are built once per distinct (zones, reservations).
type CatalogTypes struct {
	Region string
	// VMMemoryOverheadPercent, when above zero, replaces the catalog's fraction of memory lost
	// to the hypervisor (0.075).
	VMMemoryOverheadPercent float64

	mu    sync.Mutex
	cache map[string][]*catalog.InstanceType
}

// List returns the instance types for nc.
func (c *CatalogTypes) List(_ context.Context, nc *awsv1.EC2NodeClass) ([]*catalog.InstanceType, error) {
	var zones []string
	for _, sn := range nc.Status.Subnets {
		if !slices.Contains(zones, sn.Zone) {
			zones = append(zones, sn.Zone)
		}
	}
	slices.Sort(zones)
	var rs []catalog.Reservation
	for _, cr := range nc.Status.CapacityReservations {
		if cr.State == awsv1.CapacityReservationStateExpiring {
			continue
		}
		r := catalog.Reservation{ID: cr.ID, InstanceType: cr.InstanceType, Zone: cr.AvailabilityZone, Count: 1}
		if cr.ReservationType == awsv1.CapacityReservationTypeCapacityBlock && cr.EndTime != nil {
			r.Window = catalog.Window{End: cr.EndTime.Time}
		}
		rs = append(rs, r)
	}
	key, _ := json.Marshal(struct {
		Zones        []string
		Reservations []catalog.Reservation
	}{zones, rs})
	c.mu.Lock()
	defer c.mu.Unlock()
	if types, ok := c.cache[string(key)]; ok {
		return slices.Clone(types), nil
	}
	opts := []catalog.Option{catalog.WithZones(zones...)}
	if len(rs) > 0 {
		opts = append(opts, catalog.WithReservations(rs...))
	}
	if c.VMMemoryOverheadPercent > 0 {
		oc := catalog.DefaultOverheadConfig()
		oc.VMMemoryOverheadPercent = c.VMMemoryOverheadPercent
		opts = append(opts, catalog.WithOverhead(oc))
	}
	cat, err := catalog.Load(c.Region, opts...)
	if err != nil {
		return nil, fmt.Errorf("EC2NodeClass %s: the embedded catalog of %s: %w", nc.Name, c.Region, err)
	}
	if c.cache == nil {
		c.cache = map[string][]*catalog.InstanceType{}
	}
	c.cache[string(key)] = cat.Types
	return slices.Clone(cat.Types), nil
}

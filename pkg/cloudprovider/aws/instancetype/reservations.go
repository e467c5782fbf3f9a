package instancetype

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/pricing"
)

// reservedOffering is a NodeClass's reservation as an offering of its type, unpriced.
type reservedOffering struct {
	instanceType string
	offering     catalog.Offering
}

// reservationEntry is what EC2 last said about a reservation's free capacity.
type reservationEntry struct {
	available int
	at        time.Time
}

// reservationCache holds reservations' free capacity; gen changes whenever one does.
type reservationCache struct {
	entries map[string]reservationEntry
	gen     uint64
}

// reservations returns the NodeClass's active reservations as offerings in its subnets'
// zones, with their free capacity from DescribeCapacityReservations (cached for
// ReservationTTL; while EC2 cannot be reached, the last known figure, or none).
func (p *Provider) reservations(ctx context.Context, nc *awsv1.EC2NodeClass) ([]reservedOffering, uint64, error) {
	zones := subnetZones(nc)
	var active []awsv1.CapacityReservation
	for _, r := range nc.Status.CapacityReservations {
		if r.State != "" && r.State != awsv1.CapacityReservationStateActive {
			continue
		}
		if !slices.ContainsFunc(zones, func(z catalog.Zone) bool { return z.Name == r.AvailabilityZone }) {
			continue // no subnet to launch it in
		}
		active = append(active, r)
	}
	if len(active) == 0 {
		return nil, 0, nil
	}
	if err := p.refreshReservations(ctx, active); err != nil {
		return nil, 0, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]reservedOffering, 0, len(active))
	for _, r := range active {
		z := zones[slices.IndexFunc(zones, func(z catalog.Zone) bool { return z.Name == r.AvailabilityZone })]
		n := p.res.entries[r.ID].available
		o := catalog.Offering{
			Zone: z.Name, ZoneID: z.ID, CapacityType: apisv1.CapacityTypeReserved,
			Available: n > 0, ReservationID: r.ID, ReservationCapacity: n,
		}
		if r.ReservationType == awsv1.CapacityReservationTypeCapacityBlock && r.EndTime != nil {
			o.Window.End = r.EndTime.Time
		}
		out = append(out, reservedOffering{instanceType: r.InstanceType, offering: o})
	}
	return out, p.res.gen, nil
}

// refreshReservations describes the reservations whose figures are missing or older than
// ReservationTTL, in one paginated call.
func (p *Provider) refreshReservations(ctx context.Context, rs []awsv1.CapacityReservation) error {
	now := p.opts.Clock.Now()
	var stale []string
	p.mu.Lock()
	for _, r := range rs {
		if e, ok := p.res.entries[r.ID]; !ok || now.Sub(e.at) >= p.opts.ReservationTTL {
			stale = append(stale, r.ID)
		}
	}
	p.mu.Unlock()
	if len(stale) == 0 {
		return nil
	}
	got := map[string]int{}
	pages := ec2.NewDescribeCapacityReservationsPaginator(p.ec2, &ec2.DescribeCapacityReservationsInput{CapacityReservationIds: stale})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			if pricing.IsUnreachable(err) {
				// Keep the last figures (unknown ones count as no capacity) and ask again
				// after ReservationTTL, not on every List.
				p.mu.Lock()
				for _, id := range stale {
					p.res.entries[id] = reservationEntry{available: p.res.entries[id].available, at: now}
				}
				p.mu.Unlock()
				return nil
			}
			return fmt.Errorf("instancetype: DescribeCapacityReservations: %w", err)
		}
		for _, r := range page.CapacityReservations {
			n := int(aws.ToInt32(r.AvailableInstanceCount))
			if r.State != "active" {
				n = 0
			}
			got[aws.ToString(r.CapacityReservationId)] = n
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, id := range stale {
		n := got[id] // a reservation EC2 no longer returns has no capacity
		if e, ok := p.res.entries[id]; !ok || e.available != n {
			p.res.gen++
		}
		p.res.entries[id] = reservationEntry{available: n, at: now}
	}
	return nil
}

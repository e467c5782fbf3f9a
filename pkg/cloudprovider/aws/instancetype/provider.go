package instancetype

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/pricing"
)

// Defaults of Options.
const (
	// DefaultTTL is how long DescribeInstanceTypes and DescribeInstanceTypeOfferings results
	// are used before they are fetched again (Karpenter's AWS provider: 5 minutes).
	DefaultTTL = 5 * time.Minute
	// DefaultReservationTTL is how long a capacity reservation's free capacity is used before
	// it is described again.
	DefaultReservationTTL = time.Minute
	// DefaultRetryInterval is how long, while EC2 cannot be reached, List serves what it has
	// before it tries the API again.
	DefaultRetryInterval = 30 * time.Second
)

// EC2API is the part of the EC2 client the provider calls (*ec2.Client).
type EC2API interface {
	ec2.DescribeInstanceTypesAPIClient
	ec2.DescribeInstanceTypeOfferingsAPIClient
	ec2.DescribeCapacityReservationsAPIClient
}

// Prices prices offerings (*pricing.Provider). Generation changes whenever a price does.
type Prices interface {
	OnDemand(instanceType string) (float64, bool)
	Spot(instanceType, zone string) (float64, bool)
	Generation() uint64
}

var _ Prices = (*pricing.Provider)(nil)

// Unavailable says which offerings recently failed for want of capacity
// (*cloudprovider.UnavailableOfferings).
type Unavailable interface {
	IsUnavailable(instanceType, zone, capacityType string) bool
}

// Options configure New. Zero fields take the defaults named on each.
type Options struct {
	// Region is the region's name, for the region label (default catalog.DefaultRegion), and
	// the embedded catalog served while EC2 cannot be reached.
	Region string
	// Unavailable marks offerings unavailable (default none).
	Unavailable Unavailable
	// TTL, ReservationTTL and RetryInterval: see DefaultTTL, DefaultReservationTTL and
	// DefaultRetryInterval.
	TTL            time.Duration
	ReservationTTL time.Duration
	RetryInterval  time.Duration
	// Clock ages the caches (default the real clock).
	Clock clock.PassiveClock
	// Logger hears when EC2 becomes unreachable and reachable again (default discards).
	Logger logr.Logger
	// VMMemoryOverheadPercent, when above zero, is the fraction (0.075 is 7.5%) of memory lost
	// to the hypervisor, instead of the catalog's default (--vm-memory-overhead-percent).
	VMMemoryOverheadPercent float64
}

func (o Options) withDefaults() Options {
	if o.Region == "" {
		o.Region = catalog.DefaultRegion
	}
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.ReservationTTL <= 0 {
		o.ReservationTTL = DefaultReservationTTL
	}
	if o.RetryInterval <= 0 {
		o.RetryInterval = DefaultRetryInterval
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	return o
}

// Provider lists instance types per EC2NodeClass. It is safe for concurrent use.
type Provider struct {
	ec2    EC2API
	prices Prices
	opts   Options

	// fetchMu serialises fetches, so that concurrent Lists on a stale cache make one set of
	// calls between them.
	fetchMu sync.Mutex

	mu          sync.Mutex
	data        *data
	fetchedAt   time.Time // when data was fetched (or last found unreachable)
	unreachable bool      // the latest fetch could not reach EC2
	gen         uint64
	views       map[string]*view
	res         reservationCache
}

// New returns a provider over an EC2 client, pricing offerings from prices.
func New(client EC2API, prices Prices, opts Options) (*Provider, error) {
	if client == nil || prices == nil {
		return nil, fmt.Errorf("instancetype: an EC2 client and prices are required")
	}
	return &Provider{ec2: client, prices: prices, opts: opts.withDefaults(), views: map[string]*view{}, res: reservationCache{entries: map[string]reservationEntry{}}}, nil
}

// List returns the instance types the NodeClass may launch: every type of the region, with
// offerings in the zones of its status.subnets (on-demand and spot where the type is offered
// and priced there, reserved per active reservation of status.capacityReservations), and
// capacity and overhead from its kubelet settings. The slice is new on every call; the types
// are shared and must not be modified.
func (p *Provider) List(ctx context.Context, nc *awsv1.EC2NodeClass) ([]*catalog.InstanceType, error) {
	if nc == nil {
		return nil, fmt.Errorf("instancetype: no EC2NodeClass")
	}
	zones := subnetZones(nc)
	if len(zones) == 0 {
		return nil, fmt.Errorf("instancetype: EC2NodeClass %s has no resolved subnets", nc.Name)
	}
	s, err := parseSettings(nc)
	if err != nil {
		return nil, err
	}
	s.vmMemoryOverhead = p.opts.VMMemoryOverheadPercent
	d, err := p.current(ctx)
	if err != nil {
		return nil, err
	}
	reserved, resGen, err := p.reservations(ctx, nc)
	if err != nil {
		return nil, err
	}
	key, err := viewKey(d.gen, p.prices.Generation(), resGen, zones, nc)
	if err != nil {
		return nil, fmt.Errorf("instancetype: EC2NodeClass %s: %w", nc.Name, err)
	}
	p.mu.Lock()
	v := p.views[key]
	p.mu.Unlock()
	if v == nil {
		v, err = p.build(d, zones, &s, reserved)
		if err != nil {
			return nil, fmt.Errorf("instancetype: EC2NodeClass %s: %w", nc.Name, err)
		}
		p.mu.Lock()
		p.keepView(key, v, d.gen)
		p.mu.Unlock()
	}
	return v.apply(p.opts.Unavailable), nil
}

// current returns the region's data, fetching it when older than the TTL. While EC2 cannot be
// reached it keeps what it has (the embedded catalog's when it has nothing) and tries again
// after RetryInterval.
func (p *Provider) current(ctx context.Context) (*data, error) {
	if d := p.fresh(); d != nil {
		return d, nil
	}
	p.fetchMu.Lock()
	defer p.fetchMu.Unlock()
	if d := p.fresh(); d != nil {
		return d, nil
	}
	types, err := p.fetch(ctx)
	now := p.opts.Clock.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil {
		if p.unreachable {
			p.opts.Logger.Info("EC2 is reachable again; instance types come from DescribeInstanceTypes", "region", p.opts.Region, "count", len(types))
		}
		p.gen++
		p.data, p.fetchedAt, p.unreachable = &data{types: types, gen: p.gen}, now, false
		return p.data, nil
	}
	if !pricing.IsUnreachable(err) {
		return nil, err
	}
	if p.data == nil {
		types, eerr := embeddedData(p.opts.Region)
		if eerr != nil {
			return nil, fmt.Errorf("%w (and no embedded catalog for the region: %v)", err, eerr)
		}
		p.gen++
		p.data = &data{types: types, gen: p.gen, embedded: true}
	}
	if !p.unreachable {
		what := "the instance types it last described"
		if p.data.embedded {
			what = "the embedded catalog's instance types"
		}
		p.opts.Logger.Error(err, "EC2 cannot be reached; serving "+what, "region", p.opts.Region)
	}
	p.unreachable, p.fetchedAt = true, now
	return p.data, nil
}

// fresh returns the data when it needs no fetch.
func (p *Provider) fresh() *data {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.data == nil {
		return nil
	}
	ttl := p.opts.TTL
	if p.unreachable {
		ttl = p.opts.RetryInterval
	}
	if p.opts.Clock.Since(p.fetchedAt) < ttl {
		return p.data
	}
	return nil
}

// keepView caches a view, dropping views built from older data. Callers hold mu.
func (p *Provider) keepView(key string, v *view, gen uint64) {
	for k, old := range p.views {
		if old.dataGen != gen || len(p.views) >= maxViews {
			delete(p.views, k)
		}
	}
	v.dataGen = gen
	p.views[key] = v
}

// maxViews bounds the per-NodeClass cache: more distinct NodeClasses than this rebuild.
const maxViews = 64

// subnetZones are the zones of the NodeClass's subnets, once each, sorted by name.
func subnetZones(nc *awsv1.EC2NodeClass) []catalog.Zone {
	var zones []catalog.Zone
	for _, s := range nc.Status.Subnets {
		if s.Zone == "" || slices.ContainsFunc(zones, func(z catalog.Zone) bool { return z.Name == s.Zone }) {
			continue
		}
		zones = append(zones, catalog.Zone{Name: s.Zone, ID: s.ZoneID})
	}
	slices.SortFunc(zones, func(a, b catalog.Zone) int { return strings.Compare(a.Name, b.Name) })
	return zones
}

// viewKey names what a NodeClass's types depend on: the data, prices and reservation
// capacity generations, the zones, and the spec fields and reservations that shape them.
func viewKey(dataGen, priceGen, resGen uint64, zones []catalog.Zone, nc *awsv1.EC2NodeClass) (string, error) {
	spec := struct {
		Family       string
		Kubelet      *awsv1.KubeletConfiguration
		BDMs         []*awsv1.BlockDeviceMapping
		Store        *awsv1.InstanceStorePolicy
		Zones        []catalog.Zone
		Reservations []awsv1.CapacityReservation
	}{nc.AMIFamily(), nc.Spec.Kubelet, nc.Spec.BlockDeviceMappings, nc.Spec.InstanceStorePolicy, zones, nc.Status.CapacityReservations}
	b, err := json.Marshal(spec)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d/%d/%d/%s", dataGen, priceGen, resGen, b), nil
}

package pricing

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
)

// Defaults of Options.
const (
	// DefaultRefreshInterval is how often prices are refreshed after a success (Karpenter's
	// AWS provider refreshes every 12 hours).
	DefaultRefreshInterval = 12 * time.Hour
	// DefaultRetryInterval is how soon a failed refresh is tried again.
	DefaultRetryInterval = time.Minute
)

// PricingAPI is the part of the Pricing client the provider calls (*pricing.Client).
type PricingAPI interface {
	pricing.GetProductsAPIClient
}

// SpotAPI is the part of the EC2 client the provider calls (*ec2.Client).
type SpotAPI interface {
	ec2.DescribeSpotPriceHistoryAPIClient
}

// Options configure New. Zero fields take the defaults named on each.
type Options struct {
	// Region is the region priced (default catalog.DefaultRegion). The embedded prices of a
	// region the embedded catalog does not cover are us-east-1's.
	Region string
	// IsolatedVPC skips the Pricing API: on-demand prices stay the embedded ones.
	IsolatedVPC bool
	// RefreshInterval is how often Start refreshes after a success (DefaultRefreshInterval);
	// RetryInterval how soon after a failure (DefaultRetryInterval).
	RefreshInterval time.Duration
	RetryInterval   time.Duration
	// Clock times Start's refreshes and stamps spot queries (default the real clock).
	Clock clock.WithTicker
	// Logger hears each change of where prices come from (default discards).
	Logger logr.Logger
}

func (o Options) withDefaults() Options {
	if o.Region == "" {
		o.Region = catalog.DefaultRegion
	}
	if o.RefreshInterval <= 0 {
		o.RefreshInterval = DefaultRefreshInterval
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

// Source says where a kind of price currently comes from.
type Source int

const (
	// SourceEmbedded: the catalog embedded in the binary (no refresh has succeeded yet, or the
	// isolated-VPC option skips the Pricing API).
	SourceEmbedded Source = iota
	// SourceAPI: the last successful refresh, and the latest refresh succeeded.
	SourceAPI
	// SourceAPIStale: the last successful refresh, but the latest one failed.
	SourceAPIStale
)

func (s Source) String() string {
	switch s {
	case SourceAPI:
		return "api"
	case SourceAPIStale:
		return "api (stale)"
	}
	return "embedded"
}

type spotKey struct{ instanceType, zone string }

// book is one kind of price and where it comes from.
type book[K comparable] struct {
	prices map[K]float64
	source Source
	failed bool // the latest refresh failed (for logging transitions once)
}

// Provider holds the prices. It is safe for concurrent use.
type Provider struct {
	pricing PricingAPI
	ec2     SpotAPI
	opts    Options

	mu         sync.RWMutex
	onDemand   book[string]
	spot       book[spotKey]
	generation uint64
}

// New returns a provider holding the embedded prices of opts.Region. pricingAPI may be nil
// when opts.IsolatedVPC is set.
func New(pricingAPI PricingAPI, spotAPI SpotAPI, opts Options) (*Provider, error) {
	opts = opts.withDefaults()
	if pricingAPI == nil && !opts.IsolatedVPC {
		return nil, fmt.Errorf("pricing: no Pricing API client (set IsolatedVPC to run without one)")
	}
	if spotAPI == nil {
		return nil, fmt.Errorf("pricing: no EC2 client")
	}
	od, spot, err := embeddedPrices(opts.Region)
	if err != nil {
		return nil, err
	}
	p := &Provider{pricing: pricingAPI, ec2: spotAPI, opts: opts}
	p.onDemand = book[string]{prices: od}
	p.spot = book[spotKey]{prices: spot}
	why := "until the first refresh"
	if opts.IsolatedVPC {
		why = "for on-demand (isolated VPC: the Pricing API is not called) and for spot until the first refresh"
	}
	opts.Logger.Info("using the embedded catalog's prices "+why, "region", opts.Region)
	return p, nil
}

// embeddedPrices are the embedded catalog's on-demand prices by type and spot prices by type
// and zone.
func embeddedPrices(region string) (map[string]float64, map[spotKey]float64, error) {
	if !contains(catalog.Regions(), region) {
		region = catalog.DefaultRegion
	}
	c, err := catalog.Load(region)
	if err != nil {
		return nil, nil, fmt.Errorf("pricing: %w", err)
	}
	od := make(map[string]float64, len(c.Types))
	spot := make(map[spotKey]float64, 4*len(c.Types))
	for _, it := range c.Types {
		if price, ok := it.OnDemandPrice(); ok {
			od[it.Name] = price
		}
		for _, o := range it.Offerings {
			if o.CapacityType == apisv1.CapacityTypeSpot {
				spot[spotKey{it.Name, o.Zone}] = o.Price
			}
		}
	}
	return od, spot, nil
}

// OnDemand returns the on-demand price (USD per hour) of an instance type.
func (p *Provider) OnDemand(instanceType string) (float64, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	price, ok := p.onDemand.prices[instanceType]
	return price, ok
}

// Spot returns the spot price (USD per hour) of an instance type in a zone (by name).
func (p *Provider) Spot(instanceType, zone string) (float64, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	price, ok := p.spot.prices[spotKey{instanceType, zone}]
	return price, ok
}

// Generation changes whenever any price changes, so that callers can cache what they build
// from the prices.
func (p *Provider) Generation() uint64 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.generation
}

// Sources returns where on-demand and spot prices come from now.
func (p *Provider) Sources() (onDemand, spot Source) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.onDemand.source, p.spot.source
}

// Refresh refreshes both kinds of price and returns their errors joined.
func (p *Provider) Refresh(ctx context.Context) error {
	return errors.Join(p.RefreshOnDemand(ctx), p.RefreshSpot(ctx))
}

// Start refreshes at once and then on the options' intervals until ctx is done
// (manager.Runnable). It always returns nil.
func (p *Provider) Start(ctx context.Context) error {
	for {
		wait := p.opts.RefreshInterval
		if err := p.Refresh(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			wait = p.opts.RetryInterval
		}
		t := p.opts.Clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C():
		}
	}
}

// NeedLeaderElection is false: every replica keeps prices, so a new leader has them at once.
func (p *Provider) NeedLeaderElection() bool { return false }

// update applies a refresh's result to a book under the lock: fetched prices (nil when the
// refresh failed outright) overlay the held ones, or replace them when replace is set; err is
// what went wrong, if anything. It logs when the book's state changes.
func update[K comparable](p *Provider, b *book[K], kind, api string, fetched map[K]float64, replace bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	log := p.opts.Logger.WithValues("prices", kind, "region", p.opts.Region)
	if len(fetched) > 0 {
		next := fetched
		if !replace {
			next = maps.Clone(b.prices)
			maps.Copy(next, fetched)
		}
		if !maps.Equal(next, b.prices) {
			b.prices = next
			p.generation++
		}
		switch {
		case err != nil && !b.failed:
			log.Error(err, "some prices from the "+api+" could not be read; those types keep their previous price", "read", len(fetched))
		case err == nil && (b.source != SourceAPI || b.failed):
			log.Info("prices refreshed from the "+api, "count", len(fetched))
		}
		b.source = SourceAPI
		b.failed = err != nil
		return
	}
	if b.failed {
		return
	}
	b.failed = true
	if b.source == SourceAPI {
		b.source = SourceAPIStale
		log.Error(err, "refreshing prices from the "+api+" failed; keeping the last prices it returned")
		return
	}
	log.Error(err, "refreshing prices from the "+api+" failed; keeping the embedded catalog's prices")
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

// APIRegion is the region whose Pricing API endpoint serves a region's prices: the Price List
// is served from a few regions only.
func APIRegion(region string) string {
	switch {
	case strings.HasPrefix(region, "ap-"):
		return "ap-south-1"
	case strings.HasPrefix(region, "cn-"):
		return "cn-northwest-1"
	case strings.HasPrefix(region, "eu-"):
		return "eu-central-1"
	}
	return "us-east-1"
}

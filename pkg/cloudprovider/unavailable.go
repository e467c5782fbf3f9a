package cloudprovider

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"

	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/metrics"
)

// OfferingAvailable is Karpenter's karpenter_cloudprovider_instance_type_offering_available:
// 0 while an offering is marked unavailable, 1 once its mark has expired or been lifted. Only
// offerings that were ever marked have a series (Karpenter publishes one for every offering
// of every type; tenon's says only what the cache knows, so it costs nothing until capacity
// runs out). The cache sets it when it marks an offering and when the mark expires; there is
// one cache per process (the operator's), so the series are that cache's.
var OfferingAvailable = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "karpenter_cloudprovider_instance_type_offering_available",
	Help: "Whether an offering (instance type, capacity type, zone) may be launched: 0 while it is marked unavailable after a launch found no capacity, 1 once that mark expired. Only offerings ever marked have a series.",
}, []string{metrics.InstanceTypeLabel, metrics.CapacityTypeLabel, metrics.ZoneLabel})

func init() { metrics.MustRegister(OfferingAvailable) }

func setAvailable(o Offering, available bool) {
	v := 0.0
	if available {
		v = 1
	}
	OfferingAvailable.WithLabelValues(o.InstanceType, o.CapacityType, o.Zone).Set(v)
}

// UnavailableOfferings remembers offerings that recently failed to launch (an
// InsufficientCapacityError named them), so that planning avoids them for a while. It is safe
// for concurrent use. The NodeClaim lifecycle controller writes it; the provisioner applies it
// to the instance types it plans with.
type UnavailableOfferings struct {
	clock clock.PassiveClock

	mu sync.RWMutex
	// entries by offering; expired entries are dropped on the next write.
	entries map[Offering]unavailable
}

type unavailable struct {
	reason string
	until  time.Time
}

// NewUnavailableOfferings returns an empty cache reading time from clk (the real clock when
// nil).
func NewUnavailableOfferings(clk clock.PassiveClock) *UnavailableOfferings {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &UnavailableOfferings{clock: clk, entries: map[Offering]unavailable{}}
}

// MarkUnavailable records that the offering cannot be bought for ttl from now, for reason. A
// later mark replaces an earlier one, so the offering stays unavailable until the latest
// mark's ttl runs out. A ttl of zero or less lifts the offering's mark. OfferingAvailable
// follows: 0 now, 1 when the mark expires (at once when the cache's clock can run a function
// later, as the real clock and the fake test clocks can; else at the next mark of any
// offering) or is lifted.
func (u *UnavailableOfferings) MarkUnavailable(o Offering, reason string, ttl time.Duration) {
	now := u.clock.Now()
	u.mu.Lock()
	defer u.mu.Unlock()
	u.sweepLocked(now)
	if ttl <= 0 {
		if _, ok := u.entries[o]; ok {
			delete(u.entries, o)
			setAvailable(o, true)
		}
		return
	}
	until := now.Add(ttl)
	u.entries[o] = unavailable{reason: reason, until: until}
	setAvailable(o, false)
	if c, ok := u.clock.(clock.WithDelayedExecution); ok {
		c.AfterFunc(ttl, func() { u.expire(o, until) })
	}
}

// sweepLocked drops the marks expired at now; callers hold u.mu for writing.
func (u *UnavailableOfferings) sweepLocked(now time.Time) {
	for k, e := range u.entries {
		if !now.Before(e.until) {
			delete(u.entries, k)
			setAvailable(k, true)
		}
	}
}

// expire runs when the mark of o that lasted until has run out: it drops o's mark unless a
// later mark renewed it (whose own expire comes later). It does not read the clock: a fake
// test clock runs it while holding its own lock.
func (u *UnavailableOfferings) expire(o Offering, until time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if e, ok := u.entries[o]; ok && !e.until.After(until) {
		delete(u.entries, o)
		setAvailable(o, true)
	}
}

// IsUnavailable reports whether the offering of instanceType in zone with capacityType is
// marked and its mark has not expired.
func (u *UnavailableOfferings) IsUnavailable(instanceType, zone, capacityType string) bool {
	_, ok := u.Reason(instanceType, zone, capacityType)
	return ok
}

// Reason returns why the offering is marked unavailable, and whether it is.
func (u *UnavailableOfferings) Reason(instanceType, zone, capacityType string) (string, bool) {
	o := Offering{InstanceType: instanceType, Zone: zone, CapacityType: capacityType}
	u.mu.RLock()
	e, ok := u.entries[o]
	u.mu.RUnlock()
	if !ok || !u.clock.Now().Before(e.until) {
		return "", false
	}
	return e.reason, true
}

// Len returns how many offerings are marked, expired marks not yet dropped included.
func (u *UnavailableOfferings) Len() int {
	u.mu.RLock()
	defer u.mu.RUnlock()
	return len(u.entries)
}

// Apply returns types with every marked offering made unavailable (Available=false). Types
// with no marked offering are returned as they are; a type with one is replaced by a shallow
// copy with its own offerings slice, so the shared catalog is never modified. When nothing is
// marked, types itself is returned.
func (u *UnavailableOfferings) Apply(types []*catalog.InstanceType) []*catalog.InstanceType {
	now := u.clock.Now()
	u.mu.RLock()
	defer u.mu.RUnlock()
	if len(u.entries) == 0 {
		return types
	}
	// Which instance types have live marks at all: one map lookup per type below.
	marked := make(map[string]bool, len(u.entries))
	for o, e := range u.entries {
		if now.Before(e.until) {
			marked[o.InstanceType] = true
		}
	}
	if len(marked) == 0 {
		return types
	}
	var out []*catalog.InstanceType
	for i, it := range types {
		if !marked[it.Name] {
			if out != nil {
				out = append(out, it)
			}
			continue
		}
		cp := u.applyOne(it, now)
		if cp == it {
			if out != nil {
				out = append(out, it)
			}
			continue
		}
		if out == nil {
			out = make([]*catalog.InstanceType, i, len(types))
			copy(out, types[:i])
		}
		out = append(out, cp)
	}
	if out == nil {
		return types
	}
	return out
}

// applyOne returns it, or a copy of it whose marked offerings are unavailable; callers hold
// u.mu.
func (u *UnavailableOfferings) applyOne(it *catalog.InstanceType, now time.Time) *catalog.InstanceType {
	var offerings []catalog.Offering
	for i := range it.Offerings {
		o := &it.Offerings[i]
		if !o.Available {
			continue
		}
		e, ok := u.entries[Offering{InstanceType: it.Name, Zone: o.Zone, CapacityType: o.CapacityType}]
		if !ok || !now.Before(e.until) {
			continue
		}
		if offerings == nil {
			offerings = make([]catalog.Offering, len(it.Offerings))
			copy(offerings, it.Offerings)
		}
		offerings[i].Available = false
	}
	if offerings == nil {
		return it
	}
	cp := *it
	cp.Offerings = offerings
	return &cp
}

type capacityReportKey struct{}

// WithCapacityReport returns ctx carrying report, for a provider's Create to pass back the
// offerings it found without capacity on the way to an instance it launched elsewhere (an
// AWS fleet whose cheaper overrides had none): an InsufficientCapacityError says that only
// when nothing launched. The NodeClaim lifecycle controller attaches one to each Create, so
// that it marks those offerings and says so in the claim's InsufficientCapacity event, as it
// does for the offerings of an InsufficientCapacityError.
func WithCapacityReport(ctx context.Context, report func([]Offering)) context.Context {
	return context.WithValue(ctx, capacityReportKey{}, report)
}

// ReportInsufficientCapacity hands offerings to the report ctx carries (WithCapacityReport)
// and returns true; without one it returns false, and the provider marks them itself.
func ReportInsufficientCapacity(ctx context.Context, offerings []Offering) bool {
	report, ok := ctx.Value(capacityReportKey{}).(func([]Offering))
	if !ok || report == nil {
		return false
	}
	if len(offerings) > 0 {
		report(offerings)
	}
	return true
}

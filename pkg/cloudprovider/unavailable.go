package cloudprovider

import (
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/tenon-sh/tenon/pkg/catalog"
)

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
// mark's ttl runs out.
func (u *UnavailableOfferings) MarkUnavailable(o Offering, reason string, ttl time.Duration) {
	now := u.clock.Now()
	u.mu.Lock()
	defer u.mu.Unlock()
	for k, e := range u.entries {
		if !now.Before(e.until) {
			delete(u.entries, k)
		}
	}
	if ttl <= 0 {
		delete(u.entries, o)
		return
	}
	u.entries[o] = unavailable{reason: reason, until: now.Add(ttl)}
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

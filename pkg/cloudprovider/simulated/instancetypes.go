package simulated

import (
	"context"
	"slices"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// GetInstanceTypes returns the catalog of the NodePool's SimNodeClass: its region and zones,
// with its reservations and capacity blocks as reserved offerings, its price overrides and root
// volume applied, and each offering's Available saying whether it has room now (a full capacity
// pool or reservation, or a capacity block outside its window, makes it unavailable).
// Offerings of a targeted reservation are left out unless the NodePool's requirements name its
// ID. The slice is new; the types are shared and must not be modified.
func (p *Provider) GetInstanceTypes(ctx context.Context, nodePool *apisv1.NodePool) ([]*catalog.InstanceType, error) {
	rc, err := p.class(ctx, nodePool.Spec.Template.Spec.NodeClassRef)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	if err := p.ready(ctx); err != nil {
		p.mu.Unlock()
		return nil, err
	}
	now := p.now()
	p.advance(now)
	types, err := p.cloud.InstanceTypes(rc.name, now)
	p.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if len(rc.targeted) == 0 {
		types = slices.Clone(types)
	} else {
		types = withoutUnnamedTargeted(types, rc, namedReservations(nodePool))
	}
	// The pool's nodes have their GPUs in the pool's MIG layout, if it has one.
	return catalog.PartitionPool(types, nodePool.Name, nodePool.Spec.Template.Labels)
}

// namedReservations returns the reservation IDs a NodePool's requirements name with In.
func namedReservations(np *apisv1.NodePool) func(string) bool {
	var r scheduling.Requirement
	found := false
	for _, req := range np.Spec.Template.Spec.Requirements {
		if req.Key != apisv1.LabelCapacityReservationID {
			continue
		}
		parsed, err := scheduling.NewRequirement(req.Key, req.Operator, req.Values...)
		if err != nil {
			continue
		}
		if !found {
			r, found = parsed, true
		} else {
			r = r.Intersect(parsed)
		}
	}
	return func(id string) bool { return found && !r.IsComplement() && r.Has(id) }
}

// withoutUnnamedTargeted drops the offerings of targeted reservations that named does not
// accept, rebuilding the types concerned (their requirements follow their offerings) and
// dropping types left without offerings.
func withoutUnnamedTargeted(types []*catalog.InstanceType, rc *resolvedClass, named func(string) bool) []*catalog.InstanceType {
	out := make([]*catalog.InstanceType, 0, len(types))
	for _, it := range types {
		drop := func(o catalog.Offering) bool { return rc.targeted[o.ReservationID] && !named(o.ReservationID) }
		if !slices.ContainsFunc(it.Offerings, drop) {
			out = append(out, it)
			continue
		}
		offerings := slices.DeleteFunc(slices.Clone(it.Offerings), drop)
		if len(offerings) == 0 {
			continue
		}
		rebuilt, err := catalog.NewInstanceType(it.Name, rc.cfg.Catalog.Region, it.Shape, offerings, catalog.WithRootVolume(rc.rootVolume))
		if err != nil {
			continue // the same shape built once already; cannot fail here
		}
		rebuilt.SpotAdvice = it.SpotAdvice
		out = append(out, rebuilt)
	}
	return out
}

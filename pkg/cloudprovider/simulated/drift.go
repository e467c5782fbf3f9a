package simulated

import (
	"context"
	"slices"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
)

// Drift reasons.
const (
	// DriftNodeClass: the SimNodeClass fields that shape an instance (rootVolumeSize, labels,
	// tags) changed since launch; see SimNodeClass.Hash.
	DriftNodeClass cloudprovider.DriftReason = "NodeClassDrift"
	// DriftZone: the instance's zone is no longer one of the SimNodeClass's zones.
	DriftZone cloudprovider.DriftReason = "ZoneDrift"
)

// IsDrifted reports whether the claim's instance differs from its SimNodeClass now: its
// stamped hash (annotation karpenter.sh/nodeclass-hash) is not the class's, or its zone was
// removed. An instance that is gone has not drifted.
func (p *Provider) IsDrifted(ctx context.Context, claim *apisv1.NodeClaim) (cloudprovider.DriftReason, error) {
	rc, err := p.class(ctx, claim.Spec.NodeClassRef)
	if err != nil {
		return "", err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.ready(ctx); err != nil {
		return "", err
	}
	inst, err := p.lookup(claim.Status.ProviderID)
	if err != nil {
		return "", nil
	}
	if m := p.meta[inst.ID]; m != nil && m.hash != rc.hash {
		return DriftNodeClass, nil
	}
	if !slices.Contains(rc.zones, inst.Offering.Zone) {
		return DriftZone, nil
	}
	return "", nil
}

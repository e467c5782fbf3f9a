package simulated

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
)

// Delete begins terminating the claim's instance (by status.providerID). While it shuts down
// (the SimNodeClass's shutdownDelay) Delete returns nil again; once it is terminated, or when
// there never was one, a *cloudprovider.NodeClaimNotFoundError. The Kubelet then deletes the
// instance's Node.
func (p *Provider) Delete(ctx context.Context, claim *apisv1.NodeClaim) error {
	p.mu.Lock()
	if err := p.ready(ctx); err != nil {
		p.mu.Unlock()
		return err
	}
	now := p.now()
	p.advance(now)
	inst, err := p.lookup(claim.Status.ProviderID)
	if err != nil || inst.State == cloud.Terminating {
		p.mu.Unlock()
		return err
	}
	if err := p.cloud.Terminate(inst.ID, now); err != nil {
		p.mu.Unlock()
		return err
	}
	p.advance(now)
	inst, _ = p.cloud.Instance(inst.ID)
	m := p.meta[inst.ID]
	status := instanceStatus(inst, m.status.NodeName)
	recorded := m.recorded
	p.mu.Unlock()

	err = p.writeStatus(ctx, inst.ID, status)
	p.poke()
	// An instance that terminated at once (no shutdown delay) may already have lost its record
	// to the Kubelet, which deletes the SimInstance of a terminated instance whose Node is gone:
	// that is the termination recorded, not a failure. An instance whose launch was never
	// confirmed recorded may have no record at all: nothing to write then.
	if err != nil && apierrors.IsNotFound(err) && (inst.State == cloud.Terminated || !recorded) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("recording the termination of %s: %w", inst.ID, err)
	}
	p.mu.Lock()
	m.status = status
	// The record exists (the write found it), so the Kubelet may now finish the instance off
	// and delete it.
	m.recorded = true
	p.mu.Unlock()
	return nil
}

// Get returns the claim view of the instance with this provider ID, or a
// *cloudprovider.NodeClaimNotFoundError once it has terminated.
func (p *Provider) Get(ctx context.Context, providerID string) (*apisv1.NodeClaim, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.ready(ctx); err != nil {
		return nil, err
	}
	p.advance(p.now())
	inst, err := p.lookup(providerID)
	if err != nil {
		return nil, err
	}
	return claimView(nil, inst, p.meta[inst.ID]), nil
}

// List returns a claim view of every instance that has not terminated, those no NodeClaim
// refers to any more included, ordered by instance ID. A view is named after the claim the
// instance was launched for and created at its launch time.
func (p *Provider) List(ctx context.Context) ([]*apisv1.NodeClaim, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.ready(ctx); err != nil {
		return nil, err
	}
	p.advance(p.now())
	var out []*apisv1.NodeClaim
	for _, inst := range p.cloud.Instances() {
		if inst.Alive() {
			out = append(out, claimView(nil, inst, p.meta[inst.ID]))
		}
	}
	return out, nil
}

// Interrupt injects an interruption of the instance with this provider ID, due at (see
// cloud.Cloud.Inject): a SpotInterruption (spot instances only) or ScheduledMaintenance notice
// followed by termination at its deadline, a RebalanceRecommendation, or an InstanceStopped.
func (p *Provider) Interrupt(ctx context.Context, providerID string, kind cloudprovider.InterruptionKind, at time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.ready(ctx); err != nil {
		return err
	}
	p.advance(p.now())
	inst, err := p.lookup(providerID)
	if err != nil {
		return err
	}
	if err := p.cloud.Inject(inst.ID, kind, at.Truncate(time.Microsecond)); err != nil {
		return err
	}
	p.poke()
	return nil
}

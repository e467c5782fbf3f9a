package simulated

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
)

// ImageID returns the machine image the simulated cloud boots for an architecture.
func ImageID(arch string) string { return "sim-al2023-" + arch }

// Create launches an instance for the claim (see cloudprovider.CloudProvider): the cheapest
// compatible offering of its SimNodeClass with room and not marked unavailable
// (Options.Unavailable), recorded as a SimInstance. A claim that already has an instance gets
// it back. The returned claim carries the provider ID, image ID, capacity (device resources
// included) and allocatable, the labels of the instance and the SimNodeClass, and the
// SimNodeClass hash annotation.
func (p *Provider) Create(ctx context.Context, claim *apisv1.NodeClaim) (*apisv1.NodeClaim, error) {
	rc, err := p.class(ctx, claim.Spec.NodeClassRef)
	if err != nil {
		return nil, err
	}
	reqs, requests, err := cloudprovider.ClaimRequest(claim)
	if err != nil {
		return nil, fmt.Errorf("NodeClaim %s: %w", claim.Name, err)
	}

	p.mu.Lock()
	if err := p.ready(ctx); err != nil {
		p.mu.Unlock()
		return nil, err
	}
	now := p.now()
	p.advance(now)
	if inst, ok := p.cloud.ForClaim(claim.Name); ok {
		m := p.meta[inst.ID]
		if m.recorded {
			p.mu.Unlock()
			return claimView(claim, inst, m), nil
		}
		// An earlier Create launched this instance but could not confirm its record (the
		// write may have been applied and its response lost): the instance runs either way,
		// so the retry records it rather than launching a second one.
		m.status = instanceStatus(inst, "")
		status := m.status
		p.mu.Unlock()
		return p.record(ctx, claim, inst, m, rc.tags, status)
	}
	inst, err := p.cloud.Launch(cloud.LaunchRequest{Class: rc.name, NodeClaim: claim.Name, Requirements: reqs, Requests: requests, Avoid: p.avoid,
		Prices: cloudprovider.LaunchPricesFrom(ctx), MIGConfig: claim.Labels[catalog.LabelMIGConfig]}, now)
	if err != nil {
		p.mu.Unlock()
		if errors.Is(err, cloud.ErrNoCompatibleOffering) {
			return nil, fmt.Errorf("NodeClaim %s: %w", claim.Name, err)
		}
		return nil, err
	}
	arch, _ := inst.Type.Label(apisv1.LabelArch)
	labels := maps.Clone(claim.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, rc.labels)
	maps.Copy(labels, inst.Labels())
	m := &instanceMeta{
		nodeLabels: labels, hash: rc.hash, imageID: ImageID(arch),
		taints: slices.Clone(claim.Spec.Taints), startupTaints: slices.Clone(claim.Spec.StartupTaints),
	}
	m.status = instanceStatus(inst, "")
	status := m.status
	p.meta[inst.ID] = m
	p.mu.Unlock()
	return p.record(ctx, claim, inst, m, rc.tags, status)
}

// record writes the SimInstance of a launched instance and marks it recorded. When that fails
// the instance stays in the model, unrecorded (the Kubelet leaves it alone; List returns it, so
// garbage collection can still terminate it), because a failed write may have been applied:
// dropping the instance then would leave a record behind and let the claim's retry launch a
// second instance for it. The retry records this one instead.
func (p *Provider) record(ctx context.Context, claim *apisv1.NodeClaim, inst cloud.Instance, m *instanceMeta, tags map[string]string, status simv1alpha1.SimInstanceStatus) (*apisv1.NodeClaim, error) {
	obj := simInstance(inst, m)
	obj.Spec.Tags = tags
	if err := p.persistLaunch(ctx, obj, status); err != nil {
		return nil, err
	}
	p.mu.Lock()
	m.recorded = true
	p.mu.Unlock()
	p.poke()
	return claimView(claim, inst, m), nil
}

// claimView is a copy of claim (or, when claim is nil, a new claim named after the instance's
// NodeClaim) describing inst.
func claimView(claim *apisv1.NodeClaim, inst cloud.Instance, m *instanceMeta) *apisv1.NodeClaim {
	var out *apisv1.NodeClaim
	if claim != nil {
		out = claim.DeepCopy()
	} else {
		out = &apisv1.NodeClaim{
			TypeMeta:   metav1.TypeMeta{APIVersion: apisv1.SchemeGroupVersion.String(), Kind: apisv1.NodeClaimKind},
			ObjectMeta: metav1.ObjectMeta{Name: inst.NodeClaim, CreationTimestamp: metav1.NewTime(inst.Launched)},
			Spec: apisv1.NodeClaimSpec{NodeClassRef: &apisv1.NodeClassReference{
				Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind, Name: inst.Class,
			}},
		}
	}
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	if m != nil {
		maps.Copy(out.Labels, m.nodeLabels)
	}
	maps.Copy(out.Labels, inst.Labels())
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	if m != nil {
		out.Annotations[apisv1.NodeClassHashAnnotationKey] = m.hash
		out.Status.ImageID = m.imageID
	}
	out.Status.ProviderID = inst.ProviderID()
	out.Status.Capacity = inst.Type.Capacity.ResourceList()
	out.Status.Allocatable = inst.Type.Allocatable().ResourceList()
	return out
}

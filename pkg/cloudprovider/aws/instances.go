package aws

import (
	"context"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/instance"
)

// Delete begins terminating the claim's instance: nil while it shuts down, a
// *cloudprovider.NodeClaimNotFoundError once it has terminated or when there never was one.
func (p *Provider) Delete(ctx context.Context, claim *apisv1.NodeClaim) error {
	id, err := instance.ParseProviderID(claim.Status.ProviderID)
	if err != nil {
		return cloudprovider.NewNodeClaimNotFoundError(claim.Status.ProviderID, err)
	}
	if err := p.instances.Delete(ctx, id); err != nil {
		if cloudprovider.IsNodeClaimNotFound(err) {
			return cloudprovider.NewNodeClaimNotFoundError(claim.Status.ProviderID, err)
		}
		return err
	}
	return nil
}

// Get returns the claim view of the instance with this provider ID, or a
// *cloudprovider.NodeClaimNotFoundError once it has terminated.
func (p *Provider) Get(ctx context.Context, providerID string) (*apisv1.NodeClaim, error) {
	id, err := instance.ParseProviderID(providerID)
	if err != nil {
		return nil, cloudprovider.NewNodeClaimNotFoundError(providerID, err)
	}
	inst, err := p.instances.Get(ctx, id)
	if err != nil {
		if cloudprovider.IsNodeClaimNotFound(err) {
			return nil, cloudprovider.NewNodeClaimNotFoundError(providerID, err)
		}
		return nil, err
	}
	return p.view(nil, inst, nil, nil), nil
}

// List returns a claim view of every instance tagged for this cluster's NodePools and
// EC2NodeClasses that has not terminated, named after its karpenter.sh/nodeclaim tag.
func (p *Provider) List(ctx context.Context) ([]*apisv1.NodeClaim, error) {
	insts, err := p.instances.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*apisv1.NodeClaim, 0, len(insts))
	for _, inst := range insts {
		out = append(out, p.view(nil, inst, nil, nil))
	}
	return out, nil
}

// view is a copy of claim (or, when claim is nil, a claim named after the instance's
// karpenter.sh/nodeclaim tag and created at its launch) describing inst: provider ID, image,
// the instance type's capacity, allocatable and labels (it, or the embedded catalog's type of
// that name when nil), and (with nc) the NodeClass's hash.
func (p *Provider) view(claim *apisv1.NodeClaim, inst *instance.Instance, nc *awsv1.EC2NodeClass, it *catalog.InstanceType) *apisv1.NodeClaim {
	var out *apisv1.NodeClaim
	if claim != nil {
		out = claim.DeepCopy()
	} else {
		out = &apisv1.NodeClaim{
			TypeMeta:   metav1.TypeMeta{APIVersion: apisv1.SchemeGroupVersion.String(), Kind: apisv1.NodeClaimKind},
			ObjectMeta: metav1.ObjectMeta{Name: inst.Tags[instance.TagNodeClaim], CreationTimestamp: metav1.NewTime(inst.Launched)},
		}
		if name, ok := inst.Tags[instance.TagEC2NodeClass]; ok {
			out.Spec.NodeClassRef = &apisv1.NodeClassReference{Group: awsv1.Group, Kind: awsv1.EC2NodeClassKind, Name: name}
		}
	}
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	if pool, ok := inst.Tags[instance.TagNodePool]; ok && out.Labels[apisv1.NodePoolLabelKey] == "" {
		out.Labels[apisv1.NodePoolLabelKey] = pool
	}
	off := catalog.Offering{Zone: inst.Zone, CapacityType: inst.CapacityType, ReservationID: inst.ReservationID}
	if it == nil {
		it = p.shapeOf(inst.Type)
	}
	if it != nil {
		for i := range it.Offerings {
			if o := it.Offerings[i]; o.Zone == inst.Zone {
				off.ZoneID = o.ZoneID
				break
			}
		}
		maps.Copy(out.Labels, it.NodeLabels(&off))
		out.Status.Capacity = it.Capacity.ResourceList()
		out.Status.Allocatable = it.Allocatable().ResourceList()
	} else {
		maps.Copy(out.Labels, off.Labels())
		delete(out.Labels, apisv1.LabelTopologyZoneID)
		out.Labels[apisv1.LabelInstanceType] = inst.Type
		out.Labels[apisv1.LabelRegion] = p.region
	}
	if nc != nil {
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[awsv1.AnnotationEC2NodeClassHash] = nc.Hash(p.cluster.CABundle)
		out.Annotations[awsv1.AnnotationEC2NodeClassHashVersion] = awsv1.EC2NodeClassHashVersion
	}
	out.Status.ProviderID = inst.ProviderID()
	out.Status.ImageID = inst.ImageID
	return out
}

// shapeOf returns the catalog's type called name (nil when unknown).
func (p *Provider) shapeOf(name string) *catalog.InstanceType {
	c := p.shapeCatalog()
	if c == nil {
		return nil
	}
	it, _ := c.Get(name)
	return it
}

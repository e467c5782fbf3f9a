package aws

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/instance"
)

// Drift reasons, as Karpenter's AWS provider names them.
const (
	DriftAMI                 cloudprovider.DriftReason = "AMIDrift"
	DriftSubnet              cloudprovider.DriftReason = "SubnetDrift"
	DriftSecurityGroup       cloudprovider.DriftReason = "SecurityGroupDrift"
	DriftCapacityReservation cloudprovider.DriftReason = "CapacityReservationDrift"
	DriftNodeClass           cloudprovider.DriftReason = "NodeClassDrift"
)

// IsDrifted reports how the claim's instance differs from its EC2NodeClass now: its AMI is no
// longer one of the status AMIs, its subnet no longer one of the status subnets, its security
// groups not the status's, its capacity reservation no longer in the status, or the claim's
// static hash (stamped at launch, under the same hash version) not the NodeClass's. An
// instance that is gone has not drifted. A NodeClass that is not ready gives a
// *cloudprovider.NodeClassNotReadyError: its status is no yardstick then.
func (p *Provider) IsDrifted(ctx context.Context, claim *apisv1.NodeClaim) (cloudprovider.DriftReason, error) {
	nc, err := p.nodeClass(ctx, claim.Spec.NodeClassRef)
	if err != nil {
		return "", err
	}
	id, err := instance.ParseProviderID(claim.Status.ProviderID)
	if err != nil {
		return "", nil
	}
	inst, err := p.driftInstance(ctx, id)
	if cloudprovider.IsNodeClaimNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return p.drift(claim, inst, nc), nil
}

func (p *Provider) drift(claim *apisv1.NodeClaim, inst *instance.Instance, nc *awsv1.EC2NodeClass) cloudprovider.DriftReason {
	if !slices.ContainsFunc(nc.Status.AMIs, func(a awsv1.AMI) bool { return a.ID == inst.ImageID }) {
		return DriftAMI
	}
	if !slices.ContainsFunc(nc.Status.Subnets, func(s awsv1.Subnet) bool { return s.ID == inst.SubnetID }) {
		return DriftSubnet
	}
	want := make([]string, 0, len(nc.Status.SecurityGroups))
	for _, sg := range nc.Status.SecurityGroups {
		want = append(want, sg.ID)
	}
	slices.Sort(want)
	if !slices.Equal(slices.Compact(want), inst.SecurityGroups) {
		return DriftSecurityGroup
	}
	if inst.ReservationID != "" && !slices.ContainsFunc(nc.Status.CapacityReservations, func(cr awsv1.CapacityReservation) bool { return cr.ID == inst.ReservationID }) {
		return DriftCapacityReservation
	}
	if claim.Annotations[awsv1.AnnotationEC2NodeClassHashVersion] == awsv1.EC2NodeClassHashVersion {
		if h, ok := claim.Annotations[awsv1.AnnotationEC2NodeClassHash]; ok && h != nc.Hash(p.cluster.CABundle) {
			return DriftNodeClass
		}
	}
	return ""
}

// DriftListingTTL is how long IsDrifted judges instances by one List of the cluster's
// instances: the disruption loop asks about every claim in turn, and one paginated
// DescribeInstances beats a call (and a batching window) per claim. Instances launched since
// are looked up one by one.
const DriftListingTTL = 30 * time.Second

// driftInstance returns the instance from a listing younger than DriftListingTTL, listing
// again when it is older, or (for an instance the listing does not have) from Get.
func (p *Provider) driftInstance(ctx context.Context, id string) (*instance.Instance, error) {
	p.listingMu.Lock()
	if p.listing == nil || time.Since(p.listedAt) > DriftListingTTL {
		insts, err := p.instances.List(ctx)
		if err != nil {
			p.listingMu.Unlock()
			return nil, err
		}
		p.listing = make(map[string]*instance.Instance, len(insts))
		for _, inst := range insts {
			p.listing[inst.ID] = inst
		}
		p.listedAt = time.Now()
	}
	inst, ok := p.listing[id]
	p.listingMu.Unlock()
	if ok {
		return inst, nil
	}
	return p.instances.Get(ctx, id)
}

var _ cloudprovider.HashStamper = (*Provider)(nil)

// StampHash re-stamps the EC2NodeClass hash of a launched claim stamped under another hash
// version (Karpenter's), as cloudprovider.HashStamper says. The hash is of the EC2NodeClass's
// spec, ready or not.
func (p *Provider) StampHash(ctx context.Context, claim *apisv1.NodeClaim) (from, to string, err error) {
	from = claim.Annotations[awsv1.AnnotationEC2NodeClassHashVersion]
	ref := claim.Spec.NodeClassRef
	if from == awsv1.EC2NodeClassHashVersion || claim.Status.ProviderID == "" ||
		ref == nil || ref.Group != awsv1.Group || ref.Kind != awsv1.EC2NodeClassKind {
		return "", "", nil
	}
	nc := &awsv1.EC2NodeClass{}
	if err := p.client.Get(ctx, types.NamespacedName{Name: ref.Name}, nc); err != nil {
		if apierrors.IsNotFound(err) {
			return "", "", nil
		}
		return "", "", fmt.Errorf("getting EC2NodeClass %s: %w", ref.Name, err)
	}
	if !nc.DeletionTimestamp.IsZero() {
		return "", "", nil
	}
	if claim.Annotations == nil {
		claim.Annotations = map[string]string{}
	}
	claim.Annotations[awsv1.AnnotationEC2NodeClassHashVersion] = awsv1.EC2NodeClassHashVersion
	if !claim.IsTrue(apisv1.ConditionTypeDrifted) {
		claim.Annotations[awsv1.AnnotationEC2NodeClassHash] = nc.Hash(p.cluster.CABundle)
	}
	return from, awsv1.EC2NodeClassHashVersion, nil
}

package cloudprovider

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// CloudProvider launches and removes the machines behind NodeClaims. Implementations must be
// safe for concurrent use.
type CloudProvider interface {
	// Create launches an instance for the claim: the cheapest usable offering compatible with the
	// claim's requirements (instance types, zones, capacity types, reservation IDs), and returns
	// a copy of the claim with status.providerID, status.imageID, status.capacity and
	// status.allocatable set, and labels for the instance type, zone, capacity type, region and
	// the instance-shape labels. It is idempotent for a claim that already has an instance (the
	// same instance is returned, nothing new is launched). When every compatible offering is out
	// of capacity it returns an *InsufficientCapacityError naming the offerings it tried; when the
	// claim's NodeClass does not exist or is not ready, a *NodeClassNotReadyError.
	Create(ctx context.Context, claim *apisv1.NodeClaim) (*apisv1.NodeClaim, error)
	// Delete terminates the claim's instance (by status.providerID). Deleting an instance that is
	// already gone returns a *NodeClaimNotFoundError, so callers can tell "done" from "failed".
	// It is safe to call repeatedly.
	Delete(ctx context.Context, claim *apisv1.NodeClaim) error
	// Get returns the claim view of the instance with this provider ID, or a
	// *NodeClaimNotFoundError.
	Get(ctx context.Context, providerID string) (*apisv1.NodeClaim, error)
	// List returns a claim view of every instance the provider runs for this cluster, including
	// instances no NodeClaim refers to (garbage collection relies on that). Each view is named
	// after the NodeClaim the instance was launched for (as Karpenter's AWS provider tags an
	// instance with karpenter.sh/nodeclaim), empty when unknown, and created at the instance's
	// launch time: garbage collection keeps an instance whose claim, named so, exists.
	List(ctx context.Context) ([]*apisv1.NodeClaim, error)
	// GetInstanceTypes returns the instance types the NodePool's NodeClass may launch, with their
	// offerings' current availability and prices. It returns a *NodeClassNotReadyError when the
	// NodeClass is missing or not ready.
	GetInstanceTypes(ctx context.Context, nodePool *apisv1.NodePool) ([]*catalog.InstanceType, error)
	// IsDrifted reports why the claim's instance no longer matches its NodeClass ("" when it
	// does not drift).
	IsDrifted(ctx context.Context, claim *apisv1.NodeClaim) (DriftReason, error)
	// Name identifies the provider ("simulated", "aws").
	Name() string
	// NodeClasses names the NodeClass kinds the provider launches from. NodeClaims of any other
	// kind belong to someone else (see IsManaged) and are left alone by every controller.
	NodeClassServer
}

// HashStamper is implemented by a provider that stamps the claims it launches with a hash of
// their NodeClass and judges static drift by that hash only under its own hash version (the
// AWS provider's karpenter.k8s.aws/ec2nodeclass-hash). A claim another controller launched
// (Karpenter) carries that controller's version, so it would never drift by hash; StampHash
// gives such a claim, once launched, the hash of its NodeClass as it is now and the provider's
// version, in memory, so that a later change to the NodeClass drifts it. A claim already
// Drifted gets the version only: its old hash differs, and keeps it drifted. It returns the
// version it replaced ("" when there was none) and the one it wrote; to is "" when it changed
// nothing (the claim is the provider's version already, not launched, or its NodeClass is
// missing or being deleted).
type HashStamper interface {
	StampHash(ctx context.Context, claim *apisv1.NodeClaim) (from, to string, err error)
}

// DriftReason says why an instance drifted from its NodeClass; "" means it has not.
type DriftReason string

// PricedNode is a node as NodePricer prices it.
type PricedNode struct {
	NodePool, InstanceType, Zone, CapacityType, ReservationID string
	// Deleting nodes are leaving the fleet.
	Deleting bool
}

// NodePricer is implemented by a provider (a decorator) that prices running nodes by what
// removing each saves, rather than by its offering's price: with commitments a covered node
// saves less than its list price. The disruption loop asks it when present; a nil answer
// leaves the offering prices.
type NodePricer interface {
	NodePrices(ctx context.Context, nodes []PricedNode) []float64
}

// ClaimRequest reads a NodeClaim's requirements and resource requests: what a launch for it
// must satisfy.
func ClaimRequest(claim *apisv1.NodeClaim) (scheduling.Requirements, scheduling.Resources, error) {
	nsrs := make([]corev1.NodeSelectorRequirement, 0, len(claim.Spec.Requirements))
	for i := range claim.Spec.Requirements {
		nsrs = append(nsrs, claim.Spec.Requirements[i].NodeSelectorRequirement())
	}
	reqs, err := scheduling.FromNodeSelectorRequirements(nsrs...)
	if err != nil {
		return scheduling.Requirements{}, scheduling.Resources{}, err
	}
	requests, err := scheduling.FromResourceList(claim.Spec.Resources.Requests)
	if err != nil {
		return scheduling.Requirements{}, scheduling.Resources{}, err
	}
	return reqs, requests, nil
}

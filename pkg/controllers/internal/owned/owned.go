// Package owned decides whether a Node is tenon's, from the one ownership rule of package
// cloudprovider (IsManaged: the provider serves the NodeClaim's nodeClassRef). Controllers
// that act on Nodes ask here; controllers that act on NodeClaims ask cloudprovider.IsManaged
// directly.
package owned

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/index"
)

// Node reports whether tenon manages node. A Node with NodeClaims (by provider ID) is managed
// when one of them is. A Node no NodeClaim refers to is managed when its karpenter.sh/nodepool
// label names a NodePool whose nodeClassRef s serves; without that label, or when the NodePool
// is gone, nothing says the Node is tenon's and it is not. r must list NodeClaims by the field
// index index.NodeClaimProviderID.
func Node(ctx context.Context, r client.Reader, s cloudprovider.NodeClassServer, node *corev1.Node) (bool, error) {
	if node.Spec.ProviderID != "" {
		claims, err := index.NodeClaimsForProviderID(ctx, r, node.Spec.ProviderID)
		if err != nil {
			return false, err
		}
		if len(claims) > 0 {
			for i := range claims {
				if cloudprovider.IsManaged(s, &claims[i]) {
					return true, nil
				}
			}
			return false, nil
		}
	}
	pool := node.Labels[apisv1.NodePoolLabelKey]
	if pool == "" {
		return false, nil
	}
	np := &apisv1.NodePool{}
	if err := r.Get(ctx, client.ObjectKey{Name: pool}, np); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("getting NodePool %s of Node %s: %w", pool, node.Name, err)
	}
	return cloudprovider.IsManagedNodePool(s, np), nil
}

package cloudprovider

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// NodeClassServer is the part of a provider that says which NodeClass kinds it serves. It is
// what ownership is decided from: tenon acts only on NodeClaims (and their Nodes and
// instances) whose nodeClassRef names one of these kinds. Karpenter and tenon share the
// karpenter.sh API and its finalizer, so a cluster can hold claims another autoscaler made;
// those are never launched, drained, deleted, disrupted or counted by tenon.
type NodeClassServer interface {
	// NodeClasses returns the group and kind of every NodeClass the provider launches from.
	// The slice must not change while the provider runs.
	NodeClasses() []schema.GroupKind
}

// Serves reports whether s serves the NodeClass ref names (its group and kind; the name is
// not looked at). A nil ref is served by no one.
func Serves(s NodeClassServer, ref *apisv1.NodeClassReference) bool {
	if ref == nil {
		return false
	}
	for _, gk := range s.NodeClasses() {
		if gk.Group == ref.Group && gk.Kind == ref.Kind {
			return true
		}
	}
	return false
}

// IsManaged reports whether the claim is tenon's to act on: its nodeClassRef names a
// NodeClass kind s serves. This is the single ownership rule every controller applies.
func IsManaged(s NodeClassServer, claim *apisv1.NodeClaim) bool {
	return claim != nil && Serves(s, claim.Spec.NodeClassRef)
}

// IsManagedNodePool reports whether the NodePool's template names a NodeClass kind s serves:
// the claims tenon would make from it are its own.
func IsManagedNodePool(s NodeClassServer, np *apisv1.NodePool) bool {
	return np != nil && Serves(s, np.Spec.Template.Spec.NodeClassRef)
}

// Serving is a NodeClassServer over a fixed list, for code that knows the kinds without a
// provider (the registry, readers of manifests).
type Serving []schema.GroupKind

// NodeClasses returns the list.
func (s Serving) NodeClasses() []schema.GroupKind { return s }

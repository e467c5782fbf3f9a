package state

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// ByProviderID returns the NodeClaim and the Node whose provider ID is providerID; either is
// nil when the mirror has none (a claim not launched yet has no provider ID, a node not
// registered yet does not exist). When several claims carry the ID, which the cloud should
// never allow, the one created first is returned. The objects are the mirror's: callers must
// not modify them.
func (c *Cluster) ByProviderID(providerID string) (*apisv1.NodeClaim, *corev1.Node) {
	if providerID == "" {
		return nil, nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	var claim *apisv1.NodeClaim
	for _, nc := range c.claims {
		if nc.Status.ProviderID == providerID && (claim == nil || older(&nc.ObjectMeta, &claim.ObjectMeta)) {
			claim = nc
		}
	}
	var node *corev1.Node
	for _, n := range c.nodes {
		if n.Spec.ProviderID == providerID && (node == nil || older(&n.ObjectMeta, &node.ObjectMeta)) {
			node = n
		}
	}
	return claim, node
}

// older orders objects by creation, then by name, so that the choice is the same every time.
func older(a, b *metav1.ObjectMeta) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

package status

import (
	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// Count returns how many nodes a NodePool has and their total capacity, given its NodeClaims
// and its Nodes. Every claim counts as a node. Its capacity is its Node's (matched by provider
// ID) once the claim is Initialized, because only then has the Node registered everything (a
// GPU node's devices come late); before that it is the capacity the claim expects, or its
// Node's when it expects none. A Node no claim accounts for counts with its own capacity.
func Count(claims []*apisv1.NodeClaim, nodes []*corev1.Node) (int64, corev1.ResourceList) {
	byProviderID := make(map[string]*corev1.Node, len(nodes))
	for _, n := range nodes {
		if n.Spec.ProviderID != "" {
			byProviderID[n.Spec.ProviderID] = n
		}
	}
	total := corev1.ResourceList{}
	claimed := make(map[*corev1.Node]bool, len(claims))
	for _, claim := range claims {
		node := byProviderID[claim.Status.ProviderID]
		if claim.Status.ProviderID == "" {
			node = nil
		}
		capacity := claim.Status.Capacity
		if node != nil {
			claimed[node] = true
			if claim.IsTrue(apisv1.ConditionTypeInitialized) || len(capacity) == 0 {
				capacity = node.Status.Capacity
			}
		}
		add(total, capacity)
	}
	count := int64(len(claims))
	for _, n := range nodes {
		if !claimed[n] {
			count++
			add(total, n.Status.Capacity)
		}
	}
	return count, total
}

func add(total, list corev1.ResourceList) {
	for name, q := range list {
		sum := total[name]
		sum.Add(q)
		total[name] = sum
	}
}

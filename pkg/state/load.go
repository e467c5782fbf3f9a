package state

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// Load fills the mirror once by listing every kind it holds, for one-shot tools (`tenon
// explain`) that read the cluster without running informers. It returns the first list that
// fails, naming the kind; objects listed before it stay recorded.
func (c *Cluster) Load(ctx context.Context, r client.Reader) error {
	var (
		nodes      corev1.NodeList
		claims     apisv1.NodeClaimList
		pods       corev1.PodList
		daemonSets appsv1.DaemonSetList
		pools      apisv1.NodePoolList
		namespaces corev1.NamespaceList
		pdbs       policyv1.PodDisruptionBudgetList
	)
	lists := []struct {
		kind   string
		list   client.ObjectList
		record func()
	}{
		{"NodePools", &pools, func() {
			for i := range pools.Items {
				c.UpdateNodePool(&pools.Items[i])
			}
		}},
		{"NodeClaims", &claims, func() {
			for i := range claims.Items {
				c.UpdateNodeClaim(&claims.Items[i])
			}
		}},
		{"Nodes", &nodes, func() {
			for i := range nodes.Items {
				c.UpdateNode(&nodes.Items[i])
			}
		}},
		{"Pods", &pods, func() {
			for i := range pods.Items {
				c.UpdatePod(&pods.Items[i])
			}
		}},
		{"DaemonSets", &daemonSets, func() {
			for i := range daemonSets.Items {
				c.UpdateDaemonSet(&daemonSets.Items[i])
			}
		}},
		{"Namespaces", &namespaces, func() {
			for i := range namespaces.Items {
				c.UpdateNamespace(&namespaces.Items[i])
			}
		}},
		{"PodDisruptionBudgets", &pdbs, func() {
			for i := range pdbs.Items {
				c.UpdatePDB(&pdbs.Items[i])
			}
		}},
	}
	for _, l := range lists {
		if err := r.List(ctx, l.list); err != nil {
			return fmt.Errorf("listing %s: %w", l.kind, err)
		}
		l.record()
	}
	return nil
}

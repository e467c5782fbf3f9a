package state

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// Load fills the mirror once by listing every kind it holds, for one-shot tools (`tenon
// explain`) that read the cluster without running informers. It returns the first list that
// fails, naming the kind; objects listed before it stay recorded. PodGroups are read where the
// API server serves them (as the controller does, RegisterPodGroups), and skipped elsewhere.
func (c *Cluster) Load(ctx context.Context, r client.Reader) error {
	var (
		nodes      corev1.NodeList
		claims     apisv1.NodeClaimList
		pods       corev1.PodList
		daemonSets appsv1.DaemonSetList
		pools      apisv1.NodePoolList
		namespaces corev1.NamespaceList
		pdbs       policyv1.PodDisruptionBudgetList
		podGroups  schedulingv1beta1.PodGroupList
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
		{"PodGroups", &podGroups, func() {
			for i := range podGroups.Items {
				c.UpdatePodGroup(&podGroups.Items[i])
			}
		}},
	}
	for _, l := range lists {
		err := r.List(ctx, l.list)
		if l.list == &podGroups && (meta.IsNoMatchError(err) || apierrors.IsNotFound(err)) {
			continue // not served: pods naming a group are ordinary pods
		}
		if err != nil {
			return fmt.Errorf("listing %s: %w", l.kind, err)
		}
		l.record()
	}
	return nil
}

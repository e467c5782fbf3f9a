package state

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// Register feeds the mirror from informers (a controller-runtime manager's cache).
func (c *Cluster) Register(ctx context.Context, informers cache.Informers) error {
	type kind struct {
		obj    client.Object
		update func(any)
		remove func(any)
	}
	kinds := []kind{
		{&corev1.Node{}, func(o any) { c.UpdateNode(o.(*corev1.Node)) }, func(o any) { c.DeleteNode(o.(*corev1.Node).Name) }},
		{&apisv1.NodeClaim{}, func(o any) { c.UpdateNodeClaim(o.(*apisv1.NodeClaim)) }, func(o any) { c.DeleteNodeClaim(o.(*apisv1.NodeClaim).Name) }},
		{&corev1.Pod{}, func(o any) { c.UpdatePod(o.(*corev1.Pod)) }, func(o any) { p := o.(*corev1.Pod); c.DeletePod(p.Namespace, p.Name) }},
		{&appsv1.DaemonSet{}, func(o any) { c.UpdateDaemonSet(o.(*appsv1.DaemonSet)) }, func(o any) { d := o.(*appsv1.DaemonSet); c.DeleteDaemonSet(d.Namespace, d.Name) }},
		{&apisv1.NodePool{}, func(o any) { c.UpdateNodePool(o.(*apisv1.NodePool)) }, func(o any) { c.DeleteNodePool(o.(*apisv1.NodePool).Name) }},
		{&corev1.Namespace{}, func(o any) { c.UpdateNamespace(o.(*corev1.Namespace)) }, func(o any) { c.DeleteNamespace(o.(*corev1.Namespace).Name) }},
		{&policyv1.PodDisruptionBudget{}, func(o any) { c.UpdatePDB(o.(*policyv1.PodDisruptionBudget)) }, func(o any) {
			p := o.(*policyv1.PodDisruptionBudget)
			c.DeletePDB(p.Namespace, p.Name)
		}},
	}
	for _, k := range kinds {
		inf, err := informers.GetInformer(ctx, k.obj)
		if err != nil {
			return fmt.Errorf("informer for %T: %w", k.obj, err)
		}
		k := k
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { k.update(o) },
			UpdateFunc: func(_, o any) { k.update(o) },
			DeleteFunc: func(o any) {
				if t, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
					o = t.Obj
				}
				if _, ok := o.(client.Object); ok {
					k.remove(o)
				}
			},
		}); err != nil {
			return fmt.Errorf("handler for %T: %w", k.obj, err)
		}
	}
	return nil
}

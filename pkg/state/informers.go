package state

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
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

// RegisterPodGroups mirrors PodGroups (scheduling.k8s.io/v1beta1, Kubernetes' GenericWorkload
// feature), whose gang policies the solver plans by. The API server serves them only with that
// feature and API on, so the caller registers them only when discovery finds the resource
// (PodGroupsServed); without them, pods naming a group are planned as ordinary pods.
func (c *Cluster) RegisterPodGroups(ctx context.Context, informers cache.Informers) error {
	inf, err := informers.GetInformer(ctx, &schedulingv1beta1.PodGroup{})
	if err != nil {
		return fmt.Errorf("informer for PodGroups: %w", err)
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { c.UpdatePodGroup(o.(*schedulingv1beta1.PodGroup)) },
		UpdateFunc: func(_, o any) { c.UpdatePodGroup(o.(*schedulingv1beta1.PodGroup)) },
		DeleteFunc: func(o any) {
			if t, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
				o = t.Obj
			}
			if pg, ok := o.(*schedulingv1beta1.PodGroup); ok {
				c.DeletePodGroup(pg.Namespace, pg.Name)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("handler for PodGroups: %w", err)
	}
	return nil
}

// PodGroupsServed reports whether the API server serves PodGroups (scheduling.k8s.io/v1beta1).
func PodGroupsServed(d discovery.DiscoveryInterface) (bool, error) {
	list, err := d.ServerResourcesForGroupVersion(schedulingv1beta1.SchemeGroupVersion.String())
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("discovering %s: %w", schedulingv1beta1.SchemeGroupVersion, err)
	}
	for _, r := range list.APIResources {
		if r.Name == "podgroups" {
			return true, nil
		}
	}
	return false, nil
}

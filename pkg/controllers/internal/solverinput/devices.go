package solverinput

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-sh/tenon/pkg/dra"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// Devices resolves the dynamic resource claims of the snapshot's pods (snap.Devices, see
// pkg/dra) against its NodePools' instance types, and counts the GPUs of existing nodes as the
// cluster's DRA objects describe them: a node's GPUs are the more of its allocatable
// nvidia.com/gpu and the devices NVIDIA's driver publishes for it in ResourceSlices, less
// those its allocated claims hold (dra.CountNodeDevices). With bound set, the pods bound to the
// snapshot's nodes are resolved too, as the disruption simulation moves them
// (dra.Resolver.ResolveMoving). It reads nothing unless a pod has claims or a pending pod asks
// for nvidia.com/gpu (which DRA devices may serve, through a DeviceClass's
// extendedResourceName); for the latter alone, a cluster that does not serve resource.k8s.io/v1
// has no devices to count. When the objects cannot be read, the pods with claims stay
// unresolved (unschedulable, and not moved) and the error says why.
func (s *Source) Devices(ctx context.Context, snap *solver.Snapshot, bound bool) error {
	hasClaims := func(p *corev1.Pod) bool { return len(p.Spec.ResourceClaims) > 0 }
	var running []*corev1.Pod
	if bound {
		for i := range snap.Nodes {
			for _, p := range snap.Nodes[i].Pods {
				if hasClaims(p) {
					running = append(running, p)
				}
			}
		}
	}
	claimed := len(running) > 0 || slices.ContainsFunc(snap.Pods, hasClaims)
	if !claimed && !slices.ContainsFunc(snap.Pods, asksForGPUs) {
		return nil
	}
	var classes resourcev1.DeviceClassList
	var claims resourcev1.ResourceClaimList
	var templates resourcev1.ResourceClaimTemplateList
	var rslices resourcev1.ResourceSliceList
	lists := []client.ObjectList{&claims, &rslices}
	if claimed {
		lists = append(lists, &classes, &templates)
	}
	var errs []error
	for _, l := range lists {
		if err := s.Reader.List(ctx, l); err != nil {
			if meta.IsNoMatchError(err) {
				if !claimed {
					return nil
				}
				err = errors.New("the API server does not serve resource.k8s.io/v1")
			}
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("dynamic resource allocation objects: %w", errors.Join(errs...))
	}
	objs := dra.Objects{DeviceClasses: ptrs(classes.Items), ResourceClaims: ptrs(claims.Items), Templates: ptrs(templates.Items)}
	if claimed {
		r, its := dra.NewResolver(objs), dra.PoolTypes(snap.NodePools)
		snap.Devices = r.Resolve(snap.Pods, its)
		if len(running) > 0 {
			maps.Copy(snap.Devices, r.ResolveMoving(running, its))
		}
	}
	dra.CountNodeDevices(snap.Nodes, dra.DevicesByNode(ptrs(rslices.Items), objs.ResourceClaims))
	return nil
}

// asksForGPUs reports whether a container of the pod requests or limits nvidia.com/gpu.
func asksForGPUs(p *corev1.Pod) bool {
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			r := &cs[i].Resources
			if _, ok := r.Requests[scheduling.ResourceNvidiaGPU]; ok {
				return true
			}
			if _, ok := r.Limits[scheduling.ResourceNvidiaGPU]; ok {
				return true
			}
		}
	}
	return false
}

// ptrs returns pointers to a list's items.
func ptrs[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

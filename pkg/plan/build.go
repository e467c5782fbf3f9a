package plan

import (
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"

	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/manifest"
	"github.com/tenon-sh/tenon/pkg/snapshot"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// Options say where instance types come from.
type Options struct {
	// Region of the embedded catalog used for NodePools whose NodeClass is not in the manifests.
	Region string
	// InstanceTypes, when set, resolves a NodePool's NodeClass to its instance types (a
	// provider's NodeClass in the manifests); it returns ok false to fall back to the catalog.
	InstanceTypes func(set *manifest.Set, np *apisv1.NodePool) (types []*catalog.InstanceType, ok bool, err error)
}

// Snapshot builds the solver's input from workload manifests (pending pods, DaemonSets,
// NodePools) and, optionally, a cluster's existing nodes (Nodes with the Pods bound to them).
func Snapshot(work, existing *manifest.Set, opts Options) (*solver.Snapshot, error) {
	if opts.Region == "" {
		opts.Region = catalog.DefaultRegion
	}
	var cat *catalog.Catalog
	snap := &solver.Snapshot{NamespaceLabels: map[string]map[string]string{}}
	var errs []error
	for _, set := range []*manifest.Set{work, existing} {
		if set == nil {
			continue
		}
		for _, ns := range set.Namespaces {
			snap.NamespaceLabels[ns.Name] = ns.Labels
		}
	}
	usage := map[string]snapshot.Usage{}
	if existing != nil {
		bound := map[string][]*corev1.Pod{}
		for _, p := range existing.Pods() {
			if p.Spec.NodeName != "" {
				bound[p.Spec.NodeName] = append(bound[p.Spec.NodeName], p)
			}
		}
		for _, n := range existing.Nodes {
			sn, err := snapshot.Node(n, bound[n.Name])
			if err != nil {
				errs = append(errs, err)
				continue
			}
			snap.Nodes = append(snap.Nodes, sn)
			if sn.NodePool != "" {
				u := usage[sn.NodePool]
				u.Nodes++
				u.Capacity = u.Capacity.Add(sn.Allocatable)
				usage[sn.NodePool] = u
			}
		}
	}
	for _, np := range work.NodePools {
		var its []*catalog.InstanceType
		ok := false
		if opts.InstanceTypes != nil {
			var err error
			if its, ok, err = opts.InstanceTypes(work, np); err != nil {
				errs = append(errs, fmt.Errorf("nodepool %s: %w", np.Name, err))
				continue
			}
		}
		if !ok {
			if cat == nil {
				var err error
				if cat, err = catalog.Load(opts.Region); err != nil {
					return nil, err
				}
			}
			its = cat.Types
		}
		sp, err := snapshot.NodePool(np, its, usage[np.Name])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		snap.NodePools = append(snap.NodePools, sp)
	}
	for _, ds := range work.DaemonSets {
		snap.DaemonSets = append(snap.DaemonSets, solver.DaemonSet{Namespace: ds.Namespace, Name: ds.Name, Pod: work.DaemonSetPod(ds)})
	}
	for _, p := range work.Pods() {
		if p.Spec.NodeName == "" {
			snap.Pods = append(snap.Pods, p)
		}
	}
	slices.SortStableFunc(snap.Nodes, func(a, b solver.Node) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return snap, errors.Join(errs...)
}

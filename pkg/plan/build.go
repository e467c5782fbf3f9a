package plan

import (
	"errors"
	"fmt"
	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/apis/v1alpha1"

	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/manifest"
	"github.com/tenon-sh/tenon/pkg/overlay"
	"github.com/tenon-sh/tenon/pkg/scheduling"
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
	// ExpendablePriorityCutoff: pending pods of a priority below it are not planned for, as the
	// controller buys no capacity for them (default scheduling.DefaultExpendableCutoff).
	ExpendablePriorityCutoff *int32
}

// Input is the solver's input built from manifests, with what could not be given to it.
type Input struct {
	Snapshot *solver.Snapshot
	// Rejected are the pending pods that cannot be planned for, each with its reason (a volume
	// claim, volume or StorageClass that does not exist); they are unschedulable beside those of
	// the plan (NewResult takes them).
	Rejected []solver.Unschedulable
	// Ignored are the kinds of the workload manifests and of the existing nodes' manifests that
	// tenon plan does not read, for it to say so.
	Ignored, IgnoredExisting []manifest.KindCount
	// Overlays says which of the manifests' NodeOverlays are not applied, and why.
	Overlays []string
}

// Kinds that tenon plan reads from the workload manifests, and from those of existing nodes.
var (
	workKinds = []schema.GroupKind{
		{Group: apisv1.Group, Kind: apisv1.NodePoolKind}, {Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind},
		awsv1.EC2NodeClassGroupKind,
		{Kind: "Namespace"}, {Kind: "Pod"}, {Group: "apps", Kind: "Deployment"}, {Group: "apps", Kind: "ReplicaSet"},
		{Group: "apps", Kind: "StatefulSet"}, {Group: "apps", Kind: "DaemonSet"}, {Group: "batch", Kind: "Job"},
		{Group: "batch", Kind: "CronJob"}, {Group: "scheduling.k8s.io", Kind: "PriorityClass"},
		{Group: "node.k8s.io", Kind: "RuntimeClass"}, {Group: "storage.k8s.io", Kind: "StorageClass"},
		{Kind: "PersistentVolumeClaim"}, {Kind: "PersistentVolume"}, v1alpha1.NodeOverlayGroupKind,
		{Group: "scheduling.k8s.io", Kind: "PodGroup"},
	}
	existingKinds = []schema.GroupKind{
		{Kind: "Node"}, {Kind: "Pod"}, {Kind: "Namespace"}, {Group: "scheduling.k8s.io", Kind: "PriorityClass"},
		{Group: "node.k8s.io", Kind: "RuntimeClass"}, {Group: "storage.k8s.io", Kind: "StorageClass"},
		{Kind: "PersistentVolumeClaim"}, {Kind: "PersistentVolume"},
	}
)

// Build builds the solver's input from workload manifests (pending pods, DaemonSets, NodePools,
// and the RuntimeClasses and storage objects the pods use) and, optionally, a cluster's
// existing nodes (Nodes with the Pods bound to them). Each pending pod goes through
// snapshot.PendingPod, as on a cluster: its volumes' topology becomes node affinity, and a pod
// whose claim does not exist is rejected with the reason.
func Build(work, existing *manifest.Set, opts Options) (*Input, error) {
	if opts.Region == "" {
		opts.Region = catalog.DefaultRegion
	}
	var cat *catalog.Catalog
	snap := &solver.Snapshot{NamespaceLabels: map[string]map[string]string{}}
	in := &Input{Snapshot: snap, Ignored: work.Ignored(workKinds...)}
	if existing != nil {
		in.IgnoredExisting = existing.Ignored(existingKinds...)
	}
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
	var pools []overlay.Pool
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
					return in, err
				}
			}
			its = cat.Types
		}
		pools = append(pools, overlay.Pool{NodePool: np, Types: its})
	}
	// The manifests' NodeOverlays apply as on a cluster with the NodeOverlay gate on.
	overlays, err := overlay.FromSet(work)
	if err != nil {
		errs = append(errs, err)
	}
	eval := overlay.Evaluate(overlays, pools)
	in.Overlays = eval.Problems()
	for _, p := range pools {
		its, err := eval.Apply(p.NodePool.Name, p.Types)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sp, err := snapshot.NodePool(p.NodePool, its, usage[p.NodePool.Name])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		snap.NodePools = append(snap.NodePools, sp)
	}
	for _, pg := range work.PodGroups {
		if g, ok := snapshot.Gang(pg); ok {
			snap.Gangs = append(snap.Gangs, g)
		}
	}
	for _, ds := range work.DaemonSets {
		snap.DaemonSets = append(snap.DaemonSets, solver.DaemonSet{Namespace: ds.Namespace, Name: ds.Name, Pod: work.DaemonSetPod(ds)})
	}
	st := newStorage(work, existing)
	cutoff := scheduling.DefaultExpendableCutoff
	if opts.ExpendablePriorityCutoff != nil {
		cutoff = *opts.ExpendablePriorityCutoff
	}
	for _, p := range work.Pods() {
		if p.Spec.NodeName != "" {
			continue
		}
		if scheduling.Expendable(p, cutoff) {
			in.Rejected = append(in.Rejected, solver.Unschedulable{Pod: p, Reasons: []solver.Reason{{Kind: solver.ReasonExpendable,
				Detail: fmt.Sprintf("its priority %d is below the expendable cutoff %d", scheduling.Priority(p), cutoff)}}})
			continue
		}
		pending, err := snapshot.PendingPod(p, st)
		if err != nil {
			in.Rejected = append(in.Rejected, solver.Unschedulable{Pod: p, Reasons: []solver.Reason{snapshot.UnplannableReason(err)}})
			continue
		}
		snap.Pods = append(snap.Pods, pending)
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
	return in, errors.Join(errs...)
}

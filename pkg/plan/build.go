package plan

import (
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	tenonv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/tenon/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/apis/v1alpha1"

	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/commitment"
	"github.com/tenon-sh/tenon/pkg/dra"
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
	// Now is the instant the manifests' Commitments are taken at (default: the clock's now).
	Now time.Time
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
	// Commitments are the manifests' Commitments active at Options.Now (nil: none), and Fleet
	// the existing nodes as their bill sees them. With commitments, the NodePools' on-demand
	// offerings are priced at what they add to the bill on the room the existing nodes leave,
	// as the controller prices them (see Bill).
	Commitments *commitment.Book
	Fleet       []commitment.Instance
	// list holds each NodePool's types before the commitments repriced them, by name.
	list map[string]map[string]*catalog.InstanceType
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
		{Group: "scheduling.k8s.io", Kind: "PodGroup"}, tenonv1alpha1.CommitmentGroupKind,
		{Group: "resource.k8s.io", Kind: "DeviceClass"}, {Group: "resource.k8s.io", Kind: "ResourceClaim"},
		{Group: "resource.k8s.io", Kind: "ResourceClaimTemplate"},
	}
	existingKinds = []schema.GroupKind{
		{Kind: "Node"}, {Kind: "Pod"}, {Kind: "Namespace"}, {Group: "scheduling.k8s.io", Kind: "PriorityClass"},
		{Group: "node.k8s.io", Kind: "RuntimeClass"}, {Group: "storage.k8s.io", Kind: "StorageClass"},
		{Kind: "PersistentVolumeClaim"}, {Kind: "PersistentVolume"},
		{Group: "resource.k8s.io", Kind: "DeviceClass"}, {Group: "resource.k8s.io", Kind: "ResourceClaim"},
		{Group: "resource.k8s.io", Kind: "ResourceSlice"},
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
		// The pool's nodes have their GPUs in its MIG layout, if it has one.
		its, err := catalog.PartitionPool(its, np.Name, np.Spec.Template.Labels)
		if err != nil {
			errs = append(errs, err)
			continue
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
	overlaid := map[string][]*catalog.InstanceType{}
	for _, p := range pools {
		its, err := eval.Apply(p.NodePool.Name, p.Types)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		overlaid[p.NodePool.Name] = its
	}
	room, err := in.commitments(work, existing, overlaid, opts)
	if err != nil {
		errs = append(errs, err)
	}
	for _, p := range pools {
		its, ok := overlaid[p.NodePool.Name]
		if !ok {
			continue
		}
		if room != nil {
			its = commitment.Reprice(its, room, "")
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
	snap.Devices = devices(work, existing, snap)
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

// devices resolves the pending pods' dynamic resource claims against the NodePools' instance
// types: the DeviceClasses and ResourceClaims of both sets of manifests (the existing ones hold
// claims already allocated), the templates of the workload's. The existing nodes' GPUs are
// counted from the ResourceSlices and allocated claims of the existing manifests, as the
// controller counts them.
func devices(work, existing *manifest.Set, snap *solver.Snapshot) map[*corev1.Pod]*solver.DeviceNeed {
	objs := dra.Objects{DeviceClasses: work.DeviceClasses, ResourceClaims: work.ResourceClaims, Templates: work.ResourceClaimTemplates}
	if existing != nil {
		objs.DeviceClasses = append(slices.Clip(objs.DeviceClasses), existing.DeviceClasses...)
		objs.ResourceClaims = append(slices.Clip(objs.ResourceClaims), existing.ResourceClaims...)
		dra.CountNodeDevices(snap.Nodes, dra.DevicesByNode(existing.ResourceSlices, objs.ResourceClaims))
	}
	return dra.NewResolver(objs).Resolve(snap.Pods, dra.PoolTypes(snap.NodePools))
}

// commitments reads the manifests' Commitments into in.Commitments and the existing nodes
// into in.Fleet, and returns the room they leave (nil without commitments). A node is priced
// at its offering among its NodePool's types (any pool's when it names none).
func (in *Input) commitments(work, existing *manifest.Set, types map[string][]*catalog.InstanceType, opts Options) (*commitment.Room, error) {
	if len(work.Commitments) == 0 {
		return nil, nil
	}
	byName := map[string]*catalog.InstanceType{}
	byPool := map[string]map[string]*catalog.InstanceType{}
	for pool, its := range types {
		byPool[pool] = map[string]*catalog.InstanceType{}
		for _, it := range its {
			byPool[pool][it.Name] = it
			byName[it.Name] = it
		}
	}
	vcpu := func(name string) int64 {
		if it := byName[name]; it != nil {
			return it.Capacity[scheduling.CPU] / 1000
		}
		return 0
	}
	var cs []commitment.Commitment
	var errs []error
	for _, o := range work.Commitments {
		c, err := commitment.FromAPI(o, vcpu)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cs = append(cs, c)
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	book := commitment.NewBook(cs, now)
	if book.Empty() {
		return nil, errors.Join(errs...)
	}
	in.Commitments, in.list = book, byPool
	if existing != nil {
		for _, n := range existing.Nodes {
			l := n.Labels
			lookup := byPool[l[apisv1.NodePoolLabelKey]]
			if lookup == nil {
				lookup = byName
			}
			it := lookup[l[apisv1.LabelInstanceType]]
			if o := commitment.Find(it, l[apisv1.LabelZone], l[apisv1.CapacityTypeLabelKey], l[apisv1.LabelCapacityReservationID]); o != nil {
				in.Fleet = append(in.Fleet, commitment.InstanceOf(it, o, ""))
			} else {
				errs = append(errs, fmt.Errorf("node %s: no offering of %q in zone %q as %q among the NodePools' instance types: it is left out of the commitments' bill",
					n.Name, l[apisv1.LabelInstanceType], l[apisv1.LabelZone], l[apisv1.CapacityTypeLabelKey]))
			}
		}
	}
	return book.Room(in.Fleet), errors.Join(errs...)
}

// Launch chooses each new claim's offering as the controller's launches would with the
// manifests' Commitments: one claim after another, the cheapest of its options by what it adds
// to the bill on the room the existing nodes and the claims before it leave (the solve priced
// every claim on the room the existing nodes leave, so a batch would otherwise take the same
// room many times). It updates the claims' InstanceType, Offering and Price (what each adds to
// the bill) and returns the bill; false without commitments.
func (in *Input) Launch(p *solver.Plan) (commitment.Bill, bool) {
	if in.Commitments == nil || p == nil {
		return commitment.Bill{}, false
	}
	fleet := slices.Clone(in.Fleet)
	p.Price = 0
	for _, c := range p.Claims {
		q := catalog.NewQuery(c.Requirements)
		var opts []commitment.Option
		var of []int // the option's index in c.InstanceTypes
		for j, t := range c.InstanceTypes {
			it := in.list[c.NodePool][t.Name]
			if it == nil {
				continue
			}
			for i := range it.Offerings {
				if o := &it.Offerings[i]; o.Usable() && q.OfferingMatches(o) {
					opts = append(opts, commitment.Option{Type: it, Offering: o})
					of = append(of, j)
				}
			}
		}
		room := in.Commitments.Room(fleet)
		k := commitment.Pick(room, opts, "")
		if k < 0 {
			if c.InstanceType != nil {
				fleet = append(fleet, commitment.InstanceOf(c.InstanceType, &c.Offering, ""))
			}
			p.Price += c.Price
			continue
		}
		o := opts[k]
		// The chosen type leads the claim's options, as the type a claim launches does.
		j := of[k]
		chosen := c.InstanceTypes[j]
		copy(c.InstanceTypes[1:j+1], c.InstanceTypes[:j])
		c.InstanceTypes[0] = chosen
		c.InstanceType = chosen
		c.Price = commitment.MarginalPrice(room, o.Type, o.Offering, "")
		c.Offering = *o.Offering
		c.Offering.Price = c.Price
		fleet = append(fleet, commitment.InstanceOf(o.Type, o.Offering, ""))
		p.Price += c.Price
	}
	return in.Commitments.Bill(fleet), true
}

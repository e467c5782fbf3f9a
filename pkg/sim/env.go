package sim

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
	"github.com/tenon-sh/tenon/pkg/manifest"
	"github.com/tenon-sh/tenon/pkg/overlay"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/snapshot"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// Env is what every policy of a simulation shares, read-only: the NodePools with the instance
// types their NodeClasses sell, each class's cloud configuration, and the workload.
type Env struct {
	Pools    []*Pool
	Classes  map[string]cloud.ClassConfig
	Workload *Workload
	// Start is the wall-clock time virtual time 0 stands for (budget schedules read it).
	Start time.Time
	// Notes are facts about the setup worth a line in the report (static NodePools left out).
	Notes []string

	// keys are the node label keys some pod, DaemonSet or pool requirement reads: nodes carry
	// only these (and the well-known ones) into the solver's snapshots.
	keys map[string]bool
	// topology is set when some shape is not Simple: solver snapshots then carry running pods.
	topology bool

	// placeableOnce computes placeableShape, by shape: whether any instance type of any pool
	// could hold its pods (placeableShapes).
	placeableOnce  sync.Once
	placeableShape []bool

	// overlays are the manifests' NodeOverlays, evaluated over the pools (nil: none).
	overlays *overlay.Evaluation

	// cloudSlot says, by pool and Resources slot, whether some type of the pool has the
	// resource as the cloud sells it, before NodeOverlays add capacity.
	cloudSlot [][scheduling.NumResources]bool
}

// cloudSlots returns, for each Resources slot, whether some instance type of the pool has it
// as the cloud sells it (before NodeOverlays add capacity).
func (env *Env) cloudSlots(pool int) [scheduling.NumResources]bool { return env.cloudSlot[pool] }

// overlay returns the pool's types with the NodeOverlays applied (its as given when there are
// none). The evaluation hands back the same copies for the same types.
func (env *Env) overlay(pool int, its []*catalog.InstanceType) []*catalog.InstanceType {
	if env.overlays == nil {
		return its
	}
	out, err := env.overlays.Apply(env.Pools[pool].Name, its)
	if err != nil {
		return its // every pool was evaluated: not reached
	}
	return out
}

// overlaidOffering returns the pool's overlaid counterpart of a type the cloud launched, and
// the offering it launched through at its overlaid price.
func (env *Env) overlaidOffering(pool int, it *catalog.InstanceType, o catalog.Offering) (*catalog.InstanceType, catalog.Offering) {
	if env.overlays == nil {
		return it, o
	}
	cp := env.overlay(pool, []*catalog.InstanceType{it})[0]
	for _, x := range cp.Offerings {
		if x.Zone == o.Zone && x.CapacityType == o.CapacityType && x.ReservationID == o.ReservationID {
			o.Price = x.Price
			break
		}
	}
	return cp, o
}

// placeable reports whether some instance type of some pool could hold a pod of the shape.
// Runs of several policies share the answer.
func (env *Env) placeable(shape int) bool {
	env.placeableOnce.Do(func() { env.placeableShape = placeableShapes(env) })
	return env.placeableShape[shape]
}

// Pool is a NodePool as the simulation uses it.
type Pool struct {
	Index    int
	Name     string
	NodePool *apisv1.NodePool
	// Class names the cloud class (SimNodeClass) the pool launches through.
	Class string
	// Solver is the pool as the solver takes it; its InstanceTypes are Types, and its usage is
	// filled in per snapshot.
	Solver solver.NodePool
	// Reqs are the template's requirements with the nodepool label and template labels
	// folded in; Taints the taints of its nodes.
	Reqs   scheduling.Requirements
	Taints []corev1.Taint
	Labels map[string]string
	// Types are the instance types the pool's class sells that its requirements allow, each
	// with at least one offering the requirements allow (the types an empty cloud would sell).
	Types []*catalog.InstanceType
	// ConsolidateAfter and ExpireAfter are negative for Never.
	ConsolidateAfter time.Duration
	ExpireAfter      time.Duration
	Policy           apisv1.ConsolidationPolicy
	// Boot, Registration and DevicePlugin are the class's delays (a boot-delay option may
	// replace Boot).
	Registration time.Duration
	DevicePlugin time.Duration
}

// CatalogClassPrefix names the classes of NodePools whose NodeClass is not in the manifests:
// they buy from the embedded catalog of the region.
const CatalogClassPrefix = "catalog:"

// EnvOptions say how to build an Env.
type EnvOptions struct {
	// Region of the embedded catalog for NodePools whose NodeClass is not a SimNodeClass of the
	// manifests ("" is catalog.DefaultRegion).
	Region string
	// Start is the wall-clock time of virtual time 0 (zero: 2026-01-05 00:00 UTC, a Monday).
	Start time.Time
}

// DefaultStart is the wall-clock time virtual time 0 stands for unless EnvOptions.Start says.
var DefaultStart = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// NewEnv resolves the NodePools of set (with the SimNodeClasses it contains) for a workload.
// DaemonSets of set join the workload's.
func NewEnv(set *manifest.Set, w *Workload, opts EnvOptions) (*Env, error) {
	if opts.Start.IsZero() {
		opts.Start = DefaultStart
	}
	e := &Env{Classes: map[string]cloud.ClassConfig{}, Workload: w, Start: opts.Start, keys: map[string]bool{}}
	for _, ds := range set.DaemonSets {
		w.DaemonSets = append(w.DaemonSets, solver.DaemonSet{Namespace: ds.Namespace, Name: ds.Name, Pod: set.DaemonSetPod(ds)})
	}
	classes, err := simNodeClasses(set)
	if err != nil {
		return nil, err
	}
	ec2Classes, err := ec2NodeClasses(set)
	if err != nil {
		return nil, err
	}
	nodeClasses := map[string]*simv1alpha1.SimNodeClass{}
	for _, nc := range classes {
		nodeClasses[nc.Name] = nc
	}
	for _, np := range set.NodePools {
		if np.IsStatic() {
			e.Notes = append(e.Notes, fmt.Sprintf("NodePool %s is static (replicas set): the simulation leaves it out", np.Name))
			continue
		}
		p, err := e.pool(np, nodeClasses, ec2Classes, opts)
		if err != nil {
			return nil, err
		}
		p.Index = len(e.Pools)
		e.Pools = append(e.Pools, p)
	}
	if len(e.Pools) == 0 {
		return nil, fmt.Errorf("the manifests define no dynamic NodePool: tenon can only buy nodes through a NodePool")
	}
	e.cloudSlot = make([][scheduling.NumResources]bool, len(e.Pools))
	for i, p := range e.Pools {
		for _, it := range p.Types {
			for s, v := range it.Capacity {
				e.cloudSlot[i][s] = e.cloudSlot[i][s] || v > 0
			}
		}
	}
	overlays, err := overlay.FromSet(set)
	if err != nil {
		return nil, err
	}
	if len(overlays) > 0 {
		pools := make([]overlay.Pool, len(e.Pools))
		for i, p := range e.Pools {
			pools[i] = overlay.Pool{NodePool: p.NodePool, Types: p.Types}
		}
		e.overlays = overlay.Evaluate(overlays, pools)
		for _, p := range e.Pools {
			p.Types = e.overlay(p.Index, p.Types)
			p.Solver.InstanceTypes = p.Types
		}
		for _, msg := range e.overlays.Problems() {
			e.Notes = append(e.Notes, msg)
		}
		e.Notes = append(e.Notes, fmt.Sprintf("%d NodeOverlay(s) applied to the instance types every policy plans with; nodes are billed at the overlaid prices", len(e.overlays.Applied)))
	}
	for _, sh := range w.Shapes {
		if sh.Pod != nil && scheduling.Expendable(sh.Pod, scheduling.DefaultExpendableCutoff) {
			e.Notes = append(e.Notes, fmt.Sprintf("pods of shape %s have priority %d, below the default expendable cutoff %d: the tenon and node-groups policies buy no capacity for them, karpenter-like does",
				sh.Name, scheduling.Priority(sh.Pod), scheduling.DefaultExpendableCutoff))
		}
	}
	e.collectKeys()
	return e, nil
}

func (e *Env) pool(np *apisv1.NodePool, classes map[string]*simv1alpha1.SimNodeClass, ec2Classes map[string]*awsv1.EC2NodeClass, opts EnvOptions) (*Pool, error) {
	p := &Pool{Name: np.Name, NodePool: np, Taints: np.Spec.Template.Spec.Taints, Labels: np.Spec.Template.Labels,
		ConsolidateAfter: -1, ExpireAfter: -1, Policy: np.Spec.Disruption.ConsolidationPolicy}
	if d := np.Spec.Disruption.ConsolidateAfter; !d.IsNever() {
		p.ConsolidateAfter = *d.Duration
	}
	if d := np.Spec.Template.Spec.ExpireAfter; !d.IsNever() {
		p.ExpireAfter = *d.Duration
	}
	if p.Policy == "" {
		p.Policy = apisv1.ConsolidationPolicyWhenEmptyOrUnderutilized
	}
	ref := np.Spec.Template.Spec.NodeClassRef
	var types []*catalog.InstanceType
	if nc, ok := classes[refName(ref)]; ok && ref.Group == simv1alpha1.Group && ref.Kind == simv1alpha1.SimNodeClassKind {
		p.Class = nc.Name
		if _, done := e.Classes[nc.Name]; !done {
			cfg, err := simulated.OfflineClassConfig(nc)
			if err != nil {
				return nil, fmt.Errorf("nodepool %s: %w", np.Name, err)
			}
			e.Classes[nc.Name] = cfg
		}
		var err error
		if types, err = simulated.OfflineInstanceTypes(nc, np, opts.Start); err != nil {
			return nil, fmt.Errorf("nodepool %s: %w", np.Name, err)
		}
		p.Registration, p.DevicePlugin = nc.Spec.GetRegistrationDelay(), nc.Spec.GetDevicePluginDelay()
	} else if nc, ok := ec2Classes[refName(ref)]; ok && ref.Group == awsv1.Group && ref.Kind == awsv1.EC2NodeClassKind {
		var err error
		if types, err = e.ec2Class(p, nc, opts); err != nil {
			return nil, fmt.Errorf("nodepool %s: %w", np.Name, err)
		}
	} else {
		region := opts.Region
		if region == "" {
			region = catalog.DefaultRegion
		}
		p.Class = CatalogClassPrefix + region
		if _, done := e.Classes[p.Class]; !done {
			cat, err := catalog.Load(region)
			if err != nil {
				return nil, err
			}
			e.Classes[p.Class] = cloud.ClassConfig{Catalog: cat}
		}
		types = e.Classes[p.Class].Catalog.Types
		var spec simv1alpha1.SimNodeClassSpec
		p.Registration, p.DevicePlugin = spec.GetRegistrationDelay(), spec.GetDevicePluginDelay()
		e.Notes = append(e.Notes, fmt.Sprintf("NodePool %s names no SimNodeClass of the manifests: it buys from the embedded %s catalog with the default delays", np.Name, region))
	}
	sp, err := snapshot.NodePool(np, nil, snapshot.Usage{})
	if err != nil {
		return nil, err
	}
	p.Reqs = sp.Requirements.Add(scheduling.In(apisv1.NodePoolLabelKey, np.Name))
	for _, k := range slices.Sorted(maps.Keys(sp.Labels)) {
		p.Reqs = p.Reqs.Add(scheduling.In(k, sp.Labels[k]))
	}
	// The pool's nodes have their GPUs in its MIG layout, if it has one.
	if types, err = catalog.PartitionPool(types, np.Name, np.Spec.Template.Labels); err != nil {
		return nil, err
	}
	q := catalog.NewQuery(sp.Requirements)
	for _, it := range types {
		if q.TypeMatches(it) && q.Cheapest(it) >= 0 {
			p.Types = append(p.Types, it)
		}
	}
	sp.InstanceTypes = p.Types
	p.Solver = sp
	return p, nil
}

func refName(ref *apisv1.NodeClassReference) string {
	if ref == nil {
		return ""
	}
	return ref.Name
}

// collectKeys gathers the label keys requirements read.
func (e *Env) collectKeys() {
	for _, k := range []string{corev1.LabelHostname, apisv1.LabelZone, apisv1.LabelTopologyZoneID, apisv1.CapacityTypeLabelKey,
		apisv1.NodePoolLabelKey, apisv1.LabelInstanceType, apisv1.LabelArch, apisv1.LabelOS, apisv1.LabelCapacityReservationID} {
		e.keys[k] = true
	}
	addReqs := func(rs ...scheduling.Requirements) {
		for _, r := range rs {
			for _, k := range r.Keys() {
				e.keys[k] = true
			}
		}
	}
	addPod := func(p *corev1.Pod) {
		if alts, err := scheduling.PodNodeRequirements(p); err == nil {
			addReqs(alts...)
		}
		if prefs, err := scheduling.PodPreferredNodeRequirements(p); err == nil {
			for _, w := range prefs {
				addReqs(w.Requirements)
			}
		}
		for _, c := range p.Spec.TopologySpreadConstraints {
			e.keys[c.TopologyKey] = true
		}
		if a := p.Spec.Affinity; a != nil {
			if a.PodAffinity != nil {
				for _, t := range a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
					e.keys[t.TopologyKey] = true
				}
				for _, t := range a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
					e.keys[t.PodAffinityTerm.TopologyKey] = true
				}
			}
			if a.PodAntiAffinity != nil {
				for _, t := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
					e.keys[t.TopologyKey] = true
				}
				for _, t := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
					e.keys[t.PodAffinityTerm.TopologyKey] = true
				}
			}
		}
	}
	for i := range e.Workload.Shapes {
		addPod(e.Workload.Shapes[i].Pod)
		e.topology = e.topology || !e.Workload.Shapes[i].Simple()
	}
	for _, d := range e.Workload.DaemonSets {
		addPod(d.Pod)
	}
	for _, p := range e.Pools {
		addReqs(p.Reqs)
	}
}

// GPUModels returns the GPU models (instance-gpu-name and instance-gpu-memory) the catalogs of
// the manifests' NodeClasses sell (whether or not a NodePool allows them), or the region's
// catalog's when the manifests have no SimNodeClass, for TraceOptions.GPUModels.
func GPUModels(set *manifest.Set, region string) ([]GPUModel, error) {
	models := map[GPUModel]bool{}
	add := func(cat *catalog.Catalog) {
		for _, it := range cat.Types {
			n, ok := it.Label(apisv1.LabelInstanceGPUName)
			if !ok || n == "" {
				continue
			}
			m := GPUModel{Name: n}
			if v, ok := it.Label(apisv1.LabelInstanceGPUMemory); ok {
				m.MemoryMiB, _ = strconv.ParseInt(v, 10, 64)
			}
			models[m] = true
		}
	}
	classes, err := simNodeClasses(set)
	if err != nil {
		return nil, err
	}
	for _, nc := range classes {
		cfg, err := simulated.OfflineClassConfig(nc)
		if err != nil {
			return nil, err
		}
		add(cfg.Catalog)
	}
	if len(classes) == 0 {
		cat, err := catalog.Load(region)
		if err != nil {
			return nil, err
		}
		add(cat)
	}
	return slices.SortedFunc(maps.Keys(models), func(a, b GPUModel) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.MemoryMiB, b.MemoryMiB))
	}), nil
}

// simNodeClasses decodes the manifests' SimNodeClasses.
func simNodeClasses(set *manifest.Set) ([]*simv1alpha1.SimNodeClass, error) {
	var out []*simv1alpha1.SimNodeClass
	for _, u := range set.Other {
		if u.GetKind() != simv1alpha1.SimNodeClassKind {
			continue
		}
		nc := &simv1alpha1.SimNodeClass{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, nc); err != nil {
			return nil, fmt.Errorf("SimNodeClass %s: %w", u.GetName(), err)
		}
		out = append(out, nc)
	}
	return out, nil
}

package simulated

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// resolvedClass is a SimNodeClass generation resolved against the catalog.
type resolvedClass struct {
	name       string
	uid        types.UID
	generation int64
	// err is why the class does not resolve (a *cloudprovider.NodeClassNotReadyError); the
	// other fields are unset then.
	err        error
	cfg        cloud.ClassConfig
	zones      []string // names
	targeted   map[string]bool
	labels     map[string]string
	tags       map[string]string
	hash       string
	rootVolume int64
}

// class returns the resolved SimNodeClass a reference names, resolving it when its generation
// changed. The error is a *cloudprovider.NodeClassNotReadyError when the reference is not to a
// SimNodeClass, the object is missing or being deleted, or its spec does not resolve.
func (p *Provider) class(ctx context.Context, ref *apisv1.NodeClassReference) (*resolvedClass, error) {
	if ref == nil {
		return nil, &cloudprovider.NodeClassNotReadyError{Reason: "the nodeClassRef is missing"}
	}
	if ref.Group != simv1alpha1.Group || ref.Kind != simv1alpha1.SimNodeClassKind {
		return nil, &cloudprovider.NodeClassNotReadyError{NodeClass: ref.Name,
			Reason: fmt.Sprintf("the simulated provider serves %s %s, not %s %s", simv1alpha1.Group, simv1alpha1.SimNodeClassKind, ref.Group, ref.Kind)}
	}
	nc := &simv1alpha1.SimNodeClass{}
	if err := p.client.Get(ctx, types.NamespacedName{Name: ref.Name}, nc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &cloudprovider.NodeClassNotReadyError{NodeClass: ref.Name, Reason: "SimNodeClass not found"}
		}
		return nil, fmt.Errorf("getting SimNodeClass %s: %w", ref.Name, err)
	}
	if !nc.DeletionTimestamp.IsZero() {
		return nil, &cloudprovider.NodeClassNotReadyError{NodeClass: nc.Name, Reason: "SimNodeClass is being deleted"}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	rc := p.useClass(nc)
	return rc, rc.err
}

// useClass returns the resolved class of nc, resolving it and configuring the model when its
// generation is new; callers hold p.mu.
func (p *Provider) useClass(nc *simv1alpha1.SimNodeClass) *resolvedClass {
	if rc := p.classes[nc.Name]; rc != nil && rc.uid == nc.UID && rc.generation == nc.Generation {
		return rc
	}
	rc, err := resolve(nc)
	if err == nil {
		err = p.cloud.SetClass(nc.Name, rc.cfg)
	}
	if err != nil {
		rc = &resolvedClass{name: nc.Name, err: &cloudprovider.NodeClassNotReadyError{NodeClass: nc.Name, Reason: err.Error()}}
	}
	rc.uid, rc.generation = nc.UID, nc.Generation
	p.classes[nc.Name] = rc
	p.poke()
	return rc
}

// resolve turns a SimNodeClass into the model's class configuration, checking what the CRD
// schema cannot: zones, instance types and label keys.
func resolve(nc *simv1alpha1.SimNodeClass) (*resolvedClass, error) {
	spec := &nc.Spec
	rc := &resolvedClass{
		name: nc.Name, targeted: map[string]bool{}, labels: spec.Labels, tags: spec.Tags,
		hash: nc.Hash(), rootVolume: spec.GetRootVolumeSize(),
	}
	if err := validateLabels(spec.Labels); err != nil {
		return nil, err
	}
	opts := []catalog.Option{catalog.WithRootVolume(rc.rootVolume)}
	if len(spec.Zones) > 0 {
		opts = append(opts, catalog.WithZones(spec.Zones...))
	}
	for _, r := range spec.Reservations {
		opts = append(opts, catalog.WithReservations(catalog.Reservation{ID: r.ID, InstanceType: r.InstanceType, Zone: r.Zone, Count: int(r.Count)}))
		if r.Type == simv1alpha1.ReservationTargeted {
			rc.targeted[r.ID] = true
		}
	}
	for _, b := range spec.CapacityBlocks {
		opts = append(opts, catalog.WithReservations(catalog.Reservation{ID: b.ID, InstanceType: b.InstanceType, Zone: b.Zone,
			Count: int(b.Count), Window: catalog.Window{Start: b.Start.Time, End: b.End.Time}}))
	}
	for i, o := range spec.PriceOverrides {
		po, err := priceOverride(o)
		if err != nil {
			return nil, fmt.Errorf("price override %d: %w", i, err)
		}
		opts = append(opts, catalog.WithPriceOverrides(po))
	}
	cat, err := catalog.Load(spec.GetRegion(), opts...)
	if err != nil {
		return nil, err
	}
	for _, z := range cat.Zones {
		rc.zones = append(rc.zones, z.Name)
	}
	pools, err := capacityPools(spec.CapacityPools, cat)
	if err != nil {
		return nil, err
	}
	in := &spec.Interruptions
	spot := cloud.SpotNone
	if in.GetSpotInterruptionModel() == simv1alpha1.SpotInterruptionAdvisor {
		spot = cloud.SpotAdvisor
	}
	rc.cfg = cloud.ClassConfig{
		Catalog: cat,
		Pools:   pools,
		Delays: cloud.Delays{Boot: spec.GetBootDelay(), Registration: spec.GetRegistrationDelay(),
			DevicePlugin: spec.GetDevicePluginDelay(), Shutdown: spec.GetShutdownDelay()},
		Interruptions: cloud.Interruptions{
			Spot: spot, Seed: in.Seed, Scale: float64(in.GetScalePercent()) / 100,
			RebalanceLead: in.GetRebalanceLead(), MaintenanceInterval: in.GetMaintenanceInterval(),
			MaintenanceNotice: in.GetMaintenanceNotice(),
		},
	}
	for id := range rc.targeted {
		rc.cfg.Targeted = append(rc.cfg.Targeted, id)
	}
	slices.Sort(rc.cfg.Targeted)
	return rc, nil
}

func capacityPools(specs []simv1alpha1.CapacityPool, cat *catalog.Catalog) ([]cloud.Pool, error) {
	var pools []cloud.Pool
	for i, sp := range specs {
		match, err := requirements(sp.Requirements)
		if err != nil {
			return nil, fmt.Errorf("capacity pool %d: %w", i, err)
		}
		if sp.InstanceType != "" {
			if _, ok := cat.Get(sp.InstanceType); !ok {
				return nil, fmt.Errorf("capacity pool %d: instance type %q is not sold in %s", i, sp.InstanceType, cat.Region)
			}
			match = match.Add(scheduling.In(apisv1.LabelInstanceType, sp.InstanceType))
		}
		if sp.Zone != "" {
			z, ok := cat.Zone(sp.Zone)
			if !ok {
				return nil, fmt.Errorf("capacity pool %d: zone %q is not one of the class's zones", i, sp.Zone)
			}
			match = match.Add(scheduling.In(apisv1.LabelZone, z.Name))
		}
		if sp.CapacityType != "" {
			match = match.Add(scheduling.In(apisv1.CapacityTypeLabelKey, sp.CapacityType))
		}
		pools = append(pools, cloud.Pool{Match: match, Capacity: int(sp.Capacity)})
	}
	return pools, nil
}

func priceOverride(o simv1alpha1.PriceOverride) (catalog.PriceOverride, error) {
	match, err := requirements(o.Requirements)
	if err != nil {
		return catalog.PriceOverride{}, err
	}
	if o.Price != "" {
		v, err := strconv.ParseFloat(o.Price, 64)
		if err != nil {
			return catalog.PriceOverride{}, fmt.Errorf("price %q: %w", o.Price, err)
		}
		return catalog.FixedPrice(match, v), nil
	}
	v, err := strconv.ParseFloat(o.Percent, 64)
	if err != nil {
		return catalog.PriceOverride{}, fmt.Errorf("percent %q: %w", o.Percent, err)
	}
	return catalog.AdjustPrice(match, v), nil
}

func requirements(rs []simv1alpha1.Requirement) (scheduling.Requirements, error) {
	var out scheduling.Requirements
	for i, r := range rs {
		req, err := scheduling.NewRequirement(scheduling.NormalizeKey(r.Key), r.Operator, r.Values...)
		if err != nil {
			return scheduling.Requirements{}, fmt.Errorf("requirement %d: %w", i, err)
		}
		out = out.Add(req)
	}
	return out, nil
}

func validateLabels(labels map[string]string) error {
	for k, v := range labels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("label key %q: %s", k, errs[0])
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return fmt.Errorf("label %s value %q: %s", k, v, errs[0])
		}
		if apisv1.IsRestrictedNodeLabel(k) {
			return fmt.Errorf("label %s is restricted: the cloud or tenon sets it", k)
		}
	}
	return nil
}

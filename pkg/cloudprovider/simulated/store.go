package simulated

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
)

// simInstance is the object that records inst.
func simInstance(inst cloud.Instance, m *instanceMeta) *simv1alpha1.SimInstance {
	labels := map[string]string{simv1alpha1.NodeClassLabelKey: inst.Class}
	if inst.NodeClaim != "" {
		labels[simv1alpha1.NodeClaimLabelKey] = inst.NodeClaim
	}
	if np, ok := m.nodeLabels[apisv1.NodePoolLabelKey]; ok {
		labels[apisv1.NodePoolLabelKey] = np
	}
	return &simv1alpha1.SimInstance{
		ObjectMeta: metav1.ObjectMeta{
			Name:        inst.ID,
			Labels:      labels,
			Annotations: map[string]string{apisv1.NodeClassHashAnnotationKey: m.hash},
		},
		Spec: simv1alpha1.SimInstanceSpec{
			NodeClaim:     inst.NodeClaim,
			NodeClass:     inst.Class,
			Region:        inst.Region,
			Zone:          inst.Offering.Zone,
			ZoneID:        inst.Offering.ZoneID,
			InstanceType:  inst.Type.Name,
			CapacityType:  inst.Offering.CapacityType,
			Price:         strconv.FormatFloat(inst.Offering.Price, 'f', -1, 64),
			ReservationID: inst.Offering.ReservationID,
			ImageID:       m.imageID,
			LaunchTime:    metav1.NewMicroTime(inst.Launched),
			NodeLabels:    m.nodeLabels,
			Taints:        m.taints,
			StartupTaints: m.startupTaints,
		},
	}
}

// instanceStatus is the SimInstance status of inst.
func instanceStatus(inst cloud.Instance, nodeName string) simv1alpha1.SimInstanceStatus {
	s := simv1alpha1.SimInstanceStatus{Phase: simv1alpha1.InstancePhase(inst.State.String()), NodeName: nodeName}
	if !inst.TerminatingAt.IsZero() {
		t := metav1.NewMicroTime(inst.TerminatingAt)
		s.TerminationTime, s.TerminationReason = &t, string(inst.Reason)
	}
	if p := inst.Interruption; !p.IsZero() {
		s.Interruption = &simv1alpha1.InterruptionStatus{
			Kind: string(p.Kind), Reason: string(p.Reason), Injected: p.Injected,
			NoticeTime: metav1.NewMicroTime(p.Notice), Deadline: metav1.NewMicroTime(p.Deadline),
		}
	}
	return s
}

// writeStatus replaces the SimInstance's status with a merge patch.
func (p *Provider) writeStatus(ctx context.Context, id string, status simv1alpha1.SimInstanceStatus) error {
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return err
	}
	obj := &simv1alpha1.SimInstance{ObjectMeta: metav1.ObjectMeta{Name: id}}
	return p.client.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))
}

// persistLaunch creates the SimInstance of a new instance and writes its first status. A
// SimInstance that already exists under the instance's ID is the record of an earlier attempt
// whose response was lost (instance IDs are never reused), so only the status is written.
func (p *Provider) persistLaunch(ctx context.Context, obj *simv1alpha1.SimInstance, status simv1alpha1.SimInstanceStatus) error {
	if err := p.client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("recording instance %s: %w", obj.Name, err)
	}
	if err := p.writeStatus(ctx, obj.Name, status); err != nil {
		return fmt.Errorf("recording the status of instance %s: %w", obj.Name, err)
	}
	return nil
}

// restore rebuilds the model from the SimInstance objects; callers hold p.mu. A class whose
// SimNodeClass is gone or does not resolve is configured from the plain catalog of the
// instance's region with default delays, so its instances keep running.
func (p *Provider) restore(ctx context.Context) error {
	var list simv1alpha1.SimInstanceList
	if err := p.reader.List(ctx, &list); err != nil {
		return err
	}
	for i := range list.Items {
		obj := &list.Items[i]
		if err := p.restoreOne(ctx, obj); err != nil {
			return fmt.Errorf("SimInstance %s: %w", obj.Name, err)
		}
	}
	return nil
}

func (p *Provider) restoreOne(ctx context.Context, obj *simv1alpha1.SimInstance) error {
	spec := &obj.Spec
	rc := p.restoreClass(ctx, spec.NodeClass)
	var cat *catalog.Catalog
	if rc != nil {
		cat = rc.cfg.Catalog
	} else {
		var err error
		if cat, err = p.regionCatalog(spec.Region); err != nil {
			return err
		}
		if !p.cloud.HasClass(spec.NodeClass) {
			if err := p.cloud.SetClass(spec.NodeClass, fallbackConfig(cat)); err != nil {
				return err
			}
		}
	}
	it, ok := cat.Get(spec.InstanceType)
	if !ok {
		plain, err := p.regionCatalog(spec.Region)
		if err != nil {
			return err
		}
		if it, ok = plain.Get(spec.InstanceType); !ok {
			return fmt.Errorf("instance type %q is not in the %s catalog", spec.InstanceType, spec.Region)
		}
	}
	// The node's GPUs are in the MIG layout its labels name, as at launch.
	it, err := catalog.PartitionGPUs(it, spec.NodeLabels[catalog.LabelMIGConfig])
	if err != nil {
		return fmt.Errorf("SimInstance %s: %w", obj.Name, err)
	}
	price, err := strconv.ParseFloat(spec.Price, 64)
	if err != nil {
		return fmt.Errorf("price %q: %w", spec.Price, err)
	}
	rec := cloud.Record{
		ID: obj.Name, Class: spec.NodeClass, NodeClaim: spec.NodeClaim, Region: spec.Region, Type: it,
		Offering: catalog.Offering{Zone: spec.Zone, ZoneID: spec.ZoneID, CapacityType: spec.CapacityType, Price: price,
			Available: true, ReservationID: spec.ReservationID},
		Launched: spec.LaunchTime.Time,
	}
	st := &obj.Status
	if st.Phase != "" {
		if rec.State, err = cloud.ParseState(string(st.Phase)); err != nil {
			return err
		}
	}
	if st.TerminationTime != nil {
		rec.TerminatingAt, rec.Reason = st.TerminationTime.Time, cloud.Reason(st.TerminationReason)
	}
	if in := st.Interruption; in != nil {
		rec.Interruption = cloud.Interruption{Kind: cloudprovider.InterruptionKind(in.Kind), Reason: cloud.Reason(in.Reason),
			Notice: in.NoticeTime.Time, Deadline: in.Deadline.Time, Injected: in.Injected}
	}
	if err := p.cloud.Restore(rec); err != nil {
		return err
	}
	p.meta[obj.Name] = &instanceMeta{
		nodeLabels: spec.NodeLabels, taints: spec.Taints, startupTaints: spec.StartupTaints,
		hash: obj.Annotations[apisv1.NodeClassHashAnnotationKey], imageID: spec.ImageID, status: *st.DeepCopy(),
		nodeCreated: st.NodeName != "", recorded: true,
	}
	return nil
}

// restoreClass resolves the named SimNodeClass for a restore, or returns nil when it is missing
// or does not resolve; callers hold p.mu.
func (p *Provider) restoreClass(ctx context.Context, name string) *resolvedClass {
	nc := &simv1alpha1.SimNodeClass{}
	if err := p.reader.Get(ctx, types.NamespacedName{Name: name}, nc); err != nil {
		return nil
	}
	if rc := p.useClass(nc); rc.err == nil {
		return rc
	}
	return nil
}

func (p *Provider) regionCatalog(region string) (*catalog.Catalog, error) {
	if c, ok := p.regions[region]; ok {
		return c, nil
	}
	c, err := catalog.Load(region)
	if err != nil {
		return nil, err
	}
	p.regions[region] = c
	return c, nil
}

// fallbackConfig is the class configuration of instances whose SimNodeClass is gone.
func fallbackConfig(cat *catalog.Catalog) cloud.ClassConfig {
	var spec simv1alpha1.SimNodeClassSpec
	return cloud.ClassConfig{
		Catalog: cat,
		Delays: cloud.Delays{Boot: spec.GetBootDelay(), Registration: spec.GetRegistrationDelay(),
			DevicePlugin: spec.GetDevicePluginDelay(), Shutdown: spec.GetShutdownDelay()},
		Interruptions: cloud.Interruptions{MaintenanceNotice: spec.Interruptions.GetMaintenanceNotice()},
	}
}

// deleteRecord deletes a SimInstance; one already gone is fine.
func (p *Provider) deleteRecord(ctx context.Context, id string) error {
	err := p.client.Delete(ctx, &simv1alpha1.SimInstance{ObjectMeta: metav1.ObjectMeta{Name: id}})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

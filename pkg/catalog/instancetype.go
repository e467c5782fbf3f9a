package catalog

import (
	"fmt"
	"maps"
	"strconv"
	"sync"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// ResourceHabanaGaudi is the extended resource a Habana Gaudi node advertises per device.
const ResourceHabanaGaudi = "habana.ai/gaudi"

// InstanceType is a machine shape the cloud sells, with everything the solver needs about it.
// Instance types are built once (by Load, New or NewInstanceType) and shared; treat them as
// read-only, except that a simulated cloud may update its offerings' Available and
// ReservationCapacity in place.
type InstanceType struct {
	Name  string
	Shape Shape
	// Requirements holds key In [value] for every label the type decides, DoesNotExist for the
	// catalog's labels it lacks (no GPU, no local NVMe, ...), and In over the zones, zone IDs and
	// capacity types of its offerings. The reservation-ID label is In the reservation IDs when
	// every offering is reserved, DoesNotExist when none is, and unconstrained otherwise.
	Requirements scheduling.Requirements
	// Capacity is what the instance has: CPU, memory, pods, ephemeral storage (the root volume)
	// and devices.
	Capacity scheduling.Resources
	Overhead Overhead
	// Offerings are the ways to buy the type. Load puts on-demand first, then spot, each in zone
	// order, then reserved in the order of the reservations.
	Offerings []Offering
	// SpotAdvice is the Spot Instance Advisor's record for the type in its region.
	SpotAdvice SpotAdvice

	labels map[string]string
}

// Allocatable is Capacity − Overhead: what pods may request on a node of this type.
func (it *InstanceType) Allocatable() scheduling.Resources {
	return it.Capacity.Sub(it.Overhead.Total())
}

// Labels returns the labels every node of this type carries (instance type, arch, os, region and
// the instance-shape labels), as a new map. The offering decides the rest: see NodeLabels.
func (it *InstanceType) Labels() map[string]string { return maps.Clone(it.labels) }

// Label returns the value of one of the type's own labels.
func (it *InstanceType) Label(key string) (string, bool) {
	v, ok := it.labels[key]
	return v, ok
}

// NodeLabels returns the labels of a node of this type bought through offering o.
func (it *InstanceType) NodeLabels(o *Offering) map[string]string {
	l := it.Labels()
	if l == nil {
		// Types built as struct literals (tests, synthetic catalogs) have no label map: their
		// single-valued requirements are their labels.
		l = map[string]string{}
		for _, r := range it.Requirements.Items() {
			if vs := r.Values(); !r.IsComplement() && len(vs) == 1 {
				l[r.Key] = vs[0]
			}
		}
	}
	maps.Copy(l, o.Labels())
	return l
}

// OnDemandPrice returns the lowest on-demand price among the type's offerings.
func (it *InstanceType) OnDemandPrice() (float64, bool) {
	price, ok := 0.0, false
	for i := range it.Offerings {
		if o := &it.Offerings[i]; o.CapacityType == apisv1.CapacityTypeOnDemand && (!ok || o.Price < price) {
			price, ok = o.Price, true
		}
	}
	return price, ok
}

func (it *InstanceType) String() string { return it.Name }

// NewInstanceType derives a type's labels, requirements, capacity and overhead from its shape
// and takes ownership of offerings. Only WithRootVolume and WithOverhead among the options
// matter here. It fails when a device resource cannot be given a resource slot.
func NewInstanceType(name, region string, shape Shape, offerings []Offering, opts ...Option) (*InstanceType, error) {
	s := newSettings(opts)
	return buildType(name, region, shape, typeLabels(name, region, &shape), offerings, &s)
}

// buildType assembles a type from its shape, its labels (typeLabels of the same shape) and its
// offerings.
func buildType(name, region string, shape Shape, labels map[string]string, offerings []Offering, s *settings) (*InstanceType, error) {
	it := &InstanceType{Name: name, Shape: shape, Offerings: offerings, labels: labels}
	it.Requirements = typeRequirements(it.labels, offerings)
	capacity, err := shapeCapacity(&it.Shape, s.rootVolume)
	if err != nil {
		return nil, fmt.Errorf("instance type %s: %w", name, err)
	}
	it.Capacity = capacity
	it.Overhead = ComputeOverhead(&it.Shape, s.rootVolume, s.overhead)
	return it, nil
}

// typeLabelKeys are the labels the catalog decides from a shape; a type lacking one gets a
// DoesNotExist requirement on it, so that asking for a GPU never matches a type without one.
// At most 32 keys, so that a set of them fits the uint32 mask of absentRequirements.
var typeLabelKeys = []string{
	apisv1.LabelInstanceType, apisv1.LabelArch, apisv1.LabelOS, apisv1.LabelRegion,
	apisv1.LabelInstanceCategory, apisv1.LabelInstanceFamily, apisv1.LabelInstanceGeneration,
	apisv1.LabelInstanceSize, apisv1.LabelInstanceCPU, apisv1.LabelInstanceCPUManufacturer,
	apisv1.LabelInstanceMemory, apisv1.LabelInstanceNetworkBandwidth, apisv1.LabelInstanceLocalNVME,
	apisv1.LabelInstanceHypervisor, apisv1.LabelInstanceEBSBandwidth,
	apisv1.LabelInstanceGPUName, apisv1.LabelInstanceGPUCount, apisv1.LabelInstanceGPUManufacturer,
	apisv1.LabelInstanceGPUMemory,
	apisv1.LabelInstanceAcceleratorName, apisv1.LabelInstanceAcceleratorCount, apisv1.LabelInstanceAcceleratorMfr,
}

func typeLabels(name, region string, s *Shape) map[string]string {
	l := make(map[string]string, len(typeLabelKeys))
	set := func(key, v string) {
		if v != "" {
			l[key] = v
		}
	}
	num := func(key string, n int64) {
		if n > 0 {
			l[key] = strconv.FormatInt(n, 10)
		}
	}
	set(apisv1.LabelInstanceType, name)
	set(apisv1.LabelArch, s.Arch)
	set(apisv1.LabelOS, apisv1.OSLinux)
	set(apisv1.LabelRegion, region)
	set(apisv1.LabelInstanceCategory, s.Category)
	set(apisv1.LabelInstanceFamily, s.Family)
	num(apisv1.LabelInstanceGeneration, int64(s.Generation))
	set(apisv1.LabelInstanceSize, s.Size)
	num(apisv1.LabelInstanceCPU, int64(s.VCPU))
	set(apisv1.LabelInstanceCPUManufacturer, s.CPUManufacturer)
	num(apisv1.LabelInstanceMemory, s.MemoryMiB)
	num(apisv1.LabelInstanceNetworkBandwidth, s.NetworkBandwidthMbps)
	num(apisv1.LabelInstanceLocalNVME, s.LocalNVMeGB)
	set(apisv1.LabelInstanceHypervisor, s.Hypervisor)
	num(apisv1.LabelInstanceEBSBandwidth, s.EBSBandwidthMbps)
	if s.GPUCount > 0 {
		set(apisv1.LabelInstanceGPUName, s.GPUName)
		num(apisv1.LabelInstanceGPUCount, int64(s.GPUCount))
		set(apisv1.LabelInstanceGPUManufacturer, s.GPUManufacturer)
		num(apisv1.LabelInstanceGPUMemory, s.GPUMemoryMiB)
	}
	if s.AcceleratorCount > 0 {
		set(apisv1.LabelInstanceAcceleratorName, s.AcceleratorName)
		num(apisv1.LabelInstanceAcceleratorCount, int64(s.AcceleratorCount))
		set(apisv1.LabelInstanceAcceleratorMfr, s.AcceleratorManufacturer)
	}
	return l
}

func typeRequirements(labels map[string]string, offerings []Offering) scheduling.Requirements {
	var mask uint32
	for i, k := range typeLabelKeys {
		if _, ok := labels[k]; !ok {
			mask |= 1 << i
		}
	}
	// In copies its values, so one scratch slice serves every key.
	scratch := make([]string, len(offerings))
	values := func(f func(o *Offering) string) []string {
		for i := range offerings {
			scratch[i] = f(&offerings[i])
		}
		return scratch
	}
	zones := scheduling.In(apisv1.LabelZone, values(func(o *Offering) string { return o.Zone })...)
	zoneIDs := scheduling.In(apisv1.LabelTopologyZoneID, values(func(o *Offering) string { return o.ZoneID })...)
	types := scheduling.In(apisv1.CapacityTypeLabelKey, values(func(o *Offering) string { return o.CapacityType })...)
	var reservations []string
	for i := range offerings {
		if id := offerings[i].ReservationID; id != "" {
			reservations = append(reservations, id)
		}
	}
	var res scheduling.Requirement
	switch {
	case len(reservations) == 0:
		res = scheduling.DoesNotExist(apisv1.LabelCapacityReservationID)
	case len(reservations) == len(offerings):
		res = scheduling.In(apisv1.LabelCapacityReservationID, reservations...)
	default:
		res = scheduling.Unconstrained(apisv1.LabelCapacityReservationID)
	}
	offered := absentRequirements(mask).Intersect(scheduling.NewRequirements(zones, zoneIDs, types, res))
	return scheduling.FromLabels(labels).Intersect(offered)
}

// absentCache holds, per set of absent typeLabelKeys (a bit mask), their DoesNotExist
// requirements. Few distinct sets occur, and Requirements are immutable, so types share them.
var absentCache sync.Map // uint32 → scheduling.Requirements

func absentRequirements(mask uint32) scheduling.Requirements {
	if v, ok := absentCache.Load(mask); ok {
		return v.(scheduling.Requirements)
	}
	var rs []scheduling.Requirement
	for i, k := range typeLabelKeys {
		if mask&(1<<i) != 0 {
			rs = append(rs, scheduling.DoesNotExist(k))
		}
	}
	reqs := scheduling.NewRequirements(rs...)
	absentCache.Store(mask, reqs)
	return reqs
}

func shapeCapacity(s *Shape, rootVolume int64) (scheduling.Resources, error) {
	var r scheduling.Resources
	r[scheduling.CPU] = int64(s.VCPU) * 1000
	r[scheduling.Memory] = s.MemoryMiB * MiB
	r[scheduling.Pods] = int64(s.MaxPods)
	r[scheduling.EphemeralStorage] = rootVolume
	r[scheduling.EFA] = int64(s.EFA)
	if s.GPUCount > 0 {
		switch s.GPUManufacturer {
		case "nvidia":
			r[scheduling.NvidiaGPU] = int64(s.GPUCount)
		case "amd":
			r[scheduling.AMDGPU] = int64(s.GPUCount)
		case "habana":
			slot, err := scheduling.InternResource(ResourceHabanaGaudi)
			if err != nil {
				return r, err
			}
			r[slot] = int64(s.GPUCount)
		}
	}
	if s.IsNeuron() {
		r[scheduling.Neuron] = int64(s.AcceleratorCount)
		r[scheduling.NeuronCore] = int64(s.NeuronCores)
	}
	return r, nil
}

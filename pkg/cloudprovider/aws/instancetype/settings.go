package instancetype

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// settings are what a NodeClass's spec changes in its instance types.
type settings struct {
	family      string
	maxPods     *int32
	podsPerCore int32
	// kubeReserved and systemReserved hold the kubelet's reservations; set says which slots
	// kubeReserved replaces.
	kubeReserved, systemReserved scheduling.Resources
	kubeReservedSet              [scheduling.EphemeralStorage + 1]bool
	evictMemory, evictNodeFS     threshold
	rootVolume                   int64 // bytes
	raid0                        bool
	// vmMemoryOverhead, when above zero, replaces the catalog's fraction of memory lost to the
	// hypervisor (Options.VMMemoryOverheadPercent).
	vmMemoryOverhead float64
}

// threshold is an eviction signal's value: a fraction of the capacity, or an amount.
type threshold struct {
	set      bool
	fraction float64
	amount   int64
	percent  bool
}

// of returns the threshold against a capacity, or def when unset.
func (t threshold) of(capacity, def int64) int64 {
	switch {
	case !t.set:
		return def
	case t.percent:
		return int64(math.Ceil(float64(capacity) * t.fraction))
	}
	return t.amount
}

// Root volumes of the AMI families: the device the kubelet's data lives on and its default
// size.
const defaultRootVolume = 20 * catalog.GiB

func familyDevice(family string) string {
	switch family {
	case awsv1.AMIFamilyBottlerocket:
		return "/dev/xvdb"
	case awsv1.AMIFamilyWindows2019, awsv1.AMIFamilyWindows2022, awsv1.AMIFamilyWindows2025:
		return "/dev/sda1"
	}
	return "/dev/xvda"
}

// parseSettings reads the parts of the NodeClass's spec that shape its instance types. Errors
// name the NodeClass and the field.
func parseSettings(nc *awsv1.EC2NodeClass) (settings, error) {
	s := settings{family: nc.AMIFamily(), rootVolume: defaultRootVolume}
	fail := func(field string, err error) (settings, error) {
		return settings{}, fmt.Errorf("instancetype: EC2NodeClass %s: %s: %w", nc.Name, field, err)
	}
	if strings.HasPrefix(s.family, "Windows") {
		return fail("amiFamily", fmt.Errorf("%s nodes are not supported yet: tenon's instance types are Linux only", s.family))
	}
	if k := nc.Spec.Kubelet; k != nil {
		s.maxPods = k.MaxPods
		if k.PodsPerCore != nil {
			s.podsPerCore = *k.PodsPerCore
		}
		if s.maxPods != nil && *s.maxPods < 0 || s.podsPerCore < 0 {
			return fail("spec.kubelet", fmt.Errorf("maxPods and podsPerCore cannot be negative"))
		}
		var err error
		var set [scheduling.EphemeralStorage + 1]bool
		if s.kubeReserved, set, err = reservation(k.KubeReserved); err != nil {
			return fail("spec.kubelet.kubeReserved", err)
		}
		s.kubeReservedSet = set
		if s.systemReserved, _, err = reservation(k.SystemReserved); err != nil {
			return fail("spec.kubelet.systemReserved", err)
		}
		for signal, v := range k.EvictionHard {
			t, err := parseThreshold(v)
			if err != nil {
				return fail("spec.kubelet.evictionHard["+signal+"]", err)
			}
			switch signal {
			case "memory.available":
				s.evictMemory = t
			case "nodefs.available":
				s.evictNodeFS = t
			}
		}
	}
	if p := nc.Spec.InstanceStorePolicy; p != nil && *p == awsv1.InstanceStorePolicyRAID0 {
		s.raid0 = true
	}
	size, err := rootVolume(nc.Spec.BlockDeviceMappings, s.family)
	if err != nil {
		return fail("spec.blockDeviceMappings", err)
	}
	if size > 0 {
		s.rootVolume = size
	}
	return s, nil
}

// rootVolume is the size of the volume the kubelet's data lives on (0: the default): the
// mapping marked rootVolume, else for Custom the last mapping, else the family's data device.
func rootVolume(bdms []*awsv1.BlockDeviceMapping, family string) (int64, error) {
	size := func(b *awsv1.BlockDeviceMapping) (int64, bool, error) {
		if b == nil || b.EBS == nil || b.EBS.VolumeSize == nil {
			return 0, false, nil
		}
		v, _, err := scheduling.Amount(scheduling.EphemeralStorage, *b.EBS.VolumeSize)
		return v, true, err
	}
	for _, b := range bdms {
		if b != nil && b.RootVolume {
			v, _, err := size(b)
			return v, err
		}
	}
	if len(bdms) == 0 {
		return 0, nil
	}
	if family == awsv1.AMIFamilyCustom {
		v, _, err := size(bdms[len(bdms)-1])
		return v, err
	}
	for _, b := range bdms {
		if b != nil && b.DeviceName != nil && *b.DeviceName == familyDevice(family) {
			v, _, err := size(b)
			return v, err
		}
	}
	return 0, nil
}

// reservation converts a kubeReserved or systemReserved map; pid has no slot (tenon does not
// schedule process IDs) and is ignored.
func reservation(m map[string]string) (scheduling.Resources, [scheduling.EphemeralStorage + 1]bool, error) {
	var r scheduling.Resources
	var set [scheduling.EphemeralStorage + 1]bool
	for k, v := range m {
		var slot int
		switch k {
		case "cpu":
			slot = scheduling.CPU
		case "memory":
			slot = scheduling.Memory
		case "ephemeral-storage":
			slot = scheduling.EphemeralStorage
		case "pid":
			continue
		default:
			return r, set, fmt.Errorf("unknown resource %q (cpu, memory, ephemeral-storage, pid)", k)
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return r, set, fmt.Errorf("%s: %q: %w", k, v, err)
		}
		n, _, err := scheduling.Amount(slot, q)
		if err != nil {
			return r, set, fmt.Errorf("%s: %w", k, err)
		}
		r[slot], set[slot] = n, true
	}
	return r, set, nil
}

// parseThreshold reads an eviction threshold: a percentage ("10%"; 100% disables it, as the
// kubelet's configuration says) or a quantity.
func parseThreshold(v string) (threshold, error) {
	if p, ok := strings.CutSuffix(v, "%"); ok {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || f < 0 || f > 100 || math.IsNaN(f) {
			return threshold{}, fmt.Errorf("%q is not a percentage", v)
		}
		if f == 100 {
			f = 0
		}
		return threshold{set: true, percent: true, fraction: f / 100}, nil
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return threshold{}, fmt.Errorf("%q: %w", v, err)
	}
	n, _, err := scheduling.Amount(scheduling.Memory, q)
	if err != nil {
		return threshold{}, err
	}
	return threshold{set: true, amount: n}, nil
}

// pods is the pod capacity of a type under the settings.
func (s *settings) pods(sh *catalog.Shape) int64 {
	n := int64(sh.MaxPods) // the VPC CNI limit
	if s.maxPods != nil {
		n = int64(*s.maxPods)
	}
	if s.podsPerCore > 0 && s.family != awsv1.AMIFamilyBottlerocket {
		n = min(n, int64(s.podsPerCore)*int64(sh.VCPU))
	}
	return n
}

// overheadConfig is the catalog's overhead model with the NodeClass's kubelet settings, for a
// type whose pod capacity is pods and whose root volume is volume bytes.
func (s *settings) overheadConfig(sh *catalog.Shape, pods, volume int64) catalog.OverheadConfig {
	cfg := catalog.DefaultOverheadConfig()
	if s.vmMemoryOverhead > 0 {
		cfg.VMMemoryOverheadPercent = s.vmMemoryOverhead
	}
	// Kube-reserved memory follows the ENI-limited pod count on AL2, AL2023 and Custom whatever
	// maxPods says, and the pod count on Bottlerocket.
	memPods := int64(sh.MaxPods)
	if s.family == awsv1.AMIFamilyBottlerocket {
		memPods = pods
	}
	kr, set := s.kubeReserved, s.kubeReservedSet
	cfg.KubeReserved = func(sh *catalog.Shape) scheduling.Resources {
		shape := *sh
		shape.MaxPods = int(memPods)
		r := catalog.DefaultKubeReserved(&shape)
		for slot, ok := range set {
			if ok {
				r[slot] = kr[slot]
			}
		}
		return r
	}
	cfg.SystemReserved = s.systemReserved
	// The memory threshold's percentage is of the memory the operating system sees.
	vm := catalog.ComputeOverhead(sh, volume, cfg).VM[scheduling.Memory]
	cfg.EvictionMemory = s.evictMemory.of(sh.MemoryMiB*catalog.MiB-vm, cfg.EvictionMemory)
	if s.evictNodeFS.set && s.evictNodeFS.percent {
		cfg.EvictionEphemeralFraction = s.evictNodeFS.fraction
	}
	return cfg
}

package catalog

import (
	"math"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// Binary size units, in bytes.
const (
	MiB int64 = 1 << 20
	GiB int64 = 1 << 30
)

// DefaultRootVolume is the root volume an instance boots with unless WithRootVolume says
// otherwise; it is the node's ephemeral-storage capacity.
const DefaultRootVolume = 20 * GiB

// Overhead is what a node keeps back from its pods. Allocatable = Capacity − Overhead.Total().
type Overhead struct {
	// KubeReserved is held for the kubelet and container runtime.
	KubeReserved scheduling.Resources
	// SystemReserved is held for operating-system daemons.
	SystemReserved scheduling.Resources
	// EvictionThreshold is the kubelet's hard eviction threshold: pods are evicted before the
	// free amount falls below it, so pods can never use it.
	EvictionThreshold scheduling.Resources
	// VM is memory the instance reports but the operating system never sees: the hypervisor's
	// share and firmware reservations.
	VM scheduling.Resources
}

// Total is the sum of the parts.
func (o Overhead) Total() scheduling.Resources {
	return o.KubeReserved.Add(o.SystemReserved).Add(o.EvictionThreshold).Add(o.VM)
}

// OverheadConfig sets the overhead formula's parameters. DefaultOverheadConfig gives the figures
// of an EKS node on Amazon Linux 2023 as Karpenter's AWS provider models it.
type OverheadConfig struct {
	// VMMemoryOverheadPercent is the fraction (not percent: 0.075 is 7.5%) of memory lost to the
	// hypervisor.
	VMMemoryOverheadPercent float64
	// ArmReservedMemory is memory (bytes) that the arm64 (Graviton) kernel reserves for its
	// contiguous memory allocator before the hypervisor share is taken.
	ArmReservedMemory int64
	// EvictionMemory is the memory.available hard eviction threshold, in bytes.
	EvictionMemory int64
	// EvictionEphemeralFraction is the nodefs.available hard eviction threshold, as a fraction
	// of the root volume.
	EvictionEphemeralFraction float64
	// KubeReserved computes kube-reserved for a shape; nil means DefaultKubeReserved.
	KubeReserved func(*Shape) scheduling.Resources
	// SystemReserved is the same for every type; default none.
	SystemReserved scheduling.Resources
}

// DefaultOverheadConfig returns the default overhead parameters: 7.5% VM memory overhead, 64 MiB
// arm64 reservation, 100 MiB memory and 10% root-volume eviction thresholds, DefaultKubeReserved,
// no system-reserved.
func DefaultOverheadConfig() OverheadConfig {
	return OverheadConfig{
		VMMemoryOverheadPercent:   0.075,
		ArmReservedMemory:         64 * MiB,
		EvictionMemory:            100 * MiB,
		EvictionEphemeralFraction: 0.10,
	}
}

// cpuReservedBands is kube-reserved CPU, in parts per million of each band of cores.
var cpuReservedBands = []struct{ upToMilli, ppm int64 }{
	{1000, 60000},         // 6% of the first core
	{2000, 10000},         // 1% of the second
	{4000, 5000},          // 0.5% of the third and fourth
	{math.MaxInt64, 2500}, // 0.25% of the rest
}

// DefaultKubeReserved is the kube-reserved of an EKS node:
//
//	cpu               6% of the first core + 1% of the second + 0.5% of cores 3–4 + 0.25% of the
//	                  rest, in millicores, rounded down (8 vCPU: 60+10+10+10 = 90m)
//	memory            (11 × maxPods + 255) MiB
//	ephemeral-storage 1 GiB
func DefaultKubeReserved(s *Shape) scheduling.Resources {
	var r scheduling.Resources
	milli := int64(s.VCPU) * 1000
	lower := int64(0)
	for _, b := range cpuReservedBands {
		if milli <= lower {
			break
		}
		r[scheduling.CPU] += (min(milli, b.upToMilli) - lower) * b.ppm / 1_000_000
		lower = b.upToMilli
	}
	r[scheduling.Memory] = (11*int64(s.MaxPods) + 255) * MiB
	r[scheduling.EphemeralStorage] = 1 * GiB
	return r
}

// ComputeOverhead applies the overhead formula to a shape booted from a root volume of the given
// size (bytes):
//
//	kube-reserved      cfg.KubeReserved(shape) (DefaultKubeReserved unless set)
//	system-reserved    cfg.SystemReserved
//	eviction threshold memory cfg.EvictionMemory;
//	                   ephemeral-storage ⌈cfg.EvictionEphemeralFraction × rootVolume⌉
//	VM                 memory a + ⌈cfg.VMMemoryOverheadPercent × (memoryMiB − a in MiB)⌉ MiB, where
//	                   a is cfg.ArmReservedMemory on arm64 and 0 otherwise
//
// With the defaults an m5.2xlarge (8 vCPU, 32768 MiB, 58 pods, 20 GiB volume) keeps 90m CPU,
// 2458 + 893 + 100 = 3451 MiB memory and 1 + 2 = 3 GiB storage, leaving 7910m, 29317 MiB and
// 17 GiB allocatable.
func ComputeOverhead(s *Shape, rootVolume int64, cfg OverheadConfig) Overhead {
	var o Overhead
	if cfg.KubeReserved != nil {
		o.KubeReserved = cfg.KubeReserved(s)
	} else {
		o.KubeReserved = DefaultKubeReserved(s)
	}
	o.SystemReserved = cfg.SystemReserved
	o.EvictionThreshold[scheduling.Memory] = cfg.EvictionMemory
	o.EvictionThreshold[scheduling.EphemeralStorage] = int64(math.Ceil(cfg.EvictionEphemeralFraction * float64(rootVolume)))
	memMiB := s.MemoryMiB
	if s.Arch == "arm64" {
		o.VM[scheduling.Memory] = cfg.ArmReservedMemory
		memMiB -= cfg.ArmReservedMemory / MiB
	}
	o.VM[scheduling.Memory] += int64(math.Ceil(float64(memMiB)*cfg.VMMemoryOverheadPercent)) * MiB
	return o
}

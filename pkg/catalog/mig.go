package catalog

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// LabelMIGConfig is the node label NVIDIA's MIG manager reads for the MIG layout it applies to
// the node's GPUs (the names of its default configuration: "all-1g.10gb", "all-disabled", …).
// A NodePool whose template sets it buys nodes whose GPUs are partitioned that way.
const LabelMIGConfig = "nvidia.com/mig.config"

// MIGConfigDisabled is the layout with MIG off: GPUs are whole.
const MIGConfigDisabled = "all-disabled"

// MIGResourcePrefix prefixes the extended resource the device plugin advertises per MIG
// profile under its mixed strategy: nvidia.com/mig-1g.10gb.
const MIGResourcePrefix = "nvidia.com/mig-"

// MIG is how a type's GPUs are partitioned on a node: each into PerGPU instances of Profile,
// each with MemoryMiB of the GPU's memory.
type MIG struct {
	Profile   string
	PerGPU    int
	MemoryMiB int64
}

// Resource is the extended resource one instance of the profile counts as.
func (m MIG) Resource() corev1.ResourceName {
	return corev1.ResourceName(MIGResourcePrefix + m.Profile)
}

// migShape is one MIG profile of a GPU's generation: compute slices (of 7), memory slices (of 8)
// and how many fit on one GPU. Every MIG-capable GPU on EC2 (A100, H100, H200, B200) has the
// same six profiles; only the memory each names differs.
type migShape struct {
	compute, memoryEighths, perGPU int
}

var migShapes = [...]migShape{{1, 1, 7}, {1, 2, 4}, {2, 2, 3}, {3, 4, 2}, {4, 4, 1}, {7, 8, 1}}

// migMemoryGB names, per MIG-capable GPU (the catalog's gpu name and memory per GPU in MiB),
// the memory in GB each of migShapes is named with. Provenance: NVIDIA's MIG user guide,
// "Supported MIG Profiles" (A100-SXM4-40GB and -80GB, H100-SXM5-80GB, H200-SXM5-141GB,
// B200-180GB). Only the "+me" media-extension variants are left out (a 1g instance with the
// GPU's decoders; at most one per GPU).
var migMemoryGB = []struct {
	gpu       string
	memoryMiB int64
	gb        [len(migShapes)]int
}{
	{"a100", 40960, [...]int{5, 10, 10, 20, 20, 40}},
	{"a100", 81920, [...]int{10, 20, 20, 40, 40, 80}},
	{"h100", 81920, [...]int{10, 20, 20, 40, 40, 80}},
	{"h200", 144384, [...]int{18, 35, 35, 71, 71, 141}},
	{"b200", 183359, [...]int{23, 45, 45, 90, 90, 180}},
}

// MIGProfiles returns the MIG profiles a GPU (catalog name, memory per GPU) can be partitioned
// into, smallest first, or none when it is not MIG-capable. A profile's memory is its share of
// the GPU's memory (memory slices of eight).
func MIGProfiles(gpu string, memoryMiB int64) []MIG {
	for _, g := range migMemoryGB {
		if g.gpu != gpu || g.memoryMiB != memoryMiB {
			continue
		}
		out := make([]MIG, len(migShapes))
		for i, s := range migShapes {
			out[i] = MIG{Profile: fmt.Sprintf("%dg.%dgb", s.compute, g.gb[i]), PerGPU: s.perGPU, MemoryMiB: memoryMiB * int64(s.memoryEighths) / 8}
		}
		return out
	}
	return nil
}

// ParseMIGConfig checks a MIG layout name. tenon models the layouts that put every GPU in one
// profile ("all-<profile>", e.g. "all-1g.10gb") and "all-disabled" (or ""), whole GPUs; it
// returns the profile ("" for whole GPUs). A mixed layout (all-balanced, a custom one) is an
// error: the devices its nodes would have depend on a configuration file tenon does not read.
func ParseMIGConfig(config string) (string, error) {
	if config == "" || config == MIGConfigDisabled {
		return "", nil
	}
	profile, ok := strings.CutPrefix(config, "all-")
	if !ok || !knownProfile(profile) {
		return "", fmt.Errorf("%s=%q: tenon models the MIG layouts all-disabled and all-<profile> with a profile of an A100, H100, H200 or B200 (all-1g.10gb, all-3g.40gb, …); mixed and custom layouts are not modelled", LabelMIGConfig, config)
	}
	return profile, nil
}

func knownProfile(profile string) bool { return MaxMIGPerGPU(profile) > 0 }

// MaxMIGPerGPU returns the most instances of a MIG profile one GPU holds, over the GPUs that
// have it (7 of 1g.10gb on an H100 or A100 80 GB, 4 on an A100 40 GB), or 0 when none has it.
func MaxMIGPerGPU(profile string) int {
	n := 0
	for _, g := range migMemoryGB {
		for _, m := range MIGProfiles(g.gpu, g.memoryMiB) {
			if m.Profile == profile {
				n = max(n, m.PerGPU)
			}
		}
	}
	return n
}

// MIGGPUs returns the catalog GPU names (karpenter.k8s.aws/instance-gpu-name) that have a MIG
// profile, each once.
func MIGGPUs(profile string) []string {
	var out []string
	for _, g := range migMemoryGB {
		for _, m := range MIGProfiles(g.gpu, g.memoryMiB) {
			if m.Profile == profile && !slices.Contains(out, g.gpu) {
				out = append(out, g.gpu)
			}
		}
	}
	return out
}

// PartitionGPUs returns the type as a node of it is with its GPUs in the MIG layout config
// (LabelMIGConfig's value): a copy whose nvidia.com/gpu are replaced by GPUs × PerGPU of the
// profile's resource, and whose Shape.MIG says so. A type whose GPUs do not have the profile
// (no GPUs, not MIG-capable, another memory size) is returned as it is, as NVIDIA's MIG
// manager leaves such GPUs whole; so is every type for whole GPUs. The copy shares the
// type's offerings and requirements. A layout ParseMIGConfig refuses is an error.
func PartitionGPUs(it *InstanceType, config string) (*InstanceType, error) {
	profile, err := ParseMIGConfig(config)
	if err != nil || profile == "" || it.Shape.MIG != nil || it.Shape.GPUManufacturer != "nvidia" || it.Shape.GPUCount < 1 {
		return it, err
	}
	for _, m := range MIGProfiles(it.Shape.GPUName, it.Shape.GPUMemoryMiB) {
		if m.Profile != profile {
			continue
		}
		key := partitionKey{it, profile}
		partitions.Lock()
		defer partitions.Unlock()
		if cp, ok := partitions.m[key]; ok && sameOfferings(cp, it) {
			return cp, nil
		}
		slot, err := scheduling.InternResource(m.Resource())
		if err != nil {
			return nil, fmt.Errorf("instance type %s in MIG layout %s: %w", it.Name, config, err)
		}
		cp := *it
		cp.Shape.MIG = &m
		cp.Capacity[scheduling.NvidiaGPU] = 0
		cp.Capacity[slot] = int64(it.Shape.GPUCount * m.PerGPU)
		if len(partitions.m) >= partitionMemoLimit {
			clear(partitions.m) // a provider that makes fresh types every call
		}
		partitions.m[key] = &cp
		return &cp, nil
	}
	return it, nil
}

// partitions memoizes PartitionGPUs' copies by source type and profile, so that the same type
// partitioned again is the same copy (callers cache by type). A copy shares its source's
// offerings, so it sees their updates in place; a source whose offerings were replaced gets a
// fresh copy.
var partitions = struct {
	sync.Mutex
	m map[partitionKey]*InstanceType
}{m: map[partitionKey]*InstanceType{}}

const partitionMemoLimit = 4096

type partitionKey struct {
	it      *InstanceType
	profile string
}

func sameOfferings(cp, it *InstanceType) bool {
	return len(cp.Offerings) == len(it.Offerings) && (len(it.Offerings) == 0 || &cp.Offerings[0] == &it.Offerings[0])
}

// PartitionPool is PartitionAll for the types of the NodePool named pool, whose node template
// carries labels: the layout is the template's LabelMIGConfig, and an error names the pool.
func PartitionPool(its []*InstanceType, pool string, labels map[string]string) ([]*InstanceType, error) {
	out, err := PartitionAll(its, labels[LabelMIGConfig])
	if err != nil {
		return nil, fmt.Errorf("nodepool %s: %w", pool, err)
	}
	return out, nil
}

// PartitionAll is PartitionGPUs over a list; the list is returned as it is when config means
// whole GPUs.
func PartitionAll(its []*InstanceType, config string) ([]*InstanceType, error) {
	profile, err := ParseMIGConfig(config)
	if err != nil || profile == "" {
		return its, err
	}
	out := make([]*InstanceType, len(its))
	for i, it := range its {
		if out[i], err = PartitionGPUs(it, config); err != nil {
			return nil, err
		}
	}
	return out, nil
}

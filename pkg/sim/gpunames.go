package sim

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// GPUModel is a GPU a trace's job may run on: a value of karpenter.k8s.aws/instance-gpu-name
// and, for a memory variant, the GPU's memory in MiB as karpenter.k8s.aws/instance-gpu-memory
// gives it (0: any).
type GPUModel struct {
	Name      string
	MemoryMiB int64
}

func (m GPUModel) String() string {
	if m.MemoryMiB == 0 {
		return m.Name
	}
	return fmt.Sprintf("%s (%d MiB)", m.Name, m.MemoryMiB)
}

// gpuModels are the GPU models trace names are read as, longest first so that a name is read
// as the longest model it starts with (a100 before a10, l40s before l4, t4g before t4), each
// with the catalog's instance-gpu-name for it. The model names are NVIDIA's, as GPU-cluster
// traces write them (Philly: K80, P100, V100; Alibaba's cluster-trace-gpu-v2020 and its GPU
// sharing traces: V100M16, V100M32, T4, P100, A10; nvidia-smi's product names, e.g.
// "NVIDIA A100-SXM4-80GB", "Tesla V100-SXM2-16GB"); the catalog names are those of
// karpenter.k8s.aws/instance-gpu-name in the embedded catalog (pkg/catalog, from EC2
// DescribeInstanceTypes' GpuInfo). Models AWS does not sell (P100, P40, P4, K40, L40, the
// GeForce and Quadro lines, the Alibaba-internal G2 and G3, ...) are not here: a trace's job on one is
// reported as unmapped, not guessed.
var gpuModels = func() []struct{ model, name string } {
	m := []struct{ model, name string }{
		{"a100", "a100"}, {"a10g", "a10g"},
		// The A10 is sold on AWS only as the A10G (g5), the same GA102 chip with 24 GB: the
		// closest model there is, and an assumption the report states.
		{"a10", "a10g"},
		{"h100", "h100"}, {"h200", "h200"}, {"b200", "b200"}, {"b300", "b300"},
		{"v100", "v100"}, {"k80", "k80"}, {"m60", "m60"},
		{"l40s", "l40s"}, {"l4", "l4"}, {"t4g", "t4g"}, {"t4", "t4"},
		// The RTX PRO 6000 Blackwell is sold as its Server Edition (g7e), the RTX PRO 4500
		// Blackwell as itself (g7).
		{"rtxproserver6000", "rtx-pro-server-6000"}, {"rtxpro6000", "rtx-pro-server-6000"}, {"rtxpro4500", "rtx-pro-4500"},
	}
	slices.SortStableFunc(m, func(a, b struct{ model, name string }) int { return cmp.Compare(len(b.model), len(a.model)) })
	return m
}()

// gpuSuffix is one of what may follow a model in a trace's name: a form factor or interconnect
// (SXM2, SXM4, PCIe, NVL, HBM3, HBM3e), an architecture or edition (Blackwell, Server Edition)
// or a memory size, as "80GB", "32G" or Alibaba's "M32".
var gpuSuffix = regexp.MustCompile(`^(?:sxm[0-9]?|pcie|nvlink|nvl|hbm[0-9]?e?|blackwell|serveredition|server|edition|m([0-9]+)|([0-9]+)gb?|gb)`)

// gpuKey lower-cases a trace's GPU name, drops a vendor or line prefix (NVIDIA, Tesla) and
// keeps letters and digits only: "NVIDIA A100-SXM4-80GB" → a100sxm480gb.
func gpuKey(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, p := range []string{"nvidia", "tesla"} {
		s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), p))
		s = strings.TrimLeft(s, "-_ ")
	}
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ParseGPUType reads one name of a trace's gpu_type column as a model of the catalog: the
// model it starts with and, when the name gives one, the GPU's memory in GiB (0: not given).
// ok is false for a name that is not a model of gpuModels with known suffixes.
func ParseGPUType(s string) (name string, memoryGiB int64, ok bool) {
	key := gpuKey(s)
models:
	for _, m := range gpuModels {
		rest, found := strings.CutPrefix(key, m.model)
		if !found {
			continue
		}
		var gib int64
		for rest != "" {
			sub := gpuSuffix.FindStringSubmatch(rest)
			if sub == nil {
				continue models
			}
			if v := cmp.Or(sub[1], sub[2]); v != "" {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil || n > 1<<20 {
					continue models
				}
				gib = n
			}
			rest = rest[len(sub[0]):]
		}
		return m.name, gib, true
	}
	return "", 0, false
}

// MapGPUType maps a trace's gpu_type cell to the catalog's GPU models: names separated by "|"
// are alternatives (the job may run on any of them), each read by ParseGPUType and matched
// with the models sold (sold: every GPU model of the catalog; nil accepts any model, as
// read). A memory size matches a model sold whose memory is within 10% of it (the A10G's 22,888
// MiB for "24GB"); a model sold without memory information matches any size. It returns the
// models the job may run on, in order and without repeats, and the names that matched none.
func MapGPUType(cell string, sold []GPUModel) (models []GPUModel, unmapped []string) {
	for _, alt := range strings.Split(cell, "|") {
		alt = strings.TrimSpace(alt)
		if alt == "" {
			continue
		}
		if slices.Contains(unmapped, alt) {
			continue
		}
		name, gib, ok := ParseGPUType(alt)
		if !ok {
			unmapped = append(unmapped, alt)
			continue
		}
		var found []GPUModel
		if sold == nil {
			found = []GPUModel{{Name: name, MemoryMiB: gib << 10}}
		}
		for _, m := range sold {
			if m.Name != name {
				continue
			}
			switch {
			case gib == 0:
				found = []GPUModel{{Name: name}} // any memory
			case m.MemoryMiB == 0 || within(m.MemoryMiB, gib<<10, 0.1):
				found = append(found, m)
			}
			if gib == 0 {
				break
			}
		}
		if len(found) == 0 {
			unmapped = append(unmapped, alt)
			continue
		}
		for _, f := range found {
			if !slices.Contains(models, f) {
				models = append(models, f)
			}
		}
	}
	return models, unmapped
}

func within(a, b int64, frac float64) bool {
	d := float64(a - b)
	return d <= frac*float64(b) && -d <= frac*float64(b)
}

package catalog

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// TestPartitionGPUs: a MIG layout replaces a MIG-capable type's GPUs by its instances of the
// profile (per GPU as the GPU's generation allows), leaves other types whole, and keeps the
// offerings; whole-GPU layouts change nothing.
func TestPartitionGPUs(t *testing.T) {
	c := mustLoad(t, "us-east-1")
	for _, tc := range []struct {
		typ, config string
		resource    string
		count       int64
		memoryMiB   int64
	}{
		{"p5.48xlarge", "all-1g.10gb", "nvidia.com/mig-1g.10gb", 56, 10240},
		{"p5.4xlarge", "all-3g.40gb", "nvidia.com/mig-3g.40gb", 2, 40960},
		{"p4de.24xlarge", "all-7g.80gb", "nvidia.com/mig-7g.80gb", 8, 81920},
		{"p4d.24xlarge", "all-1g.5gb", "nvidia.com/mig-1g.5gb", 56, 5120},
		{"p4d.24xlarge", "all-1g.10gb", "nvidia.com/mig-1g.10gb", 32, 10240},
		{"p5en.48xlarge", "all-2g.35gb", "nvidia.com/mig-2g.35gb", 24, 144384 / 4},
		{"p6-b200.48xlarge", "all-4g.90gb", "nvidia.com/mig-4g.90gb", 8, 183359 / 2},
		// GPUs without the profile, or without MIG, stay whole.
		{"p4d.24xlarge", "all-1g.18gb", "nvidia.com/gpu", 8, 0},
		{"g6e.12xlarge", "all-1g.10gb", "nvidia.com/gpu", 4, 0},
		{"m5.large", "all-1g.10gb", "", 0, 0},
		{"p5.48xlarge", "all-disabled", "nvidia.com/gpu", 8, 0},
		{"p5.48xlarge", "", "nvidia.com/gpu", 8, 0},
	} {
		it, ok := c.Get(tc.typ)
		if !ok {
			t.Fatalf("no type %s", tc.typ)
		}
		got, err := PartitionGPUs(it, tc.config)
		if err != nil {
			t.Fatalf("%s in %s: %v", tc.typ, tc.config, err)
		}
		if tc.memoryMiB == 0 {
			if got != it {
				t.Errorf("%s in %s: a copy, want the type as it is", tc.typ, tc.config)
			}
			continue
		}
		res, ok := scheduling.ResourceIndex(corev1.ResourceName(tc.resource))
		if !ok || got.Capacity[res] != tc.count || got.Allocatable()[res] != tc.count || got.Capacity[scheduling.NvidiaGPU] != 0 {
			t.Errorf("%s in %s: %s = %d (gpu %d), want %d", tc.typ, tc.config, tc.resource, got.Capacity[res], got.Capacity[scheduling.NvidiaGPU], tc.count)
		}
		if got.Shape.MIG == nil || got.Shape.MIG.MemoryMiB != tc.memoryMiB || string(got.Shape.MIG.Resource()) != tc.resource {
			t.Errorf("%s in %s: MIG %+v, want %s of %d MiB", tc.typ, tc.config, got.Shape.MIG, tc.resource, tc.memoryMiB)
		}
		if it.Shape.MIG != nil || it.Capacity[scheduling.NvidiaGPU] == 0 {
			t.Errorf("%s: the catalog's type was changed", tc.typ)
		}
		if &got.Offerings[0] != &it.Offerings[0] {
			t.Errorf("%s in %s: the copy does not share the type's offerings", tc.typ, tc.config)
		}
		if again, _ := PartitionGPUs(it, tc.config); again != got {
			t.Errorf("%s in %s: partitioned twice gives two copies", tc.typ, tc.config)
		}
		if twice, _ := PartitionGPUs(got, tc.config); twice != got {
			t.Errorf("%s in %s: a partitioned type is partitioned again", tc.typ, tc.config)
		}
	}
}

// TestParseMIGConfig: the layouts tenon models are accepted; mixed, custom and unknown ones
// are refused with the label's name and the value.
func TestParseMIGConfig(t *testing.T) {
	for config, want := range map[string]string{"": "", "all-disabled": "", "all-1g.10gb": "1g.10gb", "all-7g.141gb": "7g.141gb", "all-1g.23gb": "1g.23gb"} {
		if got, err := ParseMIGConfig(config); err != nil || got != want {
			t.Errorf("ParseMIGConfig(%q) = %q, %v; want %q", config, got, err, want)
		}
	}
	for _, config := range []string{"all-balanced", "all-enabled", "custom-layout", "all-9g.1gb", "all-", "ALL-1G.10GB", "all-1g.10gb "} {
		_, err := ParseMIGConfig(config)
		if err == nil || !strings.Contains(err.Error(), LabelMIGConfig) || !strings.Contains(err.Error(), config) {
			t.Errorf("ParseMIGConfig(%q) = %v, want an error naming the label and the value", config, err)
		}
		it, _ := mustLoad(t, "us-east-1").Get("p5.48xlarge")
		if _, err := PartitionGPUs(it, config); err == nil {
			t.Errorf("PartitionGPUs(%q) accepted the layout", config)
		}
	}
}

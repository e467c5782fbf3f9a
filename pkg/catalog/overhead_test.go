package catalog

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// TestOverheadMatchesData checks the overhead formula against the allocatable CPU, memory and
// ephemeral storage that the data records for every one of its 1,382 types. All must match
// exactly; the log reports the tally and the worst deviation per resource.
func TestOverheadMatchesData(t *testing.T) {
	tb, err := embedded()
	if err != nil {
		t.Fatal(err)
	}
	type want struct{ cpu, mem, eph int64 }
	recorded := map[string]want{}
	cols := []string{"name", "alloc_cpu_milli", "alloc_memory_mib", "alloc_ephemeral_storage"}
	p := fieldParser{columns: cols}
	err = scanCSV("instance_types_extended.csv", instanceTypesCSV, cols, func(f []string) error {
		q, err := resource.ParseQuantity(f[3])
		if err != nil {
			return err
		}
		recorded[f[0]] = want{p.int(f, 1), p.int(f, 2) * MiB, q.Value()}
		return p.err
	})
	if err != nil {
		t.Fatal(err)
	}

	exact := 0
	var worst [3]int64
	var worstName [3]string
	for i := range tb.types {
		raw := &tb.types[i]
		it, err := NewInstanceType(raw.name, "", raw.shape, nil)
		if err != nil {
			t.Fatal(err)
		}
		w, ok := recorded[raw.name]
		if !ok {
			t.Fatalf("%s: no recorded allocatable", raw.name)
		}
		a := it.Allocatable()
		dev := [3]int64{a[scheduling.CPU] - w.cpu, a[scheduling.Memory] - w.mem, a[scheduling.EphemeralStorage] - w.eph}
		if dev == [3]int64{} {
			exact++
			continue
		}
		for j, d := range dev {
			if abs(d) > abs(worst[j]) {
				worst[j], worstName[j] = d, raw.name
			}
		}
		t.Errorf("%s: allocatable cpu %dm memory %d ephemeral %d, data says %dm %d %d",
			raw.name, a[scheduling.CPU], a[scheduling.Memory], a[scheduling.EphemeralStorage], w.cpu, w.mem, w.eph)
	}
	t.Logf("overhead formula: %d of %d types match cpu, memory and ephemeral storage exactly; worst deviation cpu %dm (%s), memory %d bytes (%s), ephemeral %d bytes (%s)",
		exact, len(tb.types), worst[0], worstName[0], worst[1], worstName[1], worst[2], worstName[2])
	if len(tb.types) != 1382 {
		t.Errorf("%d types in the data, want 1,382", len(tb.types))
	}
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

func TestDefaultKubeReservedCPU(t *testing.T) {
	tests := []struct {
		vcpu int
		want int64
	}{
		{1, 60}, {2, 70}, {3, 75}, {4, 80}, {5, 82}, {8, 90}, {48, 190}, {96, 310}, {192, 550},
	}
	for _, tt := range tests {
		got := DefaultKubeReserved(&Shape{VCPU: tt.vcpu})[scheduling.CPU]
		if got != tt.want {
			t.Errorf("%d vCPU: kube-reserved %dm, want %dm", tt.vcpu, got, tt.want)
		}
	}
}

func TestOverheadM5(t *testing.T) {
	it := mustGet(t, mustLoad(t, ""), "m5.2xlarge")
	o := it.Overhead
	if o.KubeReserved[scheduling.CPU] != 90 || o.KubeReserved[scheduling.Memory] != 893*MiB ||
		o.VM[scheduling.Memory] != 2458*MiB || o.EvictionThreshold[scheduling.Memory] != 100*MiB ||
		o.EvictionThreshold[scheduling.EphemeralStorage] != 2*GiB || o.KubeReserved[scheduling.EphemeralStorage] != GiB {
		t.Errorf("overhead %+v", o)
	}
	a := it.Allocatable()
	if a[scheduling.CPU] != 7910 || a[scheduling.Memory] != 29317*MiB || a[scheduling.EphemeralStorage] != 17*GiB || a[scheduling.Pods] != 58 {
		t.Errorf("allocatable %v", a)
	}
}

func TestOverheadOptions(t *testing.T) {
	cfg := DefaultOverheadConfig()
	cfg.VMMemoryOverheadPercent = 0
	cfg.SystemReserved[scheduling.CPU] = 100
	cfg.KubeReserved = func(s *Shape) scheduling.Resources {
		r := DefaultKubeReserved(s)
		r[scheduling.Memory] = 0
		return r
	}
	c := mustLoad(t, "", WithOverhead(cfg), WithRootVolume(100*GiB))
	m5 := mustGet(t, c, "m5.2xlarge")
	a := m5.Allocatable()
	if a[scheduling.CPU] != 7810 || a[scheduling.Memory] != (32768-100)*MiB || a[scheduling.EphemeralStorage] != 89*GiB {
		t.Errorf("allocatable %v", a)
	}
	if m5.Capacity[scheduling.EphemeralStorage] != 100*GiB {
		t.Errorf("capacity %v", m5.Capacity)
	}
	// arm64 keeps its 64 MiB reservation even without the hypervisor share.
	if got := mustGet(t, c, "m7g.large").Overhead.VM[scheduling.Memory]; got != 64*MiB {
		t.Errorf("m7g.large VM overhead %d", got)
	}
}

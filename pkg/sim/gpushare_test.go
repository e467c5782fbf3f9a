package sim

import (
	"os"
	"strings"
	"testing"
)

// sharedEnv reads a trace with GPUs shared shares ways, against the example GPU NodePools and
// SharedGPUNodePools.
func sharedEnv(t testing.TB, shares int64, rows string) *Env {
	t.Helper()
	data, err := os.ReadFile("../../examples/simulate/gpu-nodepools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return traceEnvShares(t, parseSet(t, string(data)+"\n---\n"+SharedGPUNodePools(shares)), rows, shares)
}

// Fractions of a GPU are served from shared GPUs: four pods of a quarter GPU share one T4
// (g4dn.xlarge, shared 4 ways) under every policy, and the GPU counts as fully used.
func TestFractionalGPUsShareOneGPU(t *testing.T) {
	env := sharedEnv(t, 4, "0,3600,4,500,2048,0.25,T4\n")
	if env.Workload.GPUShares != 4 || len(env.Workload.Shapes) != 1 || !strings.HasPrefix(env.Workload.Shapes[0].Name, "1/4 of a t4 GPU") {
		t.Fatalf("workload: shares %d, shapes %d (%v)", env.Workload.GPUShares, len(env.Workload.Shapes), env.Workload.Shapes[0].Name)
	}
	opts := exact()
	opts.Spot = SpotNone
	rep := simulate(t, env, opts)
	for _, p := range rep.Policies {
		if p.PodsNeverStarted != 0 || p.NodesLaunched != 1 {
			t.Errorf("%s: %d pods never started, %d nodes launched; want every pod on one node", p.Policy, p.PodsNeverStarted, p.NodesLaunched)
			continue
		}
		if tm := p.TypeMix; len(tm) != 1 || tm[0].Type != "g4dn.xlarge" {
			t.Errorf("%s: bought %+v, want one g4dn.xlarge", p.Policy, tm)
		}
		if p.Utilisation.GPUShares < 0.9 || p.GPUHoursUsed > p.GPUHoursPaid || p.GPUHoursUsed < 0.9*p.GPUHoursPaid {
			t.Errorf("%s: shares utilisation %.2f, GPU-hours used %.2f of %.2f paid; want the GPU fully used", p.Policy, p.Utilisation.GPUShares, p.GPUHoursUsed, p.GPUHoursPaid)
		}
	}
}

// A fraction rounds up to whole shares (0.3 of a GPU shared 4 ways is 2 shares); a fraction
// above one GPU to whole GPUs; blank CPU and memory are the pod's share of a GPU's.
func TestFractionalGPURows(t *testing.T) {
	tr, _, err := ReadTrace(strings.NewReader("submit_s,duration_s,replicas,cpu_milli,memory_mib,gpu,gpu_type\n0,1,1,,,0.3,\n0,1,1,,,1.5,\n0,1,1,,,0.01,\n"),
		TraceOptions{CPUPerGPU: 4000, MemoryPerGPU: 16 << 30, GPUShares: 4})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ gpu, shares, cpu int64 }{{0, 2, 2000}, {2, 0, 8000}, {0, 1, 1000}}
	for i, w := range want {
		r := tr.Rows[i]
		if r.GPU != w.gpu || r.GPUShares != w.shares || r.CPUMilli != w.cpu {
			t.Errorf("row %d: %d GPUs, %d shares, %dm CPU; want %+v", i, r.GPU, r.GPUShares, r.CPUMilli, w)
		}
	}
	if tr.Shared != 2 || tr.RoundedUp != 1 {
		t.Errorf("shared %d, rounded up %d; want 2 and 1", tr.Shared, tr.RoundedUp)
	}
}

// With a MIG profile, a fraction asks for its share of a GPU's instances of the profile (0.25 of
// 7 1g.10gb instances is 2); the pods run on a MIG-partitioned A100 or H100 of the gpu-mig
// NodePool under every policy; a profile no GPU has, or shares as well, is an error.
func TestFractionalGPUsServedByMIG(t *testing.T) {
	data, err := os.ReadFile("../../examples/simulate/gpu-nodepools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	set := parseSet(t, string(data)+"\n---\n"+MIGNodePool("1g.10gb"))
	names, err := GPUModels(set, "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	rows := "submit_s,duration_s,replicas,cpu_milli,memory_mib,gpu,gpu_type\n0,3600,4,500,2048,0.25,\n"
	tr, skips, err := ReadTrace(strings.NewReader(rows), TraceOptions{CPUPerGPU: 3000, MemoryPerGPU: 12 << 30, GPUModels: names, MIGProfile: "1g.10gb"})
	if err != nil {
		t.Fatal(err)
	}
	if r := tr.Rows[0]; r.GPU != 0 || r.GPUShares != 2 {
		t.Fatalf("row: %d GPUs, %d instances; want 2 instances", r.GPU, r.GPUShares)
	}
	w, err := tr.Workload(skips)
	if err != nil {
		t.Fatal(err)
	}
	if w.ShareResource != "nvidia.com/mig-1g.10gb" || w.GPUShares != 7 {
		t.Fatalf("workload shares %d of %s, want 7 of nvidia.com/mig-1g.10gb", w.GPUShares, w.ShareResource)
	}
	env, err := NewEnv(set, w, EnvOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rep := simulate(t, env, exact())
	for _, p := range rep.Policies {
		if p.PodsNeverStarted != 0 || p.Utilisation.GPUShares <= 0 {
			t.Errorf("%s: %d pods never started, instances utilisation %.2f", p.Policy, p.PodsNeverStarted, p.Utilisation.GPUShares)
		}
		for _, tm := range p.TypeMix {
			if !strings.HasPrefix(tm.Type, "p4d") && !strings.HasPrefix(tm.Type, "p5") && !strings.HasPrefix(tm.Type, "p6-b200") {
				t.Errorf("%s: bought %s for MIG instances", p.Policy, tm.Type)
			}
		}
	}
	for _, opts := range []TraceOptions{{MIGProfile: "9g.1gb"}, {MIGProfile: "1g.10gb", GPUShares: 4}} {
		if _, _, err := ReadTrace(strings.NewReader(rows), opts); err == nil {
			t.Errorf("%+v: no error", opts)
		}
	}
}

// The bound's change points that reuse the last LP's covering prices instead of solving stay
// within BoundSlack below the bound that solves an LP at every new demand, and never above it,
// on the first 300 jobs of the mixed trace (shapes not proportional, so nearly every change
// point is a new demand).
func TestBoundPricedChangePoints(t *testing.T) {
	env := sharedEnv(t, 4, mixedSharedTrace(24000, 300))
	buckets := Options{}.withDefaults().Buckets
	priced := LowerBound(env, 0, buckets)
	exact := lowerBound(env, 0, buckets, -1)
	if priced.Priced == 0 || exact.Priced != 0 {
		t.Fatalf("priced change points: %d with the slack, %d without", priced.Priced, exact.Priced)
	}
	if priced.LPs >= exact.LPs {
		t.Errorf("%d LPs with priced change points, %d without", priced.LPs, exact.LPs)
	}
	if priced.CostUSD > exact.CostUSD*(1+1e-9) || priced.CostUSD < (1-BoundSlack)*exact.CostUSD {
		t.Errorf("bound $%.4f with priced change points, $%.4f without: not within [%.3f, 1]×", priced.CostUSD, exact.CostUSD, 1-BoundSlack)
	}
	t.Logf("bound $%.4f (%d LPs, %d priced) against $%.4f (%d LPs)", priced.CostUSD, priced.LPs, priced.Priced, exact.CostUSD, exact.LPs)
}

// A bound asked for no time-series buckets gets one, rather than dividing by zero.
func TestBoundWithoutBuckets(t *testing.T) {
	env := sharedEnv(t, 4, "0,3600,4,500,2048,0.25,T4\n600,3600,2,1000,4096,0,\n")
	none, one := LowerBound(env, 0, 0), LowerBound(env, 0, 1)
	if none.CostUSD <= 0 || !near(none.CostUSD, one.CostUSD) || len(none.CostPerHour) != len(one.CostPerHour) {
		t.Fatalf("0 buckets: $%v over %d buckets; 1 bucket: $%v over %d", none.CostUSD, len(none.CostPerHour), one.CostUSD, len(one.CostPerHour))
	}
}

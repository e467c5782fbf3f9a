package sim

import (
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tenon-sh/tenon/pkg/manifest"
)

// poolYAML is a NodePool of the given instance types, on-demand in us-east-1a, with a
// SimNodeClass whose delays are zero, so that costs are exact: a node costs its price for
// exactly as long as its pods run.
func poolYAML(types ...string) string {
	return fmt.Sprintf(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: test}
spec:
  template:
    spec:
      nodeClassRef: {group: sim.tenon.sh, kind: SimNodeClass, name: test}
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [%s]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      expireAfter: Never
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 0s
---
apiVersion: sim.tenon.sh/v1alpha1
kind: SimNodeClass
metadata: {name: test}
spec:
  region: us-east-1
  zones: [us-east-1a]
  bootDelay: 0s
  registrationDelay: 0s
  devicePluginDelay: 0s
  shutdownDelay: 0s
`, strings.Join(types, ", "))
}

func parseSet(t testing.TB, yaml string) *manifest.Set {
	t.Helper()
	set, err := manifest.Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// traceEnv reads a trace (with a header added) against the manifests.
func traceEnv(t testing.TB, set *manifest.Set, rows string) *Env {
	t.Helper()
	return traceEnvShares(t, set, rows, 0)
}

// traceEnvShares is traceEnv with GPUs shared shares ways (TraceOptions.GPUShares).
func traceEnvShares(t testing.TB, set *manifest.Set, rows string, shares int64) *Env {
	t.Helper()
	names, err := GPUModels(set, "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	tr, skips, err := ReadTrace(strings.NewReader("submit_s,duration_s,replicas,cpu_milli,memory_mib,gpu,gpu_type\n"+rows),
		TraceOptions{CPUPerGPU: 3000, MemoryPerGPU: 12 << 30, GPUModels: names, GPUShares: shares})
	if err != nil {
		t.Fatal(err)
	}
	w, err := tr.Workload(skips)
	if err != nil {
		t.Fatal(err)
	}
	env, err := NewEnv(set, w, EnvOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// exact are options under which nothing random happens.
func exact() Options {
	return Options{Seed: 1, BootDelay: Delay{Kind: "fixed"}, Spot: SpotNone}
}

func simulate(t testing.TB, env *Env, opts Options, policies ...string) *Report {
	t.Helper()
	if len(policies) == 0 {
		policies = PolicyNames
	}
	rep, err := Simulate(env, "test", policies, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// runPolicy replays env under one policy and returns the run, for its books.
func runPolicy(t testing.TB, env *Env, opts Options, name string) (*run, *PolicyResult) {
	t.Helper()
	opts = opts.withDefaults()
	p, err := NewPolicy(name, env, opts)
	if err != nil {
		t.Fatal(err)
	}
	r, err := newRun(env, opts, p)
	if err != nil {
		t.Fatal(err)
	}
	return r, r.simulate(context.Background())
}

func policy(t testing.TB, rep *Report, name string) *PolicyResult {
	t.Helper()
	for _, p := range rep.Policies {
		if p.Policy == name {
			return p
		}
	}
	t.Fatalf("no policy %s", name)
	return nil
}

// philly reads the first n jobs of the Philly trace (all of them for n ≤ 0) against the GPU
// NodePools of the examples.
func philly(t testing.TB, n int) *Env {
	t.Helper()
	set, err := manifest.Load("../../examples/simulate/gpu-nodepools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("testdata/philly_pollux.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	names, err := GPUModels(set, "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	tr, skips, err := ReadTrace(gz, TraceOptions{CPUPerGPU: 3000, MemoryPerGPU: 12 << 30, GPUModels: names})
	if err != nil {
		t.Fatal(err)
	}
	w, err := tr.Workload(skips)
	if err != nil {
		t.Fatal(err)
	}
	env, err := NewEnv(set, w.Prefix(n), EnvOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// phillyOptions are the options of the performance figures (docs/performance.md).
func phillyOptions() Options {
	// The published figures (docs/performance.md) replay with spot-to-spot consolidation on.
	return Options{Seed: 1, BootDelay: Delay{Kind: "normal", A: 45 * time.Second, B: 10 * time.Second}, SpotToSpotConsolidation: true}
}

func near(a, b float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= 1e-6*max(1, a, b)
}

package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/tenon-sh/tenon/pkg/manifest"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// randomRows makes a trace of n jobs over a few hours: 1 to 8 GPUs, some with a GPU type.
func randomRows(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 42))
	var b strings.Builder
	at := 0
	for range n {
		at += r.IntN(600)
		gpus := []int{1, 1, 1, 2, 4, 8}[r.IntN(6)]
		typ := []string{"", "", "", "V100", "T4"}[r.IntN(5)]
		fmt.Fprintf(&b, "%d,%d,%d,,,%d,%s\n", at, 60+r.IntN(4*3600), 1+r.IntN(2), gpus, typ)
	}
	return b.String()
}

func gpuPools(t testing.TB) *manifest.Set {
	t.Helper()
	set, err := manifest.Load("../../examples/simulate/gpu-nodepools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestBoundNeverAbovePolicies: the bound is a floor under every policy's cost.
func TestBoundNeverAbovePolicies(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			env := traceEnv(t, gpuPools(t), randomRows(seed, 120))
			opts := phillyOptions()
			opts.Seed = seed
			rep := simulate(t, env, opts)
			if rep.Bound.CostUSD <= 0 {
				t.Fatalf("bound $%.2f", rep.Bound.CostUSD)
			}
			for _, p := range rep.Policies {
				if p.PodsNeverStarted > 0 {
					t.Errorf("%s: %d pods never ran", p.Policy, p.PodsNeverStarted)
				}
				if p.CostUSD < rep.Bound.CostUSD {
					t.Errorf("%s: $%.2f is below the bound $%.2f", p.Policy, p.CostUSD, rep.Bound.CostUSD)
				}
			}
		})
	}
}

// TestPhillyPrefix replays the first 2,000 jobs of the Philly trace under every policy.
func TestPhillyPrefix(t *testing.T) {
	env := philly(t, 2000)
	start := time.Now()
	rep := simulate(t, env, phillyOptions())
	t.Logf("2,000 jobs, 3 policies: %.1fs", time.Since(start).Seconds())
	if rep.Input.Jobs != 2000 || rep.Bound.CostUSD <= 0 {
		t.Fatalf("input %+v, bound %+v", rep.Input, rep.Bound)
	}
	for _, p := range rep.Policies {
		t.Logf("%s: $%.0f (%.3f× the bound), pending p50 %.0fs p99 %.0fs, %d nodes, %d evictions", p.Policy, p.CostUSD, p.CostUSD/rep.Bound.CostUSD,
			p.PendingP50Seconds, p.PendingP99Seconds, p.NodesLaunched, p.PodsEvicted)
		if p.PodsNeverStarted > 0 || p.PodsUnfinished > 0 || p.PodsStarted != p.PodsSubmitted {
			t.Errorf("%s: %d of %d pods started, %d never, %d unfinished", p.Policy, p.PodsStarted, p.PodsSubmitted, p.PodsNeverStarted, p.PodsUnfinished)
		}
		if p.CostUSD < rep.Bound.CostUSD {
			t.Errorf("%s: $%.0f is below the bound $%.0f", p.Policy, p.CostUSD, rep.Bound.CostUSD)
		}
		if p.GPUHoursUsed > p.GPUHoursPaid || p.Utilisation.GPU <= 0 || p.Utilisation.GPU > 1 {
			t.Errorf("%s: GPU-hours used %.0f, paid %.0f, utilisation %+v", p.Policy, p.GPUHoursUsed, p.GPUHoursPaid, p.Utilisation)
		}
	}
	if policy(t, rep, PolicyTenon).Stats.SolverCalls == 0 {
		t.Errorf("tenon never called the solver")
	}
}

// TestDeterministic: the same seed gives the same report, whatever the scheduling of the runs.
func TestDeterministic(t *testing.T) {
	env := philly(t, 600)
	encode := func(rep *Report) []byte {
		rep.WallSeconds = 0
		rep.Bound.WallSeconds = 0
		for _, p := range rep.Policies {
			p.WallSeconds = 0
		}
		b, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	opts := phillyOptions()
	opts.Seed = 7
	a := encode(simulate(t, env, opts))
	b := encode(simulate(t, env, opts))
	if !bytes.Equal(a, b) {
		t.Fatalf("two runs with seed 7 differ")
	}
	opts.Seed = 8
	if c := encode(simulate(t, env, opts)); bytes.Equal(a, c) {
		t.Errorf("seeds 7 and 8 gave the same report: the seed is not used")
	}
}

// TestInvariants stops runs half-way and checks the engine's books against a recount.
func TestInvariants(t *testing.T) {
	env := philly(t, 3000)
	for _, name := range PolicyNames {
		t.Run(name, func(t *testing.T) {
			opts := phillyOptions()
			opts.Until = env.Workload.Jobs[2500].Submit + 30*time.Second
			r, _ := runPolicy(t, env, opts, name)
			t.Logf("at %s: %d nodes, %d pods active, %d pending", r.now, len(r.alive), r.active, r.pend.size)
			if len(r.alive) == 0 || r.active == 0 {
				t.Fatalf("nothing to check")
			}
			var free scheduling.Resources
			alive := map[NodeID]bool{}
			for _, id := range r.alive {
				n := r.nodes[id]
				alive[id] = true
				var used scheduling.Resources
				for _, pid := range n.Pods {
					pod := &r.pods[pid]
					used = used.Add(*r.requests(pod))
					if pod.Node != n.ID || (pod.State != PodRunning && pod.State != PodNominated) {
						t.Errorf("pod %d on %s is %d on node %d", pid, n.Name, pod.State, pod.Node)
					}
					if pod.State == PodRunning && n.State != NodeReady {
						t.Errorf("pod %d runs on %s, which is not ready", pid, n.Name)
					}
				}
				if used != n.Used {
					t.Errorf("%s: used %v, pods ask %v", n.Name, n.Used, used)
				}
				if !n.Used.FitsIn(n.Alloc) {
					t.Errorf("%s: used %v exceeds %v", n.Name, n.Used, n.Alloc)
				}
				if !n.Disrupting {
					free = free.Add(n.Free())
				}
			}
			if free != r.free {
				t.Errorf("free room %v, recounted %v", r.free, free)
			}
			active := 0
			for i := range r.pods {
				pod := &r.pods[i]
				if pod.State == PodPending || pod.State == PodNominated || pod.State == PodRunning {
					active++
				}
				if (pod.State == PodRunning || pod.State == PodNominated) && !alive[pod.Node] {
					t.Errorf("pod %d is on node %d, which is gone", i, pod.Node)
				}
			}
			if active != r.active {
				t.Errorf("active pods %d, recounted %d", r.active, active)
			}
			if r.pend.size < 0 || r.pend.size > active {
				t.Errorf("pending queue size %d of %d active", r.pend.size, active)
			}
		})
	}
}

// TestScheduleWorkload scales a Deployment up and down and replays it.
func TestScheduleWorkload(t *testing.T) {
	set := parseSet(t, poolYAML("m5.large", "m5.xlarge", "m5.2xlarge")+`---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: web, resources: {requests: {cpu: "1", memory: 1Gi}}}
`)
	sched, err := ReadSchedule(strings.NewReader("deployment web replicas 6 at 1h\ndeployment web replicas 1 at 2h\nend at 3h\n"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := ScheduleWorkload(set, sched, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Shapes) != 1 || w.Pods() != 6 || w.End != 3*time.Hour {
		t.Fatalf("%d shapes, %d pods, end %s", len(w.Shapes), w.Pods(), w.End)
	}
	// Pod-hours: 2 pods from 0 (one until 2h, one until the end at 3h), 4 from 1h to 2h.
	var hours float64
	for _, j := range w.Jobs {
		d := j.Duration
		if d == Forever {
			d = w.End - j.Submit
		}
		hours += d.Hours() * float64(j.Replicas)
	}
	if hours != 2+3+4 {
		t.Errorf("%.1f pod-hours, want 9", hours)
	}
	env, err := NewEnv(set, w, EnvOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rep := simulate(t, env, exact())
	for _, p := range rep.Policies {
		if p.PodsNeverStarted > 0 || p.CostUSD < rep.Bound.CostUSD || p.EndHours != 3 {
			t.Errorf("%s: %d pods never ran, $%.3f (bound $%.3f), ended at %.2fh", p.Policy, p.PodsNeverStarted, p.CostUSD, rep.Bound.CostUSD, p.EndHours)
		}
	}
	if _, err := ScheduleWorkload(set, &Schedule{Changes: []Change{{Line: 3, Kind: "Deployment", Namespace: "default", Name: "api", Replicas: 1}}}, 0); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("a schedule naming a missing Deployment: got %v", err)
	}
}

// TestPackageDisruption replays a prefix with pkg/disruption deciding the tenon policy's
// disruption, as the controller does.
func TestPackageDisruption(t *testing.T) {
	env := philly(t, 200)
	opts := phillyOptions()
	opts.TenonDisruption = DisruptionPackage
	rep := simulate(t, env, opts, PolicyTenon)
	p := rep.Policies[0]
	t.Logf("pkg/disruption: $%.0f (%.3f× the bound), %d nodes, disrupted %v, %d solver calls", p.CostUSD, p.CostUSD/rep.Bound.CostUSD, p.NodesLaunched, p.NodesDisrupted, p.Stats.SolverCalls)
	if p.PodsNeverStarted > 0 || p.PodsUnfinished > 0 || p.CostUSD < rep.Bound.CostUSD {
		t.Errorf("%d pods never ran, %d unfinished, $%.0f (bound $%.0f)", p.PodsNeverStarted, p.PodsUnfinished, p.CostUSD, rep.Bound.CostUSD)
	}
	if p.DisruptedTotal() == 0 {
		t.Errorf("pkg/disruption never acted")
	}
}

// TestPackageDisruptionGenerations: the nodes' generations (a pass takes a node's fingerprint
// from the last pass's memory while its generation holds) change nothing in a replay.
func TestPackageDisruptionGenerations(t *testing.T) {
	env := philly(t, 400)
	opts := phillyOptions()
	opts.TenonDisruption = DisruptionPackage
	var results []*PolicyResult
	for _, off := range []bool{false, true} {
		o := opts.withDefaults()
		p, err := NewPolicy(PolicyTenon, env, o)
		if err != nil {
			t.Fatal(err)
		}
		p.Disrupter.(*packageDisrupter).noGenerations = off
		r, err := newRun(env, o, p)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, r.simulate(context.Background()))
	}
	with, without := results[0], results[1]
	if with.CostUSD != without.CostUSD || with.NodesLaunched != without.NodesLaunched || with.PodsEvicted != without.PodsEvicted || with.DisruptedTotal() == 0 {
		t.Fatalf("with generations $%.2f, %d nodes, %d evictions; without $%.2f, %d nodes, %d evictions",
			with.CostUSD, with.NodesLaunched, with.PodsEvicted, without.CostUSD, without.NodesLaunched, without.PodsEvicted)
	}
}

// TestPackageExpirationReplacesOnce: an expired node is replaced even though its replacement
// costs as much (expiration is not a saving), once per expiry, not relaunched pass after pass.
func TestPackageExpirationReplacesOnce(t *testing.T) {
	set := parseSet(t, strings.Replace(poolYAML("g4dn.xlarge"), "expireAfter: Never", "expireAfter: 1h", 1))
	// One GPU job of 3.5 hours: its node expires three times.
	env := traceEnv(t, set, "0,12600,1,,,1,\n")
	for _, mode := range []string{DisruptionInterim, DisruptionPackage} {
		t.Run(mode, func(t *testing.T) {
			opts := exact()
			opts.TenonDisruption = mode
			p := simulate(t, env, opts, PolicyTenon).Policies[0]
			if p.PodsUnfinished > 0 || p.PodsNeverStarted > 0 {
				t.Fatalf("%d pods unfinished, %d never started", p.PodsUnfinished, p.PodsNeverStarted)
			}
			if got := p.NodesDisrupted[ReasonExpired]; got != 3 {
				t.Errorf("%d nodes expired, want 3", got)
			}
			if p.NodesLaunched > 4 || p.Stats.Cancelled > 0 {
				t.Errorf("%d nodes launched (want 4: the first and three replacements), %d commands cancelled", p.NodesLaunched, p.Stats.Cancelled)
			}
		})
	}
}

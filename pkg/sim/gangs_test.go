package sim

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// gpuPoolYAML is a NodePool of p3.16xlarge (8 V100 GPUs), on-demand in one zone, with a GPU
// limit (none when limit is ""), and a SimNodeClass without delays but the boot delay the
// options draw.
func gpuPoolYAML(limit string) string {
	y := poolYAML("p3.16xlarge")
	if limit != "" {
		y = strings.Replace(y, "  disruption:", "  limits: {nvidia.com/gpu: \""+limit+"\"}\n  disruption:", 1)
	}
	return y
}

// A gang's pods start together whichever of their nodes boots last, under every policy; a job
// of one replica is no gang.
func TestGangPodsStartTogether(t *testing.T) {
	env := traceEnv(t, parseSet(t, gpuPoolYAML("")), "0,3600,4,,,8,v100\n0,600,1,,,8,v100\n30,3600,3,,,8,v100\n")
	opts := exact()
	opts.BootDelay = Delay{Kind: "uniform", A: 30 * time.Second, B: 3 * time.Minute}
	opts.Gangs = true
	for _, name := range PolicyNames {
		t.Run(name, func(t *testing.T) {
			r, res := runPolicy(t, env, opts, name)
			if res.PodsNeverStarted != 0 {
				t.Fatalf("%d pods never started", res.PodsNeverStarted)
			}
			for _, j := range []int32{0, 2} {
				first := r.pods[r.firstPod[j]]
				for id := r.firstPod[j]; id < r.firstPod[j+1]; id++ {
					if p := r.pods[id]; p.Started != first.Started || p.Evictions != 0 {
						t.Errorf("gang job %d: pod %d started at %s (evicted %d times), pod %d at %s", j, id-r.firstPod[j], p.Started, p.Evictions, 0, first.Started)
					}
				}
			}
			if r.isGang(1) {
				t.Error("a job of one replica is a gang")
			}
		})
	}
}

// A gang that a NodePool's limit can never hold whole: tenon buys nothing for it, while the
// karpenter-like policy, provisioning pod by pod, buys what the limit allows and strands its
// GPUs; the replay ends.
func TestGangLargerThanTheLimit(t *testing.T) {
	env := traceEnv(t, parseSet(t, gpuPoolYAML("24")), "0,3600,4,,,8,v100\n")
	opts := exact()
	opts.Gangs = true
	rep := simulate(t, env, opts, PolicyTenon, PolicyKarpenter)
	ten, kar := policy(t, rep, PolicyTenon), policy(t, rep, PolicyKarpenter)
	if ten.NodesLaunched != 0 || ten.StrandedGPUHours != 0 || ten.CostUSD != 0 {
		t.Errorf("tenon bought %d nodes ($%.2f, %.1f stranded GPU-hours) for a gang its limit cannot hold", ten.NodesLaunched, ten.CostUSD, ten.StrandedGPUHours)
	}
	if ten.PodsNeverStarted != 4 || kar.PodsNeverStarted != 4 {
		t.Errorf("pods never started: tenon %d, karpenter-like %d; want 4 each", ten.PodsNeverStarted, kar.PodsNeverStarted)
	}
	if kar.NodesLaunched < 3 || kar.StrandedGPUHours <= 0 {
		t.Errorf("karpenter-like bought %d nodes, %.1f stranded GPU-hours; want at least 3 nodes bought for part of the gang, idle", kar.NodesLaunched, kar.StrandedGPUHours)
	}
	t.Logf("karpenter-like: %d nodes launched, $%.2f, %.1f stranded GPU-hours, ended at %.2f h (ended idle: %v)", kar.NodesLaunched, kar.CostUSD, kar.StrandedGPUHours, kar.EndHours, kar.EndedIdle)

	// Without gangs the same pods are independent: three run at once, the fourth after them,
	// under both policies.
	opts.Gangs = false
	rep = simulate(t, env, opts, PolicyTenon, PolicyKarpenter)
	for _, p := range rep.Policies {
		if p.PodsNeverStarted != 0 || p.NodesLaunched < 3 {
			t.Errorf("without gangs, %s: %d pods never started, %d nodes launched", p.Policy, p.PodsNeverStarted, p.NodesLaunched)
		}
	}
}

// The karpenter-like policy's claims of one batch count against its NodePool's limits
// together: a batch of four 8-GPU pods under a 24-GPU limit buys three nodes, not four.
func TestKarpenterLikeLimitsCountTheWholeBatch(t *testing.T) {
	env := traceEnv(t, parseSet(t, gpuPoolYAML("24")), "0,3600,4,,,8,v100\n")
	r, _ := runPolicy(t, env, exact(), PolicyKarpenter)
	if len(r.nodes) == 0 || r.stats.Batches == 0 {
		t.Fatal("nothing launched")
	}
	first := 0
	for _, n := range r.nodes {
		if n.Launched == r.nodes[0].Launched {
			first++
		}
	}
	if first != 3 {
		t.Errorf("the first batch launched %d p3.16xlarge under a limit of 24 GPUs, want 3", first)
	}
}

// On the Philly trace's first 3,000 jobs with gangs, every policy runs every pod, and the pods
// of each gang that were never evicted started at the same instant.
func TestPhillyGangs(t *testing.T) {
	env := philly(t, 3000)
	opts := phillyOptions()
	opts.Gangs = true
	for _, name := range PolicyNames {
		t.Run(name, func(t *testing.T) {
			r, res := runPolicy(t, env, opts, name)
			if res.PodsNeverStarted != 0 || res.PodsUnfinished != 0 {
				t.Fatalf("%d pods never started, %d unfinished", res.PodsNeverStarted, res.PodsUnfinished)
			}
			gangs := 0
			for j := range env.Workload.Jobs {
				if !r.isGang(int32(j)) {
					continue
				}
				gangs++
				var start time.Duration = -1
				for id := r.firstPod[j]; id < r.firstPod[j+1]; id++ {
					p := r.pods[id]
					if p.Evictions > 0 {
						continue
					}
					if start >= 0 && p.Started != start {
						t.Errorf("gang job %d: its pods started at %s and %s", j, start, p.Started)
						break
					}
					start = p.Started
				}
			}
			if gangs == 0 {
				t.Fatal("no gang in the prefix")
			}
			t.Logf("%s: %d gangs, $%.0f, %.0f stranded GPU-hours", name, gangs, res.CostUSD, res.StrandedGPUHours)
		})
	}
}

// A gang whose cheapest offering can sell only part of it is bought across offerings (three
// g4dn.xlarge, all the capacity pool sells, and a g4dn.2xlarge), and binds together once the
// four nodes are ready.
func TestGangAcrossOfferings(t *testing.T) {
	y := strings.Replace(poolYAML("g4dn.xlarge", "g4dn.2xlarge"), "  shutdownDelay: 0s\n",
		"  shutdownDelay: 0s\n  capacityPools: [{instanceType: g4dn.xlarge, capacity: 3}]\n", 1)
	env := traceEnv(t, parseSet(t, y), "0,3600,4,1000,2048,1,\n")
	opts := exact()
	opts.Gangs = true
	opts.BootDelay = Delay{Kind: "fixed", A: time.Minute}
	r, res := runPolicy(t, env, opts, PolicyTenon)
	if res.PodsNeverStarted != 0 {
		t.Fatalf("%d pods never started", res.PodsNeverStarted)
	}
	for id := r.firstPod[0]; id < r.firstPod[1]; id++ {
		if r.pods[id].Started != r.pods[0].Started {
			t.Errorf("pod %d started at %s, pod 0 at %s", id, r.pods[id].Started, r.pods[0].Started)
		}
	}
	t.Logf("%d nodes launched, %d launch failures, %d batches, started at %s, $%.3f, %.2f stranded GPU-hours", res.NodesLaunched, res.Stats.LaunchFailures, res.Stats.Batches, r.pods[0].Started, res.CostUSD, res.StrandedGPUHours)
	if res.NodesLaunched != 4 {
		t.Errorf("%d nodes launched for a gang of 4 one-GPU pods; want 4", res.NodesLaunched)
	}
}

// A running gang's nodes are disrupted whole or not at all: a node with one of its pods while
// another runs elsewhere is not a candidate alone (splitsGang), and the package disrupter is
// told the gang (wholeGroups); a job of one pod is not held.
func TestRunningGangsAreDisruptedWhole(t *testing.T) {
	env := traceEnv(t, parseSet(t, gpuPoolYAML("")), "0,7200,2,,,8,v100\n0,7200,1,,,8,v100\n")
	opts := exact()
	opts.Gangs = true
	opts.Until = 30 * time.Minute
	r, _ := runPolicy(t, env, opts, PolicyTenon)
	nodeOf := func(id PodID) *Node {
		p := r.pods[id]
		if p.State != PodRunning || p.Node == NoNode {
			t.Fatalf("pod %d is %v at 30 min", id, p.State)
		}
		return r.nodes[p.Node]
	}
	g0, g1, single := nodeOf(r.firstPod[0]), nodeOf(r.firstPod[0]+1), nodeOf(r.firstPod[1])
	if g0 == g1 {
		t.Fatal("the gang's two 8-GPU pods share a node")
	}
	if !r.splitsGang(g0) || !r.splitsGang(g1) {
		t.Error("taking one of the gang's nodes alone does not count as splitting it")
	}
	if r.splitsGang(single) {
		t.Error("the single pod's node counts as splitting a gang")
	}
	if got := r.wholeGroups(); !slices.Equal(got, []string{TraceNamespace + "/" + gangName(0)}) {
		t.Errorf("whole groups %v", got)
	}
}

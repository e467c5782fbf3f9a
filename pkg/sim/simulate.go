package sim

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// Report is a whole simulation: every policy replayed over the same workload, and the bound.
type Report struct {
	Input    Input           `json:"input"`
	Settings Settings        `json:"settings"`
	Policies []*PolicyResult `json:"policies"`
	Bound    *BoundResult    `json:"bound"`
	// Assumptions gathers the workload's, the environment's and the policies' assumptions.
	Assumptions []string `json:"assumptions"`
	WallSeconds float64  `json:"wallSeconds"`
	// Incomplete is set when some policy's replay was stopped before its end
	// (PolicyResult.Incomplete).
	Incomplete bool `json:"incomplete,omitempty"`
}

// Input describes the workload replayed.
type Input struct {
	Source    string      `json:"source"`
	Jobs      int         `json:"jobs"`
	Pods      int         `json:"pods"`
	Shapes    []string    `json:"shapes"`
	SpanHours float64     `json:"spanHours"`
	Skipped   []SkipCount `json:"skipped,omitempty"`
	NodePools []string    `json:"nodePools"`
	// ShareResource is what pods asking for a fraction of a GPU ask for (Workload.ShareResource:
	// a shared GPU's replicas or a MIG profile's instances), when some do.
	ShareResource string `json:"shareResource,omitempty"`
}

// Settings are the options the simulation ran with, in words.
type Settings struct {
	Seed         uint64  `json:"seed"`
	BootDelay    string  `json:"bootDelay"`
	Spot         string  `json:"spotInterruptions"`
	SpotCapacity string  `json:"spotCapacity"`
	Scheduler    string  `json:"scheduler"`
	Batch        string  `json:"batch"`
	PassSeconds  float64 `json:"disruptionPassSeconds"`
	UntilHours   float64 `json:"untilHours,omitempty"`
	RestartDelay string  `json:"restartPenalty"`
	// Gangs is set when jobs of more than one replica were gangs (Options.Gangs).
	Gangs bool `json:"gangs,omitempty"`
}

// Simulate replays env's workload under each named policy, and computes the lower bound. The
// runs are independent (each has its own cloud and state, all draws come from opts.Seed) and
// go in parallel, up to GOMAXPROCS at a time; the result is the same however they are
// scheduled.
func Simulate(env *Env, source string, policies []string, opts Options) (*Report, error) {
	return SimulateContext(context.Background(), env, source, policies, opts)
}

// SimulateContext is Simulate, stopped when ctx ends: each policy's replay then stops where it
// is, and the report, marked Incomplete, has what the replays reached.
func SimulateContext(ctx context.Context, env *Env, source string, policies []string, opts Options) (*Report, error) {
	start := time.Now()
	opts = opts.withDefaults()
	runs := make([]*run, len(policies))
	for i, name := range policies {
		p, err := NewPolicy(name, env, opts)
		if err != nil {
			return nil, err
		}
		if runs[i], err = newRun(env, opts, p); err != nil {
			return nil, fmt.Errorf("policy %s: %w", name, err)
		}
	}
	rep := &Report{Policies: make([]*PolicyResult, len(runs))}
	// The policies and the bound run side by side, as many at once as there are CPUs, started
	// in a fixed order: the first policy (tenon, by default, much the longest), then the bound,
	// then the others. Left to race for the CPUs, the longest sometimes started last, and the
	// replay took as long as it and the others end to end.
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(runtime.GOMAXPROCS(0), 1))
	launch := func(f func()) {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f()
		}()
	}
	policy := func(i int) func() {
		return func() {
			t := time.Now()
			rep.Policies[i] = runs[i].simulate(ctx)
			rep.Policies[i].WallSeconds = time.Since(t).Seconds()
		}
	}
	bound := func() {
		rep.Bound = LowerBound(env, opts.Until, opts.Buckets)
		if len(opts.Commitments) > 0 {
			rep.Bound.BillUSD = billBound(env, rep.Bound, opts.Commitments)
		}
	}
	if len(runs) > 0 {
		launch(policy(0))
	}
	launch(bound)
	for i := 1; i < len(runs); i++ {
		launch(policy(i))
	}
	wg.Wait()
	for _, p := range rep.Policies {
		rep.Incomplete = rep.Incomplete || p.Incomplete
	}
	rep.fill(env, source, opts)
	rep.WallSeconds = time.Since(start).Seconds()
	return rep, nil
}

func (rep *Report) fill(env *Env, source string, opts Options) {
	w := env.Workload
	rep.Input = Input{Source: source, Jobs: len(w.Jobs), Pods: w.Pods(), SpanHours: w.Span().Hours(), Skipped: SkipCounts(w.Skips), ShareResource: string(w.ShareResource)}
	if opts.Until > 0 {
		rep.Input.SpanHours = min(rep.Input.SpanHours, opts.Until.Hours())
	}
	for i := range w.Shapes {
		rep.Input.Shapes = append(rep.Input.Shapes, w.Shapes[i].Name)
	}
	for _, p := range env.Pools {
		rep.Input.NodePools = append(rep.Input.NodePools, fmt.Sprintf("%s (%d instance types, class %s)", p.Name, len(p.Types), p.Class))
	}
	rep.Settings = Settings{
		Seed: opts.Seed, BootDelay: opts.BootDelay.String(), Spot: string(opts.Spot), SpotCapacity: string(opts.SpotCapacity), Scheduler: string(opts.Scheduler),
		Batch:       fmt.Sprintf("idle %s, max %s", opts.BatchIdle, opts.BatchMax),
		PassSeconds: opts.PassInterval.Seconds(), UntilHours: opts.Until.Hours(), RestartDelay: opts.RestartPenalty.String(), Gangs: opts.Gangs,
	}
	rep.Assumptions = append(rep.Assumptions, w.Assumptions...)
	rep.Assumptions = append(rep.Assumptions, env.Notes...)
	if opts.SpotCapacity == SpotCapacityAdvisor {
		rep.Assumptions = append(rep.Assumptions, spotCapacityAssumption(opts.SpotCapacityVCPUs))
	}
	if opts.Gangs {
		rep.Assumptions = append(rep.Assumptions, "gangs: every job of more than one replica is a gang (a PodGroup whose minCount is its replicas); kube-scheduler binds a gang's pods together, once each has room on a ready node, for every policy (its gang scheduling); pods nominated to booting nodes keep their room while the gang can complete; capacity bought for a gang that does not complete is idle and counted in stranded GPU-hours; tenon's disruption may still move one pod of a gang (the simulator's disrupters do not read PodGroups), which then binds alone")
	}
	rep.Assumptions = append(rep.Assumptions,
		"nodes cost their offering's price from launch until the instance has shut down; boot, registration and (for GPU types) device-plugin delays pass before pods run on them",
		"kube-scheduler is simulated for every policy: a pending pod binds to a ready node with room ("+string(opts.Scheduler)+" scoring) as soon as one exists; resources, taints and node affinity are checked, topology spread and pod affinity are not",
		"an evicted pod (consolidation, expiry, interruption) is pending again and keeps the work it had left (plus the restart penalty): jobs are assumed to checkpoint",
		"the bound assumes every job starts at its submission and leaves out the pods slot of requests and the NodePools' limits: it is a floor under any fleet that runs the workload",
		"pods evicted per dollar saved counts each disruption command's hourly saving over one hour",
	)
	for _, p := range rep.Policies {
		rep.Assumptions = append(rep.Assumptions, p.Assumptions...)
		p.Assumptions = nil
	}
	if rep.Bound == nil {
		return
	}
	for _, p := range rep.Policies {
		// The bound runs every job from its submission; a policy held back (NodePool limits,
		// capacity it could not buy) runs some later, on a fleet the bound does not describe.
		if p.CostUSD < rep.Bound.CostUSD {
			rep.Assumptions = append(rep.Assumptions, fmt.Sprintf(
				"%s cost less than the bound ($%.0f < $%.0f) because it started jobs late (pending p99 %s): the bound assumes every job starts at its submission, so it is no floor for a fleet that defers work; replay with NodePools without limits to compare",
				p.Policy, p.CostUSD, rep.Bound.CostUSD, time.Duration(p.PendingP99Seconds*float64(time.Second)).Round(time.Minute)))
		}
	}
}

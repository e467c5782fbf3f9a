package main

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	tenonv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/tenon/v1alpha1"
	"github.com/tenon-sh/tenon/pkg/commitment"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tenon-sh/tenon/examples"
	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	karpv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/v1alpha1"
	"github.com/tenon-sh/tenon/pkg/featuregates"
	"github.com/tenon-sh/tenon/pkg/manifest"
	"github.com/tenon-sh/tenon/pkg/report"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/sim"
)

type simulateFlags struct {
	trace, schedule             string
	files                       []string
	recursive                   bool
	region                      string
	cpuPerGPU, memPerGPU        string
	cpuPerPod, memPerPod        string
	bootDelay, spot, scheduler  string
	spotCapacity                string
	spotCapacityVCPUs           int64
	seed                        uint64
	policies                    string
	out, jsonOut                string
	until, restart, timeout     time.Duration
	maxJobs                     int
	nodeGroups, tenonDisruption string
	strict, noProgress, gangs   bool
	gpuShares                   int64
	gpuMIG                      string
	commitments                 string
	spotToSpot                  bool
	expendableCutoff            int32
}

func newSimulate() *cobra.Command {
	var f simulateFlags
	cmd := &cobra.Command{
		Use:   "simulate --trace FILE [-f nodepools.yaml] | -f manifests [--schedule FILE]",
		Short: "Replay a workload through tenon and other autoscalers in virtual time, and price each fleet against the best possible",
		Long: `simulate replays a workload, in virtual time and with no API server, under several autoscaling
policies side by side, against the simulated cloud (the real AWS catalog, boot delays, spot
interruptions), and prices each fleet against a lower bound on what any fleet must cost.

The workload is a trace (--trace: CSV with the columns submit_s,duration_s,replicas,cpu_milli,
memory_mib,gpu,gpu_type, optionally gzipped; blank CPU and memory are filled from --cpu-per-gpu
and --memory-per-gpu), or the workloads of the -f manifests scaled by a schedule (--schedule:
lines such as "deployment web replicas 40 at 2h"). NodePools and SimNodeClasses come from the -f
manifests (default: with --trace the GPU NodePools of examples/simulate, else the NodePools
tenon up applies).

Policies: tenon (pkg/solver provisions, tenon's disruption methods remove), karpenter-like (the
state of the art, from Karpenter's documented behaviour), node-groups (a Cluster-Autoscaler-style
baseline). The bound is, at every instant, the cheapest fractional fleet covering the pods then
running, integrated over time.

It prints a summary, writes a self-contained HTML report (--out) and, with --json, the figures
for scripts. The same seed gives the same result.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSimulate(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.trace, "trace", "", "job trace CSV (.csv or .csv.gz)")
	fl.StringArrayVarP(&f.files, "filename", "f", nil, "NodePools, SimNodeClasses, EC2NodeClasses (and without --trace, workloads): files or directories (repeatable; default: examples/simulate/gpu-nodepools.yaml with --trace, else the NodePools tenon up applies)")
	fl.BoolVarP(&f.recursive, "recursive", "R", false, "read the directories below a -f directory too, as kubectl's -R")
	fl.StringVar(&f.schedule, "schedule", "", "scaling schedule for the -f workloads (lines: deployment NAME replicas N at TIME; end at TIME)")
	fl.StringVar(&f.region, "region", "us-east-1", "region of the catalog for NodePools whose SimNodeClass is not given")
	fl.StringVar(&f.cpuPerGPU, "cpu-per-gpu", "3", "CPU per GPU for trace rows with blank cpu_milli")
	fl.StringVar(&f.memPerGPU, "memory-per-gpu", "12Gi", "memory per GPU for trace rows with blank memory_mib")
	fl.StringVar(&f.cpuPerPod, "cpu-per-pod", "", "CPU for trace rows without GPUs and with blank cpu_milli (default: such rows are skipped)")
	fl.StringVar(&f.memPerPod, "memory-per-pod", "", "memory for trace rows without GPUs and with blank memory_mib")
	fl.StringVar(&f.bootDelay, "boot-delay", "normal:45s,10s", `boot delay distribution: "fixed:45s", "normal:MEAN,STDDEV", "uniform:MIN,MAX", or "class" for each SimNodeClass's bootDelay`)
	fl.StringVar(&f.spot, "spot-interruptions", "advisor", "spot interruption model: advisor (the Spot Advisor buckets of the catalog), none, or class (each SimNodeClass's)")
	fl.StringVar(&f.spotCapacity, "spot-capacity", "", "spot capacity model: unlimited, or advisor (each spot offering sells a finite number of instances, fewer the higher its Spot Advisor interruption bucket; not the default yet, see docs/performance.md)")
	fl.Int64Var(&f.spotCapacityVCPUs, "spot-capacity-vcpus", sim.DefaultSpotCapacityVCPUs, "with --spot-capacity advisor, the vCPUs one spot offering of the lowest interruption bucket sells at once")
	fl.StringVar(&f.scheduler, "scheduler", string(sim.LeastAllocated), "how the simulated kube-scheduler scores nodes: least-allocated or most-allocated")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of every random draw")
	fl.StringVar(&f.policies, "policies", strings.Join(sim.PolicyNames, ","), "policies to replay, comma-separated")
	fl.StringVar(&f.out, "out", "tenon-simulate.html", `HTML report to write ("" for none)`)
	fl.StringVar(&f.jsonOut, "json", "", `write the report as JSON to this file ("-" for standard output)`)
	fl.DurationVar(&f.until, "until", 0, "replay only this much virtual time (a prefix)")
	fl.DurationVar(&f.timeout, "timeout", 0, "stop the replay after this much wall-clock time and write the report of what it reached, marked incomplete (0: no limit; Ctrl-C does the same)")
	fl.IntVar(&f.maxJobs, "max-jobs", 0, "replay only the first N jobs of the trace")
	fl.DurationVar(&f.restart, "restart-penalty", 0, "work an evicted pod must redo when it restarts")
	fl.StringVar(&f.nodeGroups, "node-groups", "", "instance types of the node-groups policy, comma-separated (default: chosen for the workload)")
	fl.StringVar(&f.tenonDisruption, "tenon-disruption", sim.DisruptionInterim, "the tenon policy's disruption: interim (the simulator's implementation of tenon's methods, fast) or package (pkg/disruption, as the controller runs it; slow on long traces)")
	fl.Var(featuregates.NewValue(func(g featuregates.Gates) { f.spotToSpot = g.SpotToSpotConsolidation }), "feature-gates",
		"Karpenter's feature gates, Name=true|false comma-separated, as tenon controller takes them; SpotToSpotConsolidation (default false) lets the tenon and karpenter-like policies replace spot by spot")
	fl.Int32Var(&f.expendableCutoff, "expendable-pods-priority-cutoff", scheduling.DefaultExpendableCutoff,
		"pods of a priority below this are expendable: the tenon and node-groups policies buy no capacity for them (karpenter-like does, as Karpenter)")
	fl.Int64Var(&f.gpuShares, "gpu-shares", 0, "serve trace rows asking for a fraction of a GPU from GPUs shared this many ways (time-slicing: each pod asks for ceil(gpu × N) of nvidia.com/gpu.shared); without -f a NodePool gpu-shared of such GPUs is added; 0 refuses fractional GPUs")
	fl.StringVar(&f.gpuMIG, "gpu-mig", "", "serve trace rows asking for a fraction of a GPU from MIG instances of this profile (1g.10gb, 2g.20gb, …): each pod asks for ceil(gpu × N) of nvidia.com/mig-<profile>, N the profile's instances per GPU; without -f a NodePool gpu-mig of A100/H100/H200/B200 types in MIG layout all-<profile> is added; exclusive with --gpu-shares")
	fl.BoolVar(&f.gangs, "gangs", false, "treat every job of more than one replica as a gang (a PodGroup whose minCount is its replicas): kube-scheduler binds its pods together or not at all for every policy; tenon buys its capacity whole or not at all, karpenter-like and node-groups pod by pod")
	fl.StringVar(&f.commitments, "commitments", "", "a file of Commitments (tenon.sh/v1alpha1: Savings Plans, Reserved Instances) to bill every policy with; tenon decides with them, and the policy tenon-list-prices (tenon deciding at list prices) is added to show what that is worth. Commitments in the -f manifests count too")
	fl.BoolVar(&f.strict, "strict", false, "treat trace rows that would be skipped as errors")
	fl.BoolVar(&f.noProgress, "no-progress", false, "do not draw the progress bar (it is drawn only when standard error is a terminal)")
	return cmd
}

func runSimulate(cmd *cobra.Command, f *simulateFlags) error {
	if f.trace == "" && len(f.files) == 0 {
		return fmt.Errorf("nothing to replay: give --trace FILE, or -f manifests with workloads (and --schedule)")
	}
	if f.trace != "" && f.schedule != "" {
		return fmt.Errorf("--schedule scales the -f workloads; it does not apply to --trace")
	}
	opts, err := simOptions(f)
	if err != nil {
		return err
	}
	set, source, err := loadManifests(f.files, f.recursive, f.trace != "", f.gpuShares, f.gpuMIG)
	if err != nil {
		return err
	}
	for _, k := range set.Ignored(simulateKinds...) {
		fmt.Fprintf(cmd.ErrOrStderr(), "tenon simulate: ignored %s; the simulator does not read this kind\n", k.Describe())
	}
	var w *sim.Workload
	if f.trace != "" {
		if w, err = readTraceWorkload(f, set); err != nil {
			return err
		}
		source = f.trace
		if n := set.PodCount(); n > 0 {
			fmt.Fprintf(cmd.ErrOrStderr(), "tenon simulate: the %d pods of the -f workloads are not replayed with --trace\n", n)
		}
	} else {
		var sched *sim.Schedule
		if f.schedule != "" {
			fh, err := os.Open(f.schedule)
			if err != nil {
				return err
			}
			sched, err = sim.ReadSchedule(fh)
			fh.Close()
			if err != nil {
				return fmt.Errorf("%s: %w", f.schedule, err)
			}
			source += " with " + f.schedule
		}
		if w, err = sim.ScheduleWorkload(set, sched, f.until); err != nil {
			return err
		}
	}
	w = w.Prefix(f.maxJobs)
	env, err := sim.NewEnv(set, w, sim.EnvOptions{Region: f.region})
	if err != nil {
		return err
	}
	policies := strings.Split(f.policies, ",")
	if opts.Commitments, err = simCommitments(f.commitments, set, env); err != nil {
		return err
	}
	if len(opts.Commitments) > 0 && !cmd.Flags().Changed("policies") {
		policies = append(policies, sim.PolicyTenonListPrices)
	}
	// The replay allocates briskly and keeps little: collecting less often saves a third of
	// its time.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	var bar *progress
	if !f.noProgress && isTerminal(cmd.ErrOrStderr()) {
		bar = newProgress(cmd.ErrOrStderr(), policies)
		opts.Progress = bar.set
	}
	// A timeout or an interrupt stops the replays where they are; the report of what they
	// reached is written, marked incomplete, and the command then fails.
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if f.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.timeout)
		defer cancel()
	}
	rep, err := sim.SimulateContext(ctx, env, source, policies, opts)
	bar.done()
	if err != nil {
		return err
	}
	stop() // a second Ctrl-C while the report is written ends the process
	var incomplete error
	if rep.Incomplete {
		why := "interrupted"
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			why = fmt.Sprintf("stopped by --timeout %s", f.timeout)
		}
		incomplete = fmt.Errorf("the replay was %s before its end: the report covers what it reached and is marked incomplete", why)
	}
	if err := report.WriteSummary(cmd.OutOrStdout(), rep); err != nil {
		return err
	}
	if f.out != "" {
		if err := writeFile(f.out, func(w io.Writer) error { return report.WriteHTML(w, rep) }); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "\nwrote %s\n", f.out)
	}
	switch f.jsonOut {
	case "":
	case "-":
		if err := report.WriteJSON(cmd.OutOrStdout(), rep); err != nil {
			return err
		}
	default:
		if err := writeFile(f.jsonOut, func(w io.Writer) error { return report.WriteJSON(w, rep) }); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", f.jsonOut)
	}
	return incomplete
}

func simOptions(f *simulateFlags) (sim.Options, error) {
	opts := sim.Options{Seed: f.seed, Until: f.until, RestartPenalty: f.restart, Scheduler: sim.Scoring(f.scheduler), TenonDisruption: f.tenonDisruption, SpotToSpotConsolidation: f.spotToSpot,
		ExpendablePriorityCutoff: &f.expendableCutoff, Gangs: f.gangs}
	if f.bootDelay != "class" {
		d, err := sim.ParseDelay(f.bootDelay)
		if err != nil {
			return opts, fmt.Errorf("--boot-delay: %w", err)
		}
		opts.BootDelay = d
	}
	switch sim.SpotMode(f.spot) {
	case sim.SpotAdvisor, sim.SpotNone, sim.SpotClass:
		opts.Spot = sim.SpotMode(f.spot)
	default:
		return opts, fmt.Errorf("--spot-interruptions %q: use advisor, none or class", f.spot)
	}
	switch sim.SpotCapacityMode(f.spotCapacity) {
	case "", sim.SpotCapacityAdvisor, sim.SpotCapacityUnlimited:
		opts.SpotCapacity = sim.SpotCapacityMode(f.spotCapacity)
	default:
		return opts, fmt.Errorf("--spot-capacity %q: use advisor or unlimited", f.spotCapacity)
	}
	if f.spotCapacityVCPUs <= 0 {
		return opts, fmt.Errorf("--spot-capacity-vcpus %d: must be positive", f.spotCapacityVCPUs)
	}
	opts.SpotCapacityVCPUs = f.spotCapacityVCPUs
	if opts.Scheduler != sim.LeastAllocated && opts.Scheduler != sim.MostAllocated {
		return opts, fmt.Errorf("--scheduler %q: use least-allocated or most-allocated", f.scheduler)
	}
	if f.nodeGroups != "" {
		opts.NodeGroups = strings.Split(f.nodeGroups, ",")
	}
	return opts, nil
}

// simulateKinds are the kinds simulate reads from the -f manifests (volumes are not simulated).
var simulateKinds = []schema.GroupKind{
	{Group: apisv1.Group, Kind: apisv1.NodePoolKind}, {Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind},
	awsv1.EC2NodeClassGroupKind, karpv1alpha1.NodeOverlayGroupKind, tenonv1alpha1.CommitmentGroupKind,
	{Kind: "Pod"}, {Group: "apps", Kind: "Deployment"}, {Group: "apps", Kind: "ReplicaSet"},
	{Group: "apps", Kind: "StatefulSet"}, {Group: "apps", Kind: "DaemonSet"}, {Group: "batch", Kind: "Job"},
	{Group: "batch", Kind: "CronJob"}, {Group: "scheduling.k8s.io", Kind: "PriorityClass"},
	{Group: "node.k8s.io", Kind: "RuntimeClass"},
}

// loadManifests reads the -f files or, when none is given, an example: for a trace the GPU
// NodePools of examples/simulate (no limits, so that no policy is held back by a cap the bound
// does not know) and, with GPU shares, the NodePool and NodeOverlays of shared GPUs
// (sim.SharedGPUNodePools), or with a MIG profile the NodePool of MIG-partitioned GPUs
// (sim.MIGNodePool), else the NodePools tenon up applies.
func loadManifests(files []string, recursive, trace bool, gpuShares int64, gpuMIG string) (*manifest.Set, string, error) {
	if len(files) > 0 {
		set, err := manifest.LoadWith(manifest.LoadOptions{Recursive: recursive}, files...)
		return set, strings.Join(files, ", "), err
	}
	name := "nodepools.yaml"
	if trace {
		name = "simulate/gpu-nodepools.yaml"
	}
	data, err := examples.Files.ReadFile(name)
	if err != nil {
		return nil, "", err
	}
	source := "examples/" + name
	if trace && gpuShares > 0 {
		data = append(append(data, "\n---\n"...), sim.SharedGPUNodePools(gpuShares)...)
		source += fmt.Sprintf(" and a NodePool of GPUs shared %d ways", gpuShares)
	}
	if trace && gpuMIG != "" {
		if _, err := sim.MIGShares(gpuMIG); err != nil {
			return nil, "", fmt.Errorf("--gpu-mig: %w", err)
		}
		data = append(append(data, "\n---\n"...), sim.MIGNodePool(gpuMIG)...)
		source += fmt.Sprintf(" and a NodePool of GPUs in MIG layout all-%s", gpuMIG)
	}
	set, err := manifest.Parse("examples/"+name, data)
	return set, source, err
}

func readTraceWorkload(f *simulateFlags, set *manifest.Set) (*sim.Workload, error) {
	q := func(flag, s string, milli bool) (int64, error) {
		if s == "" {
			return 0, nil
		}
		v, err := resource.ParseQuantity(s)
		if err != nil {
			return 0, fmt.Errorf("--%s %q: %w", flag, s, err)
		}
		if milli {
			return v.MilliValue(), nil
		}
		return v.Value(), nil
	}
	var opts sim.TraceOptions
	var err error
	if opts.CPUPerGPU, err = q("cpu-per-gpu", f.cpuPerGPU, true); err != nil {
		return nil, err
	}
	if opts.MemoryPerGPU, err = q("memory-per-gpu", f.memPerGPU, false); err != nil {
		return nil, err
	}
	if opts.CPUPerPod, err = q("cpu-per-pod", f.cpuPerPod, true); err != nil {
		return nil, err
	}
	if opts.MemoryPerPod, err = q("memory-per-pod", f.memPerPod, false); err != nil {
		return nil, err
	}
	opts.Strict = f.strict
	opts.GPUShares = f.gpuShares
	opts.MIGProfile = f.gpuMIG
	if opts.GPUModels, err = sim.GPUModels(set, f.region); err != nil {
		return nil, err
	}
	fh, err := os.Open(f.trace)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var r io.Reader = fh
	if strings.HasSuffix(f.trace, ".gz") {
		gz, err := gzip.NewReader(fh)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.trace, err)
		}
		defer gz.Close()
		r = gz
	}
	tr, skips, err := sim.ReadTrace(r, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.trace, err)
	}
	return tr.Workload(skips)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func writeFile(path string, write func(io.Writer) error) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(fh); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// progress draws one line of per-policy progress on a terminal's standard error.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	names []string
	frac  map[string]float64
	last  time.Time
}

func newProgress(w io.Writer, names []string) *progress {
	return &progress{w: w, names: names, frac: map[string]float64{}}
}

func (p *progress) set(name string, f float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frac[name] = f
	if now := time.Now(); f < 1 && now.Sub(p.last) < 100*time.Millisecond {
		return
	} else {
		p.last = now
	}
	p.draw()
}

func (p *progress) draw() {
	var b strings.Builder
	b.WriteString("\rsimulating")
	for _, n := range p.names {
		f := p.frac[n]
		const width = 20
		full := int(f * width)
		fmt.Fprintf(&b, "  %s [%s%s] %3.0f%%", n, strings.Repeat("#", full), strings.Repeat(".", width-full), 100*f)
	}
	fmt.Fprint(p.w, b.String())
}

func (p *progress) done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw()
	fmt.Fprintln(p.w)
}

// simCommitments reads the Commitments of --commitments FILE and of the -f manifests, a metal
// reservation's vCPUs taken from the NodePools' instance types.
func simCommitments(file string, set *manifest.Set, env *sim.Env) ([]commitment.Commitment, error) {
	objs := set.Commitments
	if file != "" {
		cs, err := manifest.Load(file)
		if err != nil {
			return nil, err
		}
		if len(cs.Commitments) == 0 {
			return nil, fmt.Errorf("--commitments %s: no tenon.sh/v1alpha1 Commitment in it", file)
		}
		if ign := cs.Ignored(tenonv1alpha1.CommitmentGroupKind); len(ign) > 0 {
			return nil, fmt.Errorf("--commitments %s: only Commitments belong there, not %s", file, ign[0].Describe())
		}
		objs = append(objs, cs.Commitments...)
	}
	vcpu := map[string]int64{}
	for _, p := range env.Pools {
		for _, it := range p.Types {
			vcpu[it.Name] = it.Capacity[scheduling.CPU] / 1000
		}
	}
	var out []commitment.Commitment
	for _, o := range objs {
		c, err := commitment.FromAPI(o, func(name string) int64 { return vcpu[name] })
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

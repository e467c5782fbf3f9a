package sim

import (
	"fmt"
	"github.com/tenon-sh/tenon/pkg/commitment"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// Options tune a simulation. The zero value is usable: DefaultOptions fills what is unset.
type Options struct {
	// Seed seeds every random draw (boot delays, instance IDs, spot interruptions): equal seeds
	// give equal results.
	Seed uint64
	// BootDelay is the distribution of the time from launch to a running instance; the zero
	// value takes each class's bootDelay. Registration and device-plugin delays follow from the
	// class.
	BootDelay Delay
	// Spot chooses the spot interruption model: SpotAdvisor (the Spot Advisor buckets of the
	// catalog), SpotNone, or SpotClass (what each SimNodeClass says).
	Spot SpotMode
	// SpotCapacity chooses how many instances each spot offering can sell at once:
	// SpotCapacityUnlimited (the default) or SpotCapacityAdvisor (by its Spot Advisor bucket,
	// see spotPools). SpotCapacityVCPUs is the vCPUs an offering of the lowest-risk bucket
	// sells (default 4,096). The finite model is not the default yet: replays under it are
	// several times slower (docs/performance.md).
	SpotCapacity      SpotCapacityMode
	SpotCapacityVCPUs int64
	// BatchIdle and BatchMax are the provisioning batcher's windows (1 s and 10 s, as
	// Karpenter's): a batch closes after BatchIdle without a new pending pod, or BatchMax after
	// it opened.
	BatchIdle, BatchMax time.Duration
	// PassInterval is the period of disruption passes (10 s).
	PassInterval time.Duration
	// Until, when positive, stops the simulation at that virtual time.
	Until time.Duration
	// Scheduler is how the simulated kube-scheduler scores nodes (LeastAllocated, its default).
	Scheduler Scoring
	// RestartPenalty is work an evicted pod must redo when it starts again (0: it resumes
	// where it stopped, as a checkpointed job does).
	RestartPenalty time.Duration
	// Buckets is the number of points of the time series (600).
	Buckets int
	// TenonDisruption chooses the tenon policy's disruption: DisruptionInterim (the default)
	// or DisruptionPackage (pkg/disruption).
	TenonDisruption string
	// SpotToSpotConsolidation is Karpenter's feature gate of that name (off by default): the
	// tenon and karpenter-like policies replace spot nodes by spot only when it is on.
	SpotToSpotConsolidation bool
	// ExpendablePriorityCutoff: pods of a priority below it are expendable (default
	// scheduling.DefaultExpendableCutoff, -10). The tenon and node-groups policies buy no
	// capacity for them, as tenon and Cluster Autoscaler do, and tenon's disruption finds them
	// no place; the karpenter-like policy provisions for them, as Karpenter does.
	ExpendablePriorityCutoff *int32
	// Gangs makes every job of more than one replica a gang: a PodGroup whose minCount is the
	// job's replicas. The simulated kube-scheduler then binds a gang's pods together or not at
	// all (its gang scheduling, on in tenon's control plane), for every policy; the tenon
	// policy gives a gang capacity whole or not at all (pkg/solver's gangs), the karpenter-like
	// and node-groups policies provision pod by pod, as Karpenter and Cluster Autoscaler do.
	Gangs bool
	// NodeGroups names the instance types of the node-groups baseline (empty: chosen from the
	// workload, see NodeGroupsPolicy).
	NodeGroups []string
	// Commitments are Savings Plans and Reserved Instances (pkg/commitment): every policy is
	// billed with them (PolicyResult.Bill), and the policies that decide with them (tenon)
	// price by what an instance adds to the bill.
	Commitments []commitment.Commitment
	// Progress, when set, is called as a run advances with the fraction of its jobs that have
	// arrived (0 to 1). Runs call it from their own goroutine.
	Progress func(policy string, fraction float64)
}

// SpotMode chooses the spot interruption model.
type SpotMode string

const (
	SpotAdvisor SpotMode = "advisor"
	SpotNone    SpotMode = "none"
	SpotClass   SpotMode = "class"
)

// SpotCapacityMode chooses how much each spot offering can sell.
type SpotCapacityMode string

const (
	SpotCapacityAdvisor   SpotCapacityMode = "advisor"
	SpotCapacityUnlimited SpotCapacityMode = "unlimited"
)

// Scoring is how the simulated kube-scheduler picks among nodes with room for a pod.
type Scoring string

const (
	// LeastAllocated prefers the node with the most free CPU and memory (kube-scheduler's
	// default NodeResourcesFit strategy).
	LeastAllocated Scoring = "least-allocated"
	// MostAllocated prefers the fullest node (the bin-packing strategy).
	MostAllocated Scoring = "most-allocated"
)

// withDefaults returns the options with unset fields at their defaults.
func (o Options) withDefaults() Options {
	if o.Spot == "" {
		o.Spot = SpotAdvisor
	}
	if o.SpotCapacity == "" {
		o.SpotCapacity = SpotCapacityUnlimited
	}
	if o.SpotCapacityVCPUs <= 0 {
		o.SpotCapacityVCPUs = DefaultSpotCapacityVCPUs
	}
	if o.BatchIdle <= 0 {
		o.BatchIdle = time.Second
	}
	if o.BatchMax <= 0 {
		o.BatchMax = 10 * time.Second
	}
	if o.PassInterval <= 0 {
		o.PassInterval = 10 * time.Second
	}
	if o.Scheduler == "" {
		o.Scheduler = LeastAllocated
	}
	if o.Buckets <= 0 {
		o.Buckets = 600
	}
	return o
}

// Delay is a distribution of durations: fixed, normal (truncated at zero) or uniform.
type Delay struct {
	Kind string // "fixed", "normal", "uniform"; "" means unset
	// A and B are the value (fixed), the mean and standard deviation (normal), or the bounds
	// (uniform).
	A, B time.Duration
}

// ParseDelay reads "fixed:45s", "normal:60s,10s" or "uniform:30s,90s".
func ParseDelay(s string) (Delay, error) {
	kind, args, ok := strings.Cut(s, ":")
	if !ok {
		return Delay{}, fmt.Errorf("delay %q: want fixed:D, normal:MEAN,STDDEV or uniform:MIN,MAX", s)
	}
	parts := strings.Split(args, ",")
	var ds []time.Duration
	for _, p := range parts {
		d, err := time.ParseDuration(strings.TrimSpace(p))
		if err != nil || d < 0 {
			return Delay{}, fmt.Errorf("delay %q: %q is not a non-negative duration", s, p)
		}
		ds = append(ds, d)
	}
	want := 2
	if kind == "fixed" {
		want = 1
	}
	switch {
	case kind != "fixed" && kind != "normal" && kind != "uniform":
		return Delay{}, fmt.Errorf("delay %q: unknown distribution %q (fixed, normal, uniform)", s, kind)
	case len(ds) != want:
		return Delay{}, fmt.Errorf("delay %q: %s takes %d duration(s)", s, kind, want)
	case kind == "uniform" && ds[1] < ds[0]:
		return Delay{}, fmt.Errorf("delay %q: the maximum is below the minimum", s)
	}
	d := Delay{Kind: kind, A: ds[0]}
	if want == 2 {
		d.B = ds[1]
	}
	return d, nil
}

func (d Delay) String() string {
	switch d.Kind {
	case "fixed":
		return "fixed:" + d.A.String()
	case "normal", "uniform":
		return d.Kind + ":" + d.A.String() + "," + d.B.String()
	}
	return "the class's bootDelay"
}

// IsZero reports whether the delay is unset.
func (d Delay) IsZero() bool { return d.Kind == "" }

// Draw draws a duration.
func (d Delay) Draw(r *rand.Rand) time.Duration {
	switch d.Kind {
	case "normal":
		v := float64(d.A) + r.NormFloat64()*float64(d.B)
		return time.Duration(math.Max(v, 0))
	case "uniform":
		return d.A + time.Duration(r.Float64()*float64(d.B-d.A))
	}
	return d.A
}

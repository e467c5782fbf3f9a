package e2e

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	disruptionctrl "github.com/tenon-sh/tenon/pkg/controllers/disruption"
	"github.com/tenon-sh/tenon/pkg/disruption"
	"github.com/tenon-sh/tenon/pkg/operator"
)

// BenchmarkDisruptionScaleDown measures the disruption loop end to end on a real control plane,
// with its default timing (a pass every 10s, commands validated 15s after they are found) and
// the default budget (10% of a nodepool's nodes): 500 pods of ten Deployments (each with a
// PodDisruptionBudget of maxUnavailable 1) are provisioned and settle, then every Deployment
// is scaled to 40% (200 pods), and the loop runs until it is quiescent (three passes in a row
// find nothing and no command runs). It reports the minutes from the scale-down to the end of
// the last command, the fleet's $/h before and after, the pods evicted per $/h saved, the
// commands, and the most nodes seen disrupting at once against what the budget allowed;
// a budget or PodDisruptionBudget found exceeded, or a pod not running at the end, fails it.
func BenchmarkDisruptionScaleDown(b *testing.B) {
	for i := 0; i < b.N; i++ {
		benchDisruption(b, 500, 200)
	}
}

// disruptionWatch follows the loop through its hooks.
type disruptionWatch struct {
	mu        sync.Mutex
	noop      int // no-op passes in a row with nothing running
	quiet     chan struct{}
	armed     bool
	commands  map[string]int // method/action → succeeded commands
	evicted   int
	saved     float64
	lastEnd   time.Time
	failed    int
	maxPass   time.Duration
	passes    int
	truncated int
	skips     map[disruption.SkipReason]int // of the last pass
}

func (w *disruptionWatch) onPass(r disruptionctrl.PassResult) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.passes++
	w.maxPass = max(w.maxPass, r.Duration)
	if r.Decision != nil && r.Decision.Outcome == disruption.OutcomeTruncated {
		w.truncated++
	}
	if r.Decision != nil {
		w.skips = map[disruption.SkipReason]int{}
		for _, s := range r.Decision.Skips {
			w.skips[s.Reason]++
		}
	}
	if r.Decision != nil && len(r.Decision.Commands) == 0 && r.Running == 0 {
		w.noop++
	} else {
		w.noop = 0
	}
	if w.armed && w.noop >= 3 {
		w.armed = false
		close(w.quiet)
	}
}

func (w *disruptionWatch) onCommand(r disruptionctrl.CommandResult) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch r.Result {
	case disruptionctrl.ResultSucceeded:
		w.commands[string(r.Command.Method)+"/"+string(r.Command.Action)]++
		w.evicted += len(r.Command.Pods)
		w.saved += r.Saved
		w.lastEnd = r.End
	case disruptionctrl.ResultFailed:
		w.failed++
	}
}

// waitQuiet waits for three no-op passes in a row counted from now.
func (w *disruptionWatch) waitQuiet(b *testing.B, timeout time.Duration) {
	w.mu.Lock()
	w.quiet, w.armed, w.noop = make(chan struct{}), true, 0
	ch := w.quiet
	w.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(timeout):
		b.Fatalf("the disruption loop did not become quiescent within %s", timeout)
	}
}

func benchDisruption(b *testing.B, from, to int) {
	cp, kube := benchControlPlane(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &disruptionWatch{commands: map[string]int{}}
	opts := operator.Options{MetricsAddr: "0", HealthAddr: "0", AllowRepeatedControllers: true}
	opts.Provisioning.BatchIdle, opts.Provisioning.BatchMax = time.Second, 10*time.Second
	opts.Disruption.OnPass, opts.Disruption.OnCommand = w.onPass, w.onCommand
	pool := nodePool("general", "default", []string{"m5", "c5", "r5"}, budgets(apisv1.Budget{Nodes: "10%"}))
	for _, o := range []client.Object{nodeClass("default"), pool} {
		if err := kube.Create(ctx, o); err != nil {
			b.Fatal(err)
		}
	}
	op, err := operator.New(ctx, cp.RESTConfig(), opts, discard())
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = op.Start(ctx) }()

	const deployments = 10
	per := int32(from / deployments)
	for d := 0; d < deployments; d++ {
		name := fmt.Sprintf("app-%d", d)
		cpu, mem := []string{"250m", "500m", "1"}[d%3], []string{"256Mi", "1Gi", "2Gi"}[d%3]
		pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: new(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}}}
		for _, o := range []client.Object{deployment(name, per, cpu, mem), pdb} {
			if err := kube.Create(ctx, o); err != nil {
				b.Fatal(err)
			}
		}
	}
	running := func(want int) error {
		return wait.PollUntilContextTimeout(ctx, time.Second, 20*time.Minute, false, func(context.Context) (bool, error) {
			var pods corev1.PodList
			if err := kube.List(ctx, &pods, client.InNamespace("default")); err != nil {
				return false, nil
			}
			n := 0
			for _, p := range pods.Items {
				if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
					n++
				}
			}
			return n == want && len(pods.Items) == want, nil
		})
	}
	if err := running(from); err != nil {
		b.Fatalf("%d pods not all running: %v", from, err)
	}
	w.waitQuiet(b, 15*time.Minute) // whatever the loop makes of the fresh fleet is not measured

	// Scale down, then watch budgets and PDBs until the loop is quiescent.
	for d := 0; d < deployments; d++ {
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("app-%d", d)}}
		if err := kube.Get(ctx, client.ObjectKeyFromObject(dep), dep); err != nil {
			b.Fatal(err)
		}
		orig := dep.DeepCopy()
		replicas := int32(to / deployments)
		dep.Spec.Replicas = &replicas
		if err := kube.Patch(ctx, dep, client.MergeFrom(orig)); err != nil {
			b.Fatal(err)
		}
	}
	scaled := time.Now()
	if err := running(to); err != nil {
		b.Fatalf("%d pods not all running after the scale-down: %v", to, err)
	}
	before := fleetPrice(b, ctx, kube)
	w.mu.Lock()
	startEvicted, startSaved, startEnd := w.evicted, w.saved, w.lastEnd
	w.commands = map[string]int{}
	w.mu.Unlock()
	cpu0 := cpuSeconds()

	watchCtx, stopWatch := context.WithCancel(ctx)
	var violations []string
	mostDisrupting, allowedThen := 0, 0
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for watchCtx.Err() == nil {
			disrupting, total := poolDisruption(ctx, kube, "general")
			allowed := int(math.Ceil(0.10 * float64(total)))
			if disrupting > mostDisrupting {
				mostDisrupting, allowedThen = disrupting, allowed
			}
			if disrupting > allowed {
				violations = append(violations, fmt.Sprintf("%d of %d nodes disrupting, the budget allows %d", disrupting, total, allowed))
			}
			var pdbs policyv1.PodDisruptionBudgetList
			if err := kube.List(ctx, &pdbs); err == nil {
				for _, p := range pdbs.Items {
					if p.Status.ObservedGeneration == p.Generation && p.Status.CurrentHealthy < p.Status.DesiredHealthy {
						violations = append(violations, fmt.Sprintf("PDB %s: %d healthy, %d desired", p.Name, p.Status.CurrentHealthy, p.Status.DesiredHealthy))
					}
				}
			}
			time.Sleep(250 * time.Millisecond)
		}
	}()
	w.waitQuiet(b, 30*time.Minute)
	stopWatch()
	<-watched
	if err := running(to); err != nil {
		b.Fatalf("%d pods not all running once consolidated: %v", to, err)
	}
	after := fleetPrice(b, ctx, kube)
	for _, v := range violations {
		b.Errorf("violation: %s", v)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	evicted, saved := w.evicted-startEvicted, w.saved-startSaved
	end := w.lastEnd
	if !end.After(startEnd) {
		b.Fatalf("no command ran after the scale-down (fleet $%.3f/h; the last pass skipped %v)", before, w.skips)
	}
	b.ReportMetric(end.Sub(scaled).Minutes(), "min-to-consolidated")
	b.ReportMetric(before, "$/h-before")
	b.ReportMetric(after, "$/h-after")
	b.ReportMetric(float64(evicted)/(before-after), "evictions-per-$/h-saved")
	b.ReportMetric(float64(evicted), "evictions")
	b.ReportMetric(saved, "$/h-saved-by-commands")
	b.ReportMetric(float64(mostDisrupting), "max-disrupting")
	b.ReportMetric(float64(allowedThen), "budget-then")
	b.ReportMetric(float64(len(violations)), "violations")
	b.ReportMetric(float64(w.failed), "failed-commands")
	b.ReportMetric(w.maxPass.Seconds(), "s-max-pass")
	b.ReportMetric(cpuSeconds()-cpu0, "controller-cpu-s")
	for k, n := range w.commands {
		b.Logf("commands %s: %d", k, n)
	}
	b.Logf("fleet $%.3f/h → $%.3f/h in %s; %d pods evicted; %d passes (%d truncated); the last pass skipped %v",
		before, after, end.Sub(scaled).Round(time.Second), evicted, w.passes, w.truncated, w.skips)
}

// fleetPrice sums the price of every instance running.
func fleetPrice(b *testing.B, ctx context.Context, kube client.Client) float64 {
	var l simv1alpha1.SimInstanceList
	if err := kube.List(ctx, &l); err != nil {
		b.Fatal(err)
	}
	total := 0.0
	for _, in := range l.Items {
		if in.Status.Phase == simv1alpha1.InstanceTerminated {
			continue
		}
		p, err := strconv.ParseFloat(in.Spec.Price, 64)
		if err != nil {
			b.Fatalf("instance %s price %q: %v", in.Name, in.Spec.Price, err)
		}
		total += p
	}
	return total
}

// poolDisruption counts a nodepool's nodes being disrupted (claim deleted, or node tainted
// disrupted) and its nodes as budgets count them (registered, or being deleted).
func poolDisruption(ctx context.Context, kube client.Client, pool string) (disrupting, total int) {
	var claims apisv1.NodeClaimList
	var nodes corev1.NodeList
	if kube.List(ctx, &claims, client.MatchingLabels{apisv1.NodePoolLabelKey: pool}) != nil || kube.List(ctx, &nodes) != nil {
		return 0, math.MaxInt32
	}
	tainted := map[string]bool{}
	for _, n := range nodes.Items {
		if disruptionctrl.HasDisruptedTaint(&n) {
			tainted[n.Spec.ProviderID] = true
		}
	}
	for _, c := range claims.Items {
		deleting := c.DeletionTimestamp != nil || (c.Status.ProviderID != "" && tainted[c.Status.ProviderID])
		if c.Status.NodeName != "" || deleting {
			total++
		}
		if deleting {
			disrupting++
		}
	}
	return disrupting, total
}

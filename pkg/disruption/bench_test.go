package disruption

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/snapshot"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// BenchmarkConsolidate measures disruption at fleet scale on the AWS catalog. The cluster is
// fragmented the way real ones are: a mixed workload is provisioned by the solver (the scale-up),
// then every Deployment loses 60% of its replicas (the scale-down). One op is one pass: the time
// to find the full set of commands it would run. After timing, passes are applied until none
// acts, and the fleet's $/h is compared with the LP lower bound of the pods that remain.
// The norepack case turns N→M repacks off (Options.NoRepack); the first-pass case times the
// first pass only and does not converge (10,000 nodes take hours of passes).
func BenchmarkConsolidate(b *testing.B) {
	for _, bc := range []struct {
		nodes     int
		noRepack  bool
		firstOnly bool
	}{{100, false, false}, {1000, false, false}, {1000, true, false}, {5000, false, false}, {10000, false, true}} {
		name := fmt.Sprintf("nodes=%d", bc.nodes)
		if bc.noRepack {
			name += "/norepack"
		}
		if bc.firstOnly {
			name += "/first-pass"
		}
		b.Run(name, func(b *testing.B) {
			fx := fragmented(b, bc.nodes)
			fx.dropEmpty(b)
			opts := Options{NoRepack: bc.noRepack}
			b.ReportAllocs()
			b.ResetTimer()
			var d *Decision
			for i := 0; i < b.N; i++ {
				var err error
				if d, err = Decide(fx.snapshot(), opts); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(len(d.Commands)), "commands-first-pass")
			b.ReportMetric(float64(d.Simulations), "simulations-first-pass")
			if bc.firstOnly {
				b.ReportMetric(float64(len(fx.nodes)), "nodes-before")
				return
			}
			fx.converge(b, opts)
		})
	}
}

// fleet is a cluster of solver nodes with the disruption view of each, mutated pass by pass.
type fleet struct {
	pool  *apisv1.NodePool
	sp    solver.NodePool
	nodes []solver.Node
	meta  []Node
	now   time.Time
}

func (f *fleet) snapshot() *Snapshot {
	return &Snapshot{
		Solver:    &solver.Snapshot{NodePools: []solver.NodePool{f.sp}, Nodes: f.nodes},
		NodePools: map[string]*apisv1.NodePool{f.pool.Name: f.pool},
		Nodes:     f.meta, Now: f.now,
	}
}

// fragmented provisions a mixed workload sized to about n nodes, then scales it down by 60%.
func fragmented(b testing.TB, n int) *fleet {
	b.Helper()
	np := &apisv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "general"}}
	np.Spec.Template.Spec.Requirements = []apisv1.NodeSelectorRequirementWithMinValues{
		req(apisv1.LabelInstanceCategory, corev1.NodeSelectorOpIn, "c", "m", "r"),
		req(apisv1.LabelInstanceGeneration, corev1.NodeSelectorOpGt, "4"),
		req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand),
	}
	np.Spec.Disruption.ConsolidationPolicy = apisv1.ConsolidationPolicyWhenEmptyOrUnderutilized
	np.Spec.Disruption.ConsolidateAfter = apisv1.NewNillableDuration(0)
	np.Spec.Disruption.Budgets = []apisv1.Budget{{Nodes: "10%"}}
	sp, err := snapshot.NodePool(np, aws(b).Types, snapshot.Usage{})
	if err != nil {
		b.Fatal(err)
	}
	f := &fleet{pool: np, sp: sp, now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	// About 9 pods per node on the nodes this mix buys; one sizing solve corrects the guess.
	pods := mixedWorkload(rng, n*9)
	plan, err := solver.Solve(&solver.Snapshot{NodePools: []solver.NodePool{sp}, Pods: pods}, solver.Options{SkipBound: true})
	if err != nil {
		b.Fatal(err)
	}
	if len(plan.Claims) > 0 && len(plan.Claims) != n {
		pods = mixedWorkload(rand.New(rand.NewPCG(uint64(n), 7)), len(pods)*n/len(plan.Claims))
		if plan, err = solver.Solve(&solver.Snapshot{NodePools: []solver.NodePool{sp}, Pods: pods}, solver.Options{SkipBound: true}); err != nil {
			b.Fatal(err)
		}
	}
	if len(plan.Unschedulable) > 0 {
		b.Fatalf("%d pods of the workload fit nowhere", len(plan.Unschedulable))
	}
	keep := map[*corev1.Pod]bool{}
	byApp := map[string][]*corev1.Pod{}
	var apps []string
	for _, p := range pods {
		app := p.Labels["app"]
		if _, ok := byApp[app]; !ok {
			apps = append(apps, app)
		}
		byApp[app] = append(byApp[app], p)
	}
	for _, app := range apps {
		group := byApp[app]
		rng.Shuffle(len(group), func(i, j int) { group[i], group[j] = group[j], group[i] })
		for _, p := range group[:len(group)*2/5] {
			keep[p] = true
		}
	}
	for i, c := range plan.Claims {
		name := fmt.Sprintf("node-%d", i)
		var left []*corev1.Pod
		for _, p := range c.Pods {
			if keep[p] {
				p.Spec.NodeName = name
				left = append(left, p)
			}
		}
		f.add(name, c, left, f.now.Add(-24*time.Hour))
	}
	return f
}

// dropEmpty applies the emptiness passes the scale-down calls for, so that the timed pass is a
// consolidation pass.
func (f *fleet) dropEmpty(b testing.TB) {
	for {
		d, err := Decide(f.snapshot(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(d.Commands) == 0 || d.Commands[0].Method != MethodEmptiness {
			return
		}
		f.apply(d)
	}
}

// add turns a claim into a running node holding pods.
func (f *fleet) add(name string, c *solver.Claim, pods []*corev1.Pod, created time.Time) {
	labels := c.InstanceType.NodeLabels(&c.Offering)
	for k, v := range c.Requirements.Labels() {
		labels[k] = v
	}
	labels[apisv1.NodePoolLabelKey] = c.NodePool
	labels[apisv1.LabelHostname] = name
	f.nodes = append(f.nodes, solver.Node{Name: name, NodePool: c.NodePool, Labels: labels, Initialized: true,
		Allocatable: c.InstanceType.Allocatable(), Pods: pods, Price: c.Price})
	f.meta = append(f.meta, Node{Name: name, NodeClaim: name, NodePool: c.NodePool, InstanceType: c.InstanceType.Name,
		Zone: c.Offering.Zone, CapacityType: c.Offering.CapacityType, ReservationID: c.Offering.ReservationID,
		Price: c.Price, CreatedAt: created, Initialized: true})
}

// apply carries out a pass's commands as the controller would: candidates go, replacements
// come up with their pods, moved pods land.
func (f *fleet) apply(d *Decision) (evicted int) {
	gone := map[string]bool{}
	landing := map[string][]*corev1.Pod{}
	for _, cmd := range d.Commands {
		for _, c := range cmd.Candidates {
			gone[c] = true
		}
		evicted += len(cmd.Pods)
		for _, m := range cmd.Moves {
			landing[m.Node] = append(landing[m.Node], m.Pod)
		}
	}
	var nodes []solver.Node
	var meta []Node
	for i, n := range f.nodes {
		if gone[n.Name] {
			continue
		}
		n.Pods = append(n.Pods[:len(n.Pods):len(n.Pods)], landing[n.Name]...)
		nodes = append(nodes, n)
		meta = append(meta, f.meta[i])
	}
	f.nodes, f.meta = nodes, meta
	for _, cmd := range d.Commands {
		for _, r := range cmd.Replacements {
			pods := append(r.Pods[:len(r.Pods):len(r.Pods)], landing[r.Hostname]...)
			f.add(fmt.Sprintf("r-%d-%s", f.now.Unix(), r.Hostname), r, pods, f.now)
		}
	}
	return evicted
}

func (f *fleet) price() float64 {
	var p float64
	for _, m := range f.meta {
		p += m.Price
	}
	return p
}

// convergeCPU bounds the CPU seconds converge spends; a fleet not settled by then is reported
// as it stands, with settled=0.
const convergeCPU = 600

// converge runs passes (ten simulated minutes apart) until one does nothing even after the
// fleet has sat quiet for two hours (when repacks are allowed), then reports the fleet against
// the lower bound of its pods.
func (f *fleet) converge(b *testing.B, opts Options) (last *Decision) {
	before, nodesBefore := f.price(), len(f.nodes)
	cpu0 := cpuSeconds()
	start := time.Now()
	passes, evictions := 0, 0
	cursor := ""
	var memory *Memory
	settled := 1.0
	waited := false
	simulations := 0
	for ; passes < 1000; passes++ {
		if cpuSeconds()-cpu0 > convergeCPU {
			settled = 0
			break
		}
		opts.Cursor, opts.Memory = cursor, memory
		d, err := Decide(f.snapshot(), opts)
		if err != nil {
			b.Fatal(err)
		}
		cursor, memory = d.Cursor, d.Memory
		simulations += d.Simulations
		last = d
		if len(d.Commands) == 0 {
			if d.Outcome == OutcomeTruncated {
				// The pass ran out of simulations before it saw every node: the next goes on
				// from its cursor, and the two together are one look at the fleet.
				f.now = f.now.Add(10 * time.Minute)
				continue
			}
			// Nothing to do now; the fleet then sits quiet long enough for a repack to be
			// allowed, and settles when that does nothing either.
			if waited {
				break
			}
			waited = true
			f.now = f.now.Add(2 * time.Hour)
			continue
		}
		waited = false
		evictions += f.apply(d)
		f.now = f.now.Add(10 * time.Minute)
	}
	wall, cpu := time.Since(start), cpuSeconds()-cpu0
	var pods []*corev1.Pod
	for _, n := range f.nodes {
		for _, p := range n.Pods {
			q := p.DeepCopy()
			q.Spec.NodeName = ""
			pods = append(pods, q)
		}
	}
	fresh, err := solver.Solve(&solver.Snapshot{NodePools: []solver.NodePool{f.sp}, Pods: pods}, solver.Options{})
	if err != nil {
		b.Fatal(err)
	}
	after := f.price()
	b.ReportMetric(float64(nodesBefore), "nodes-before")
	b.ReportMetric(float64(len(f.nodes)), "nodes-after")
	b.ReportMetric(before, "$/h-before")
	b.ReportMetric(after, "$/h-after")
	b.ReportMetric(fresh.LowerBound, "$/h-bound")
	b.ReportMetric(after/fresh.LowerBound, "after/bound")
	b.ReportMetric(fresh.Price/fresh.LowerBound, "fresh/bound")
	b.ReportMetric(float64(passes), "passes")
	b.ReportMetric(float64(simulations), "simulations-converge")
	b.ReportMetric(float64(evictions), "evictions")
	b.ReportMetric(wall.Seconds(), "s-converge")
	b.ReportMetric(cpu, "cpu-s-converge")
	b.ReportMetric(settled, "settled")
	return last
}

// BenchmarkQuietPass measures a pass over a fleet that consolidation has settled and nothing
// has changed since: what the disruption loop does every 10 s on a quiet cluster. With the
// previous pass's Memory, no node's verdict is simulated again; without it (RejectionTTL < 0),
// every node is.
func BenchmarkQuietPass(b *testing.B) {
	for _, n := range []int{100, 1000} {
		fx := fragmented(b, n)
		fx.dropEmpty(b)
		last := fx.converge(b, Options{})
		for _, remember := range []bool{true, false} {
			b.Run(fmt.Sprintf("nodes=%d/memory=%v", n, remember), func(b *testing.B) {
				opts := Options{Cursor: last.Cursor, Memory: last.Memory}
				if !remember {
					opts = Options{Cursor: last.Cursor, RejectionTTL: -1}
				}
				prev := opts
				b.ReportAllocs()
				b.ResetTimer()
				var d *Decision
				for i := 0; i < b.N; i++ {
					var err error
					if d, err = Decide(fx.snapshot(), opts); err != nil {
						b.Fatal(err)
					}
					if len(d.Commands) > 0 {
						b.Fatalf("a settled fleet's pass acted: %s", d.Commands[0].Message)
					}
					opts.Memory = d.Memory
				}
				b.StopTimer()
				b.ReportMetric(float64(d.Simulations), "simulations/pass")
				b.ReportMetric(float64(len(fx.nodes)), "nodes")
				// The verdicts are the same with and without the memory.
				cold, err := Decide(fx.snapshot(), Options{Cursor: prev.Cursor, RejectionTTL: -1})
				if err != nil {
					b.Fatal(err)
				}
				if got, want := skipSummary(d), skipSummary(cold); got != want {
					b.Fatalf("remembered verdicts %s, simulated %s", got, want)
				}
			})
		}
	}
}

// skipSummary counts a decision's skips by reason.
func skipSummary(d *Decision) string {
	n := map[SkipReason]int{}
	for _, s := range d.Skips {
		n[s.Reason]++
	}
	return fmt.Sprint(n)
}

// mixedWorkload draws Deployments of assorted shapes until it has n pods.
func mixedWorkload(rng *rand.Rand, n int) []*corev1.Pod {
	cpus := []string{"100m", "250m", "500m", "1", "2", "4"}
	perCPU := []int64{1, 2, 4, 8} // GiB of memory per vCPU
	var pods []*corev1.Pod
	for app := 0; len(pods) < n; app++ {
		cpu := resource.MustParse(cpus[rng.IntN(len(cpus))])
		mem := resource.NewQuantity(cpu.MilliValue()*perCPU[rng.IntN(len(perCPU))]<<30/1000, resource.BinarySI)
		replicas := 1 + rng.IntN(40)
		for r := 0; r < replicas && len(pods) < n; r++ {
			pods = append(pods, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%d-%d", app, r), Namespace: "default",
					Labels: map[string]string{"app": fmt.Sprintf("app-%d", app)}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: *mem}}}}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning},
			})
		}
	}
	return pods
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

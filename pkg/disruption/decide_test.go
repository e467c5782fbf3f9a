package disruption

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

func onDemandOnly() apisv1.NodeSelectorRequirementWithMinValues {
	return req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand)
}

func TestEmptinessAfterConsolidateAfter(t *testing.T) {
	w := newFixture(t)
	w.pool("general", append(families("m5"), onDemandOnly()), func(np *apisv1.NodePool) {
		np.Spec.Disruption.ConsolidateAfter = apisv1.NewNillableDuration(5 * time.Minute)
	})
	fresh := w.node("general", "m5.large", "us-east-1a", "on-demand")
	fresh.LastPodEvent = now.Add(-time.Minute)
	old := w.node("general", "m5.large", "us-east-1a", "on-demand")
	old.LastPodEvent = now.Add(-time.Hour)
	w.node("general", "m5.large", "us-east-1a", "on-demand", pod("1", "1Gi"))
	d := decide(t, w.snapshot(), Options{})
	if len(d.Commands) != 1 || d.Commands[0].Method != MethodEmptiness || len(d.Commands[0].Candidates) != 1 || d.Commands[0].Candidates[0] != old.Name {
		t.Fatalf("want one emptiness command for %s, got %+v", old.Name, d.Commands)
	}
	if r := skipOf(d, fresh.Name); r != SkipConsolidateAfter {
		t.Errorf("the fresh empty node must wait for consolidateAfter, skip = %q", r)
	}
}

func TestBudgetLimitsEmptiness(t *testing.T) {
	w := newFixture(t)
	w.pool("general", append(families("m5"), onDemandOnly()), func(np *apisv1.NodePool) {
		np.Spec.Disruption.Budgets = []apisv1.Budget{{Nodes: "1"}}
	})
	for i := 0; i < 3; i++ {
		w.node("general", "m5.large", "us-east-1a", "on-demand")
	}
	d := decide(t, w.snapshot(), Options{})
	if len(d.Commands) != 1 || len(d.Commands[0].Candidates) != 1 {
		t.Fatalf("a budget of 1 allows one empty node, got %+v", d.Commands)
	}
	budget := 0
	for _, s := range d.Skips {
		if s.Reason == SkipBudget {
			budget++
		}
	}
	if budget != 2 {
		t.Errorf("two nodes must be skipped for the budget, got %d", budget)
	}
}

func TestConsolidationDeletesWhenPodsFitElsewhere(t *testing.T) {
	w := newFixture(t)
	w.pool("general", append(families("m5"), onDemandOnly()))
	a := w.node("general", "m5.xlarge", "us-east-1a", "on-demand", pod("1", "1Gi"))
	b := w.node("general", "m5.xlarge", "us-east-1a", "on-demand", pod("1", "1Gi"))
	d := decide(t, w.snapshot(), Options{})
	if len(d.Commands) != 1 {
		t.Fatalf("want one command, got %+v", d.Commands)
	}
	cmd := d.Commands[0]
	if cmd.Action != ActionDelete || len(cmd.Candidates) != 1 || (cmd.Candidates[0] != a.Name && cmd.Candidates[0] != b.Name) {
		t.Fatalf("want one of the two nodes deleted, got %+v", cmd)
	}
	if cmd.Savings <= 0 {
		t.Errorf("savings %.4f", cmd.Savings)
	}
}

func TestConsolidationReplacesWithCheaper(t *testing.T) {
	w := newFixture(t)
	w.pool("general", append(families("m5"), onDemandOnly()))
	big := w.node("general", "m5.4xlarge", "us-east-1a", "on-demand", pod("500m", "1Gi"))
	d := decide(t, w.snapshot(), Options{})
	if len(d.Commands) != 1 || d.Commands[0].Action != ActionReplace || d.Commands[0].Candidates[0] != big.Name {
		t.Fatalf("want the big node replaced, got %+v", d.Commands)
	}
	r := d.Commands[0].Replacements
	if len(r) != 1 || r[0].InstanceType.Name != "m5.large" {
		t.Fatalf("want an m5.large replacement, got %v", r)
	}
	if d.Commands[0].ReplacementPrice >= d.Commands[0].Price {
		t.Errorf("replacement must be cheaper: %.4f vs %.4f", d.Commands[0].ReplacementPrice, d.Commands[0].Price)
	}
}

func TestMultiNodeConsolidation(t *testing.T) {
	w := newFixture(t)
	w.pool("general", append(families("m5"), onDemandOnly()))
	for i := 0; i < 4; i++ {
		w.node("general", "m5.xlarge", "us-east-1a", "on-demand", pod("1", "2Gi"))
	}
	d := decide(t, w.snapshot(), Options{})
	if len(d.Commands) != 1 || len(d.Commands[0].Candidates) < 3 {
		t.Fatalf("want one command removing at least 3 of 4 nodes, got %+v", d.Commands)
	}
	if len(d.Commands[0].Replacements) > 1 {
		t.Errorf("a multi-node command has at most one replacement")
	}
}

// 1→N: twelve single-accelerator pods on one inf2.48xlarge ($12.98/h) are cheaper on several
// smaller nodes. With 2 vCPU and 8 GiB each they fit one per inf2.xlarge (12 × $0.76/h).
func TestOneToManySplit(t *testing.T) {
	w := newFixture(t)
	w.pool("inf", append(families("inf2"), onDemandOnly()))
	n := w.node("inf", "inf2.48xlarge", "us-east-1a", "on-demand", neuronPods(12, "2", "8Gi")...)
	d := decide(t, w.snapshot(), Options{})
	if len(d.Commands) != 1 || d.Commands[0].Candidates[0] != n.Name || d.Commands[0].Action != ActionReplace {
		t.Fatalf("want the inf2.48xlarge replaced, got %+v", d.Commands)
	}
	cmd := d.Commands[0]
	if len(cmd.Replacements) < 2 {
		t.Fatalf("want a split into several nodes, got %d", len(cmd.Replacements))
	}
	if cmd.ReplacementPrice >= cmd.Price {
		t.Fatalf("the split must be cheaper: %.4f vs %.4f", cmd.ReplacementPrice, cmd.Price)
	}
	placed := 0
	for _, r := range cmd.Replacements {
		placed += len(r.Pods)
	}
	if placed != 12 {
		t.Errorf("replacements hold %d pods, want 12", placed)
	}
}

// Pods of 8 vCPU and 32 GiB fit six per inf2.24xlarge, and two of those cost $12.98126/h against
// the inf2.48xlarge's $12.98127/h: a saving of a thousandth of a cent is under the floor, and the
// node stays.
func TestOneToManySplitUnderTheFloor(t *testing.T) {
	w := newFixture(t)
	w.pool("inf", append(families("inf2"), onDemandOnly()))
	n := w.node("inf", "inf2.48xlarge", "us-east-1a", "on-demand", neuronPods(12, "8", "32Gi")...)
	d := decide(t, w.snapshot(), Options{})
	if len(d.Commands) != 0 {
		t.Fatalf("a negligible saving must not disrupt, got %+v", d.Commands)
	}
	if got := skipOf(d, n.Name); got != SkipSavingsFloor && got != SkipNotCheaper {
		t.Errorf("skip %q, want the savings floor", got)
	}
}

func neuronPods(n int, cpu, mem string) []*corev1.Pod {
	var pods []*corev1.Pod
	for i := 0; i < n; i++ {
		p := pod(cpu, mem)
		p.Spec.Containers[0].Resources.Requests["aws.amazon.com/neuron"] = resourceQty("1")
		pods = append(pods, p)
	}
	return pods
}

func TestPDBBlocksAndDoNotDisrupt(t *testing.T) {
	w := newFixture(t)
	w.pool("general", append(families("m5"), onDemandOnly()))
	guarded := w.node("general", "m5.4xlarge", "us-east-1a", "on-demand", pod("500m", "1Gi", "app", "db"))
	held := pod("500m", "1Gi")
	held.Annotations = map[string]string{apisv1.DoNotDisruptAnnotationKey: "true"}
	pinned := w.node("general", "m5.4xlarge", "us-east-1a", "on-demand", held)
	timed := pod("500m", "1Gi")
	timed.Annotations = map[string]string{apisv1.DoNotDisruptAnnotationKey: "2h"}
	timed.Status.StartTime = &metav1.Time{Time: now.Add(-time.Hour)}
	timedNode := w.node("general", "m5.4xlarge", "us-east-1a", "on-demand", timed)
	marked := w.node("general", "m5.4xlarge", "us-east-1a", "on-demand", pod("500m", "1Gi"))
	marked.DoNotDisrupt = true
	s := w.snapshot()
	s.PDBs = []*policyv1.PodDisruptionBudget{{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptrIntStr(0), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0},
	}}
	d := decide(t, s, Options{})
	if len(d.Commands) != 0 {
		t.Fatalf("every node is protected, got %+v", d.Commands)
	}
	for node, want := range map[string]SkipReason{guarded.Name: SkipPDB, pinned.Name: SkipDoNotDisruptPod, timedNode.Name: SkipDoNotDisruptPod, marked.Name: SkipDoNotDisruptNode} {
		if got := skipOf(d, node); got != want {
			t.Errorf("%s: skip %q, want %q", node, got, want)
		}
	}
}

// A do-not-disrupt duration holds a node against drift and consolidation from the pod's start
// until it runs out, and for as long as the pod has not started (its creation does not count);
// once it has run out the node is disrupted as any other.
func TestDoNotDisruptDurationHoldsDriftAndConsolidationUntilItRunsOut(t *testing.T) {
	w := newFixture(t)
	w.pool("general", append(families("m5"), onDemandOnly()))
	annotated := func(v string, started *time.Time) *corev1.Pod {
		p := pod("500m", "1Gi")
		p.Annotations = map[string]string{apisv1.DoNotDisruptAnnotationKey: v}
		p.CreationTimestamp = metav1.NewTime(now.Add(-3 * time.Hour))
		if started != nil {
			p.Status.StartTime = &metav1.Time{Time: *started}
		}
		return p
	}
	hourAgo, threeHoursAgo := now.Add(-time.Hour), now.Add(-3*time.Hour)
	drifting := w.node("general", "m5.xlarge", "us-east-1a", "on-demand", annotated("2h", &hourAgo))
	drifting.Drifted = "NodePoolDrift"
	notStarted := w.node("general", "m5.4xlarge", "us-east-1a", "on-demand", annotated("2h", nil))
	elapsed := w.node("general", "m5.4xlarge", "us-east-1a", "on-demand", annotated("2h", &threeHoursAgo))
	d := decide(t, w.snapshot(), Options{})
	for node, want := range map[string]SkipReason{drifting.Name: SkipDoNotDisruptPod, notStarted.Name: SkipDoNotDisruptPod} {
		if got := skipOf(d, node); got != want {
			t.Errorf("%s: skip %q, want %q", node, got, want)
		}
	}
	var disrupted []string
	for _, c := range d.Commands {
		disrupted = append(disrupted, c.Candidates...)
	}
	if !slices.Contains(disrupted, elapsed.Name) || slices.Contains(disrupted, drifting.Name) || slices.Contains(disrupted, notStarted.Name) {
		t.Errorf("disrupted %v; want %s (its 2h ran out) and neither protected node", disrupted, elapsed.Name)
	}
	for _, s := range d.Skips {
		if s.Node == drifting.Name && !strings.Contains(s.Message, "until "+hourAgo.Add(2*time.Hour).UTC().Format(time.RFC3339)) {
			t.Errorf("skip message %q does not say until when", s.Message)
		}
	}
}

func TestDriftReplacesEvenWhenNotCheaper(t *testing.T) {
	w := newFixture(t)
	w.pool("general", append(families("m5"), onDemandOnly()))
	n := w.node("general", "m5.large", "us-east-1a", "on-demand", pod("1", "1Gi"))
	n.Drifted = "NodePoolDrift"
	d := decide(t, w.snapshot(), Options{})
	if len(d.Commands) != 1 || d.Commands[0].Method != MethodDrift || d.Commands[0].Action != ActionReplace {
		t.Fatalf("want a drift replacement, got %+v", d.Commands)
	}
}

func TestExpirationIgnoresBudgets(t *testing.T) {
	w := newFixture(t)
	w.pool("general", append(families("m5"), onDemandOnly()), func(np *apisv1.NodePool) {
		np.Spec.Disruption.Budgets = []apisv1.Budget{{Nodes: "0"}}
	})
	n := w.node("general", "m5.large", "us-east-1a", "on-demand", pod("1", "1Gi"))
	n.ExpireAt = now.Add(-time.Minute)
	d := decide(t, w.snapshot(), Options{})
	if len(d.Commands) != 1 || d.Commands[0].Method != MethodExpiration {
		t.Fatalf("expiration is forceful, got %+v", d.Commands)
	}
}

func TestSpotToSpotRules(t *testing.T) {
	mk := func(age time.Duration) *Snapshot {
		w := newFixture(t)
		w.pool("spot", []apisv1.NodeSelectorRequirementWithMinValues{
			req(apisv1.LabelInstanceCategory, corev1.NodeSelectorOpIn, "m", "c", "r"),
			req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeSpot),
		})
		n := w.node("spot", "m5.4xlarge", "us-east-1a", "spot", pod("500m", "1Gi"))
		n.CreatedAt = now.Add(-age)
		return w.snapshot()
	}
	d := decide(t, mk(time.Hour), Options{SpotToSpotConsolidation: true, SpotToSpotMinInstanceTypes: 10000})
	if len(d.Commands) != 0 || skipOf(d, "node-1") != SkipSpotToSpot {
		t.Fatalf("too few cheaper types must block spot-to-spot: %+v %+v", d.Commands, d.Skips)
	}
	d = decide(t, mk(time.Minute), Options{SpotToSpotConsolidation: true})
	if len(d.Commands) != 0 || skipOf(d, "node-1") != SkipSpotToSpotTooNew {
		t.Fatalf("a young spot node is not replaced by spot: %+v %+v", d.Commands, d.Skips)
	}
	d = decide(t, mk(time.Hour), Options{})
	if len(d.Commands) != 0 || skipOf(d, "node-1") != SkipSpotToSpot || !strings.Contains(d.Skips[0].Message, "SpotToSpotConsolidation") {
		t.Fatalf("spot-to-spot is off unless its feature gate is on, as in Karpenter: %+v %+v", d.Commands, d.Skips)
	}
	d = decide(t, mk(time.Hour), Options{SpotToSpotConsolidation: true})
	if len(d.Commands) != 1 {
		t.Fatalf("an old spot node with many cheaper types is replaced: %+v", d.Skips)
	}
	for _, r := range d.Commands[0].Replacements {
		for _, it := range r.InstanceTypes {
			if o, ok := it.CheapestOffering(r.Requirements); !ok || o.Price >= d.Commands[0].Price {
				t.Errorf("spot replacement option %s is not cheaper than the node", it.Name)
			}
		}
	}
}

// With the gate off, a spot node that spot could replace more cheaply is still deleted when
// its pods fit elsewhere, and still replaced when the cheaper replacement is on-demand.
func TestSpotToSpotGateOffStillDeletesSpotNodes(t *testing.T) {
	w := newFixture(t)
	w.pool("spot", []apisv1.NodeSelectorRequirementWithMinValues{
		req(apisv1.LabelInstanceCategory, corev1.NodeSelectorOpIn, "m", "c", "r"),
		req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeSpot),
	})
	w.node("spot", "m5.4xlarge", "us-east-1a", "spot", pod("500m", "1Gi"))
	small := w.node("spot", "m5.4xlarge", "us-east-1a", "spot", pod("500m", "1Gi"))
	small.CreatedAt = now.Add(-time.Hour)
	d := decide(t, w.snapshot(), Options{})
	if len(d.Commands) != 1 || d.Commands[0].Action != ActionDelete {
		t.Fatalf("two half-idle spot nodes: one is deleted onto the other without the gate; got %+v %+v", d.Commands, d.Skips)
	}
}

func TestReservedRules(t *testing.T) {
	w := newFixture(t)
	w.pool("general", append(families("m5"), req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand, apisv1.CapacityTypeReserved)))
	n := w.node("general", "m5.xlarge", "us-east-1a", "reserved", pod("500m", "1Gi"))
	d := decide(t, w.snapshot(), Options{})
	if len(d.Commands) != 0 || skipOf(d, n.Name) != SkipReserved {
		t.Fatalf("a reserved node holding pods stays on reserved capacity: %+v %+v", d.Commands, d.Skips)
	}
}

func TestFloorsAndCursor(t *testing.T) {
	w := newFixture(t)
	w.pool("general", append(families("m5"), onDemandOnly()))
	w.node("general", "m5.4xlarge", "us-east-1a", "on-demand", pod("500m", "1Gi"))
	d := decide(t, w.snapshot(), Options{MinSavingsFraction: 0.99})
	if len(d.Commands) != 0 || skipOf(d, "node-1") != SkipSavingsFloor {
		t.Fatalf("a saving under the floor must be skipped: %+v", d.Skips)
	}
}

func resourceQty(s string) resource.Quantity { return resource.MustParse(s) }

func ptrIntStr(i int) *intstr.IntOrString { v := intstr.FromInt(i); return &v }

// A fragmented fleet settles past the local optimum of one-replacement moves: once no set of
// nodes goes with one replacement, several go onto fewer new nodes (N→M), each such command
// saving money and launching fewer nodes than it removes.
func TestRepackSeveralNodesOntoFewer(t *testing.T) {
	f := fragmented(t, 200)
	f.dropEmpty(t)
	before := f.price()
	repacks := 0
	cursor := ""
	for passes := 0; passes < 200; passes++ {
		d := decide(t, f.snapshot(), Options{Cursor: cursor})
		cursor = d.Cursor
		if len(d.Commands) == 0 && d.Outcome != OutcomeTruncated {
			break
		}
		for _, c := range d.Commands {
			if len(c.Candidates) < 2 || len(c.Replacements) < 2 {
				continue
			}
			repacks++
			if len(c.Replacements) >= len(c.Candidates) {
				t.Errorf("a repack of %d nodes launches %d", len(c.Candidates), len(c.Replacements))
			}
			if c.Savings <= 0 || c.ReplacementPrice >= c.Price {
				t.Errorf("a repack saves $%.4f/h: replacements $%.4f/h for $%.4f/h", c.Savings, c.ReplacementPrice, c.Price)
			}
		}
		f.apply(d)
		f.now = f.now.Add(10 * time.Minute)
	}
	if repacks == 0 {
		t.Fatal("no N→M repack in the whole consolidation of a fragmented fleet")
	}
	if after := f.price(); after >= before {
		t.Errorf("the fleet went from $%.2f/h to $%.2f/h", before, after)
	}
}

// Replacements committed earlier in a pass count against their NodePool's limits in the
// simulations after them: with room under the cpu limit for one m5.large, two m5.2xlarge whose
// pods (apart on hostname) each want an m5.large get one replacement in a pass, not two.
func TestReplacementsOfOnePassStayWithinTheNodePoolLimits(t *testing.T) {
	w := newFixture(t)
	w.pool("general", append(families("m5"), onDemandOnly()), func(np *apisv1.NodePool) {
		np.Spec.Limits = apisv1.Limits{corev1.ResourceCPU: resource.MustParse("18")}
	})
	apart := func() *corev1.Pod { // never two on one node, so neither can simply move to the other
		p := pod("1500m", "1Gi", "app", "apart")
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "apart"}},
			}},
		}}
		return p
	}
	a := w.node("general", "m5.2xlarge", "us-east-1a", "on-demand", apart())
	b := w.node("general", "m5.2xlarge", "us-east-1a", "on-demand", apart())
	s := w.snapshot()
	big, _ := aws(t).Get("m5.2xlarge")
	s.Solver.NodePools[0].Usage = big.Capacity.Add(big.Capacity) // 16 cpu: room for 2 more
	s.Solver.NodePools[0].Nodes = 2
	d := decide(t, s, Options{})
	for _, c := range d.Commands {
		t.Logf("command %s %v → %d replacements: %s", c.Action, c.Candidates, len(c.Replacements), c.Message)
	}
	for _, k := range d.Skips {
		t.Logf("skip %s %s: %s", k.Node, k.Reason, k.Message)
	}
	var cpu int64
	for _, c := range d.Commands {
		for _, r := range c.Replacements {
			cpu += r.InstanceType.Capacity[scheduling.CPU]
		}
	}
	if cpu > 2000 {
		t.Errorf("the pass's %d commands' replacements add %dm cpu to a pool with 2000m left under its limit", len(d.Commands), cpu)
	}
	if len(d.Commands) != 1 {
		t.Fatalf("want one of %s and %s replaced, got %d commands", a.Name, b.Name, len(d.Commands))
	}
}

// A node whose pods would move onto a node not initialized yet is neither consolidated nor
// replaced for drift (Karpenter's "would schedule against uninitialized"): whether that node
// comes up and takes them is not known. Expiration is forceful and goes on.
func TestNoMoveOntoANodeNotInitialized(t *testing.T) {
	build := func(initialized bool, mutate func(*Node)) (*Snapshot, *Node, *Node) {
		w := newFixture(t)
		w.pool("general", append(families("m5"), onDemandOnly()))
		w.node("general", "m5.xlarge", "us-east-1a", "on-demand", pod("1", "1Gi"))
		b := w.node("general", "m5.xlarge", "us-east-1a", "on-demand", pod("1", "1Gi"))
		a := &w.nodes[0] // after the second node: adding it may have moved the first
		b.Initialized = initialized
		w.sn[1].Initialized = initialized
		b.CreatedAt = now.Add(-time.Minute)
		if mutate != nil {
			mutate(a)
		}
		return w.snapshot(), a, b
	}
	t.Run("consolidation", func(t *testing.T) {
		s, a, _ := build(false, nil)
		d := decide(t, s, Options{})
		if len(d.Commands) != 0 {
			t.Fatalf("want no command while the only room is on a node not initialized, got %+v", d.Commands)
		}
		if got := skipOf(d, a.Name); got != SkipUnschedulable {
			t.Fatalf("want %s skipped as %s, got %q (%+v)", a.Name, SkipUnschedulable, got, d.Skips)
		}
		s, _, _ = build(true, nil)
		if d := decide(t, s, Options{}); len(d.Commands) != 1 || d.Commands[0].Action != ActionDelete {
			t.Fatalf("once initialized, one node's pods fit on the other: want a delete, got %+v", d.Commands)
		}
	})
	t.Run("drift", func(t *testing.T) {
		s, a, b := build(false, func(n *Node) { n.Drifted = "NodePoolDrift" })
		d := decide(t, s, Options{})
		if !slices.ContainsFunc(d.Skips, func(s Skip) bool {
			return s.Node == a.Name && strings.Contains(s.Message, "would schedule against uninitialized node/"+b.Name)
		}) {
			t.Fatalf("want %s held for the node not initialized, got %+v", a.Name, d.Skips)
		}
		for _, c := range d.Commands {
			if c.Method == MethodDrift {
				t.Fatalf("want no drift command while its pods would go to a node not initialized, got %+v", c)
			}
		}
		if got := skipOf(d, a.Name); got != SkipUnschedulable {
			t.Fatalf("want %s skipped as %s, got %q", a.Name, SkipUnschedulable, got)
		}
	})
	t.Run("expiration", func(t *testing.T) {
		s, _, _ := build(false, func(n *Node) { n.ExpireAt = now.Add(-time.Minute) })
		if d := decide(t, s, Options{}); len(d.Commands) != 1 || d.Commands[0].Method != MethodExpiration {
			t.Fatalf("expiration is forceful, got %+v (skips %+v)", d.Commands, d.Skips)
		}
	})
}

// A pass with a pending backlog but no node it could disrupt (every node still in its
// consolidateAfter) solves nothing: the backlog's plan is only solved when a method needs it.
// With the node settled, the pass solves the backlog and simulates the candidate.
func TestABacklogIsSolvedOnlyWhenNeeded(t *testing.T) {
	w := newFixture(t)
	w.pool("general", families("m5"), func(np *apisv1.NodePool) {
		np.Spec.Disruption.ConsolidateAfter = apisv1.NewNillableDuration(time.Hour)
	})
	n := w.node("general", "m5.2xlarge", "us-east-1a", apisv1.CapacityTypeOnDemand, pod("500m", "1Gi"))
	n.LastPodEvent = now.Add(-time.Minute)
	for range 50 {
		w.pods = append(w.pods, pod("1", "2Gi"))
	}
	if d := decide(t, w.snapshot(), Options{}); d.Simulations != 0 || len(d.Commands) != 0 {
		t.Errorf("a pass with no candidate ran %d solves and %d commands; want none", d.Simulations, len(d.Commands))
	}
	n.LastPodEvent = now.Add(-2 * time.Hour)
	if d := decide(t, w.snapshot(), Options{}); d.Simulations < 2 {
		t.Errorf("a pass with a settled candidate ran %d solves; want the backlog's and the candidate's", d.Simulations)
	}
}

// Once a pass has launched a replacement, a candidate whose pods would go to it is refused
// (the replacement is not initialized), and so would the candidates after it be, one solve
// each: the pass ends there, and the next one starts from that candidate.
func TestAPassEndsAtPodsBoundForItsOwnReplacement(t *testing.T) {
	w := newFixture(t)
	w.pool("general", append(families("m5"), onDemandOnly()))
	zonal := pod("1", "1Gi")
	zonal.Spec.NodeSelector = map[string]string{corev1.LabelTopologyZone: "us-east-1a"}
	x := w.node("general", "m5.4xlarge", "us-east-1a", "on-demand", zonal).Name // replaced by a small node in us-east-1a
	y := w.node("general", "m5.xlarge", "us-east-1b", "on-demand", pod("200m", "256Mi")).Name
	z := w.node("general", "m5.large", "us-east-1b", "on-demand", pod("1800m", "1Gi")).Name
	// Multi-node sets would take them together: judged one at a time here.
	opts := Options{MaxMultiNode: 1, NoRepack: true}
	d := decide(t, w.snapshot(), opts)
	if len(d.Commands) != 1 || d.Commands[0].Candidates[0] != x || d.Commands[0].Action != ActionReplace {
		var got []string
		for _, c := range d.Commands {
			got = append(got, c.Message)
		}
		t.Fatalf("want %s replaced, got %q", x, got)
	}
	if got := skipOf(d, y); got != SkipUnschedulable {
		t.Fatalf("want %s refused for its pods bound for the replacement, got %q (%+v)", y, got, d.Skips)
	}
	if got := skipOf(d, z); got != SkipNotReached || d.Cursor != y {
		t.Fatalf("want the pass ended at %s (cursor %q) and %s not reached, got %q", y, d.Cursor, z, got)
	}
	// The next pass starts from y: it is the first it simulates, so the pass goes on past it
	// whatever its verdict.
	opts.Cursor = d.Cursor
	next := decide(t, w.snapshot(), opts)
	if got := skipOf(next, z); got == SkipNotReached {
		t.Fatalf("the next pass did not get past %s: %+v", y, next.Skips)
	}
}

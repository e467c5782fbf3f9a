package solver

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

func zoneCounts(plan *Plan) map[string]int {
	out := map[string]int{}
	for _, c := range plan.Claims {
		out[c.Offering.Zone] += len(c.Pods)
	}
	return out
}

func smallPool(t *testing.T, zones ...string) NodePool {
	reqs := onDemand()
	if len(zones) > 0 {
		reqs = reqs.Add(scheduling.In(apisv1.LabelZone, zones...))
	}
	return nodePool("default", types(t, "m5.large", "m5.xlarge", "m5.2xlarge", "m5.4xlarge"), reqs)
}

func TestZonalSpread(t *testing.T) {
	sel := map[string]string{"app": "web"}
	plan := solveOK(t, &Snapshot{
		NodePools: []NodePool{smallPool(t, "us-east-1a", "us-east-1b", "us-east-1c")},
		Pods:      pods(7, "500m", "512Mi", labelled("app", "web"), spread(apisv1.LabelZone, 1, corev1.DoNotSchedule, sel)),
	})
	counts := zoneCounts(plan)
	if len(counts) != 3 {
		t.Fatalf("want pods in three zones, got %v", counts)
	}
	for z, n := range counts {
		if n < 2 || n > 3 {
			t.Errorf("zone %s has %d pods; 7 pods over 3 zones with maxSkew 1 means 2 or 3 each", z, n)
		}
	}
}

func TestZonalSpreadCountsExistingPods(t *testing.T) {
	sel := map[string]string{"app": "web"}
	its := types(t, "m5.xlarge")
	existing := pods(2, "500m", "512Mi", labelled("app", "web"))
	node := Node{Name: "full-a", Initialized: true, Allocatable: scheduling.Resources{}, Labels: map[string]string{apisv1.LabelZone: "us-east-1a"}, Pods: existing}
	node.Allocatable[scheduling.CPU] = 1000 // full: no room for more
	node.Allocatable[scheduling.Memory] = 1 << 30
	node.Allocatable[scheduling.Pods] = 2
	plan := solveOK(t, &Snapshot{
		NodePools: []NodePool{nodePool("default", its, onDemand(scheduling.In(apisv1.LabelZone, "us-east-1a", "us-east-1b", "us-east-1c")))},
		Nodes:     []Node{node},
		Pods:      pods(4, "500m", "512Mi", labelled("app", "web"), spread(apisv1.LabelZone, 1, corev1.DoNotSchedule, sel)),
	})
	counts := zoneCounts(plan)
	// Zone a already has two: the four new pods go two to b and two to c.
	if counts["us-east-1a"] != 0 || counts["us-east-1b"] != 2 || counts["us-east-1c"] != 2 {
		t.Fatalf("counts %v", counts)
	}
}

func TestHostnameAntiAffinityOnePerNode(t *testing.T) {
	sel := map[string]string{"app": "db"}
	plan := solveOK(t, &Snapshot{
		NodePools: []NodePool{smallPool(t)},
		Pods: append(pods(4, "500m", "512Mi", labelled("app", "db"), antiAffinity(apisv1.LabelHostname, sel)),
			pods(8, "250m", "256Mi")...),
	})
	if len(plan.Claims) != 4 {
		t.Fatalf("want 4 claims (one db pod each, other pods sharing them), got %s", describe(plan))
	}
	for _, c := range plan.Claims {
		db := 0
		for _, p := range c.Pods {
			if p.Labels["app"] == "db" {
				db++
			}
		}
		if db != 1 {
			t.Errorf("claim %s holds %d db pods", c.Hostname, db)
		}
	}
}

func TestInverseAntiAffinityFromRunningPods(t *testing.T) {
	its := types(t, "m5.xlarge")
	guard := pod("100m", "128Mi", labelled("app", "guard"), antiAffinity(apisv1.LabelZone, map[string]string{"app": "web"}))
	alloc := its[0].Allocatable()
	nodes := []Node{
		{Name: "a", Initialized: true, Allocatable: alloc, Labels: map[string]string{apisv1.LabelZone: "us-east-1a"}, Pods: []*corev1.Pod{guard}},
		{Name: "b", Initialized: true, Allocatable: alloc, Labels: map[string]string{apisv1.LabelZone: "us-east-1b"}},
	}
	plan := solveOK(t, &Snapshot{
		NodePools: []NodePool{nodePool("default", its, onDemand(scheduling.In(apisv1.LabelZone, "us-east-1a", "us-east-1b")))},
		Nodes:     nodes,
		Pods:      pods(3, "500m", "512Mi", labelled("app", "web")),
	})
	for _, p := range plan.Placements {
		if p.Node == "a" {
			t.Errorf("pod %s placed in zone a, where a running pod's anti-affinity repels it", p.Pod.Name)
		}
	}
	if len(plan.Placements) != 3 {
		t.Errorf("node b has room for all three: %+v %s", plan.Placements, describe(plan))
	}
}

func TestZonalSelfAffinityOneZone(t *testing.T) {
	sel := map[string]string{"app": "cache"}
	plan := solveOK(t, &Snapshot{
		NodePools: []NodePool{smallPool(t, "us-east-1a", "us-east-1b", "us-east-1c")},
		Pods:      pods(20, "1", "1Gi", labelled("app", "cache"), podAffinity(apisv1.LabelZone, sel)),
	})
	if counts := zoneCounts(plan); len(counts) != 1 {
		t.Fatalf("self-affine pods must share one zone, got %v", counts)
	}
}

func TestAffinityToMissingPodsIsUnschedulable(t *testing.T) {
	plan := solveOK(t, &Snapshot{
		NodePools: []NodePool{smallPool(t)},
		Pods:      []*corev1.Pod{pod("1", "1Gi", podAffinity(apisv1.LabelZone, map[string]string{"app": "nowhere"}))},
	})
	if len(plan.Unschedulable) != 1 || plan.Unschedulable[0].Reasons[0].Kind != ReasonTopology {
		t.Fatalf("want a topology reason, got %s", describe(plan))
	}
}

func TestHostnameSpreadMaxSkew2(t *testing.T) {
	sel := map[string]string{"app": "api"}
	plan := solveOK(t, &Snapshot{
		NodePools: []NodePool{smallPool(t)},
		Pods:      pods(6, "250m", "256Mi", labelled("app", "api"), spread(apisv1.LabelHostname, 2, corev1.DoNotSchedule, sel)),
	})
	if len(plan.Claims) != 3 {
		t.Fatalf("6 pods with hostname maxSkew 2: want 3 nodes, got %s", describe(plan))
	}
}

func TestScheduleAnywaySpreadRelaxes(t *testing.T) {
	sel := map[string]string{"app": "batch"}
	// Only one zone can be bought: a DoNotSchedule spread over zones would still be satisfiable
	// (one domain), so use minDomains to make it fail, and ScheduleAnyway to allow relaxing.
	p := func() *corev1.Pod {
		pd := pod("500m", "512Mi", labelled("app", "batch"), spread(apisv1.LabelZone, 1, corev1.ScheduleAnyway, sel))
		pd.Spec.TopologySpreadConstraints[0].MinDomains = ptr.To[int32](3)
		return pd
	}
	var ps []*corev1.Pod
	for i := 0; i < 4; i++ {
		ps = append(ps, p())
	}
	plan := solveOK(t, &Snapshot{NodePools: []NodePool{smallPool(t, "us-east-1a")}, Pods: ps})
	if len(plan.Unschedulable) != 0 || plan.Relaxed == 0 {
		t.Fatalf("ScheduleAnyway must relax rather than block: relaxed %d, %s", plan.Relaxed, describe(plan))
	}
}

func TestPreferredNodeAffinityHonouredWhenPossible(t *testing.T) {
	plan := solveOK(t, &Snapshot{
		NodePools: []NodePool{smallPool(t, "us-east-1a", "us-east-1b")},
		Pods:      pods(3, "500m", "512Mi", preferredNode(10, apisv1.LabelZone, "us-east-1b")),
	})
	if counts := zoneCounts(plan); counts["us-east-1b"] != 3 || plan.Relaxed != 0 {
		t.Fatalf("preference must be honoured when it can be: %v relaxed %d", counts, plan.Relaxed)
	}
	plan = solveOK(t, &Snapshot{
		NodePools: []NodePool{smallPool(t, "us-east-1a")},
		Pods:      pods(3, "500m", "512Mi", preferredNode(10, apisv1.LabelZone, "us-east-1b")),
	})
	if len(plan.Unschedulable) != 0 || plan.Relaxed != 3 {
		t.Fatalf("an impossible preference is dropped: relaxed %d, %s", plan.Relaxed, describe(plan))
	}
}

func TestPreferencesRespectedAtScale(t *testing.T) {
	sel := map[string]string{"app": "prefs"}
	plan := solveOK(t, &Snapshot{
		NodePools: []NodePool{smallPool(t, "us-east-1a", "us-east-1b", "us-east-1c")},
		Pods: pods(30, "500m", "512Mi", labelled("app", "prefs"),
			preferredNode(1, apisv1.LabelZone, "us-east-1a"),
			preferredAntiAffinity(apisv1.LabelZone, 10, sel),
			preferredAntiAffinity(apisv1.LabelHostname, 1, sel)),
	})
	// The zone anti-affinity cannot hold for 30 pods: it is dropped, and the node affinity
	// (zone a) and hostname anti-affinity (one pod per node) stay.
	if counts := zoneCounts(plan); counts["us-east-1a"] != 30 || len(plan.Claims) != 30 {
		t.Fatalf("counts %v claims %d", counts, len(plan.Claims))
	}
}

func TestPreferredNodeAffinityKeepsSpreadDomains(t *testing.T) {
	sel := map[string]string{"app": "web"}
	plan := solveOK(t, &Snapshot{
		NodePools: []NodePool{smallPool(t, "us-east-1a", "us-east-1b", "us-east-1c")},
		Pods: pods(6, "500m", "512Mi", labelled("app", "web"), spread(apisv1.LabelZone, 1, corev1.DoNotSchedule, sel),
			preferredNode(10, apisv1.LabelZone, "us-east-1a")),
	})
	counts := zoneCounts(plan)
	if counts["us-east-1a"] != 2 || counts["us-east-1b"] != 2 || counts["us-east-1c"] != 2 {
		t.Fatalf("a preferred zone must not shrink the spread's domains: want 2/2/2, got %v (%s)", counts, describe(plan))
	}
}

func TestVerifyCountsSpreadDomainsNewNodesCouldOpen(t *testing.T) {
	// Six pods planned in one zone, although the pool could open nodes in two more: a zonal
	// spread with maxSkew 1 forbids it, whether or not nodes exist there yet.
	sel := map[string]string{"app": "web"}
	ps := pods(6, "500m", "512Mi", labelled("app", "web"))
	snap := &Snapshot{NodePools: []NodePool{smallPool(t, "us-east-1a", "us-east-1b", "us-east-1c")}, Pods: ps}
	plan := solveOK(t, snap)
	if counts := zoneCounts(plan); len(counts) != 1 {
		t.Fatalf("want the unconstrained pods in one zone, got %v", counts)
	}
	for _, p := range ps {
		spread(apisv1.LabelZone, 1, corev1.DoNotSchedule, sel)(p)
	}
	if err := Verify(snap, plan); err == nil {
		t.Fatal("Verify accepted six pods in one zone under a zonal spread with maxSkew 1 over three zones")
	}
}

// TestSpreadOutsideItsOwnSelectorIsPlaced feeds the pods of Karpenter's scheduling benchmark:
// zonal and hostname spreads whose pods are labelled my-label with one value and select another.
// kube-scheduler places them all, counting the pods the selector picks where they land.
func TestSpreadOutsideItsOwnSelectorIsPlaced(t *testing.T) {
	its := syntheticTypes(400)
	snap := &Snapshot{NodePools: []NodePool{nodePool("default", its, scheduling.Requirements{})}, Pods: diversePods(1000, 42)}
	plan := solveOK(t, snap)
	if n := len(plan.Unschedulable); n != 0 {
		t.Fatalf("%d of 1000 pods unschedulable, first: %v", n, plan.Unschedulable[0].Reasons)
	}
}

// TestSpreadOutsideItsSelectorCountsBatchPodsWherePlaced: pods labelled a spread over the
// zones of the pods labelled b. The b pods of the same batch count where they are planned, and
// a zone at the least count always admits the a pods, however many there are. (The regression
// test of issue 10 item 6 is TestSpreadOutsideItsOwnSelectorIsPlaced; this one checks the rule
// on a shape small enough to read.)
func TestSpreadOutsideItsSelectorCountsBatchPodsWherePlaced(t *testing.T) {
	sel := map[string]string{"my-label": "b"}
	ps := append(pods(21, "2", "2Gi", labelled("my-label", "b")),
		pods(9, "500m", "512Mi", labelled("my-label", "a"), spread(apisv1.LabelZone, 1, corev1.DoNotSchedule, sel))...)
	plan := solveOK(t, &Snapshot{NodePools: []NodePool{smallPool(t, "us-east-1a", "us-east-1b", "us-east-1c")}, Pods: ps})
	if len(plan.Unschedulable) != 0 {
		t.Fatalf("%d pods unschedulable: %v", len(plan.Unschedulable), plan.Unschedulable[0].Reasons)
	}
	b := map[string]int{}
	for _, c := range plan.Claims {
		for _, p := range c.Pods {
			if p.Labels["my-label"] == "b" {
				b[c.Offering.Zone]++
			}
		}
	}
	low := 1 << 30
	for _, z := range []string{"us-east-1a", "us-east-1b", "us-east-1c"} {
		low = min(low, b[z])
	}
	for _, c := range plan.Claims {
		for _, p := range c.Pods {
			if p.Labels["my-label"] == "a" && b[c.Offering.Zone]-low > 1 {
				t.Errorf("pod %s in %s, where %d b pods are, least %d", p.Name, c.Offering.Zone, b[c.Offering.Zone], low)
			}
		}
	}
}

// With PreferencePolicy Ignore (Karpenter's --preference-policy=Ignore), preferences do not
// shape the plan: pods that would prefer a node each pack onto one claim, and a preferred zone
// is not sought.
func TestPreferencePolicyIgnoreDropsPreferences(t *testing.T) {
	sel := map[string]string{"app": "ignored"}
	snap := &Snapshot{
		NodePools: []NodePool{smallPool(t, "us-east-1a", "us-east-1b")},
		Pods: pods(3, "500m", "512Mi", labelled("app", "ignored"), preferredAntiAffinity(apisv1.LabelHostname, 10, sel),
			spread(apisv1.LabelZone, 1, corev1.ScheduleAnyway, sel)),
	}
	respect := solveOK(t, snap)
	if len(respect.Claims) != 3 {
		t.Fatalf("Respect: want one claim per pod for the hostname anti-affinity, got %s", describe(respect))
	}
	ignore, err := Solve(snap, Options{PreferencePolicy: PreferenceIgnore})
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(snap, ignore); err != nil {
		t.Fatalf("Ignore: %v", err)
	}
	if len(ignore.Claims) != 1 || len(ignore.Unschedulable) != 0 || ignore.Price >= respect.Price {
		t.Fatalf("Ignore: want the three pods on one cheaper claim, got %s (respect $%.4f)", describe(ignore), respect.Price)
	}
	for _, in := range []string{"", "Respect", "Ignore"} {
		if _, err := ParsePreferencePolicy(in); err != nil {
			t.Errorf("%q: %v", in, err)
		}
	}
	if _, err := ParsePreferencePolicy("Sometimes"); err == nil {
		t.Error("an unknown policy is accepted")
	}
}

// TestSelfAffineClassFollowsItsGroup: a pod whose hostname affinity selects itself (app=b) may
// open a node of its own only while no other app=b pod is placed. Another app=b pod that
// follows app=a is placed first (it takes the room beside the app=a pod); the self-affine pod,
// which no longer fits there, is not left alone on a node of its own, a plan no binding order
// keeps valid once the other app=b pod binds.
func TestSelfAffineClassFollowsItsGroup(t *testing.T) {
	its := types(t, "m5.large")
	self := pod("250m", "256Mi", named("self"), labelled("app", "b"), podAffinity(apisv1.LabelHostname, map[string]string{"app": "b"}))
	plain := pod("1700m", "256Mi", named("plain"), labelled("app", "a"))
	follower := pod("200m", "256Mi", named("follower"), labelled("app", "b"), podAffinity(apisv1.LabelHostname, map[string]string{"app": "a"}))
	snap := &Snapshot{NodePools: []NodePool{nodePool("default", its, onDemand())}, Pods: []*corev1.Pod{self, plain, follower}}
	plan := solveOK(t, snap)
	if err := Verify(snap, plan); err != nil {
		t.Fatalf("%v\n%s", err, describe(plan))
	}
}

package solver

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

func inGang(name string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &name}
	}
}

// gpuPool is an on-demand pool of GPU families, tainted as GPU pools are.
func gpuPool(t testing.TB, opts ...func(*NodePool)) NodePool {
	return nodePool("gpu", aws(t).Types, onDemand(scheduling.In(apisv1.LabelInstanceCategory, "p", "g")), append([]func(*NodePool){func(p *NodePool) {
		p.Taints = []corev1.Taint{{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}}
	}}, opts...)...)
}

func gangPods(n int, gang string) []*corev1.Pod {
	return pods(n, "40", "400Gi", gpus(8), tolerate("nvidia.com/gpu"), inGang(gang))
}

// claimsDomain returns the value of key every claim of the plan holding a pod of gang is pinned
// to, failing when they disagree or one is not pinned.
func claimsDomain(t *testing.T, plan *Plan, gang, key string) string {
	t.Helper()
	domain := ""
	for _, c := range plan.Claims {
		if len(c.Pods) == 0 || GangOf(c.Pods[0]) != "default/"+gang {
			continue
		}
		r, ok := c.Requirements.Get(key)
		if !ok || len(r.Values()) != 1 {
			t.Fatalf("claim %s is not pinned to one value of %s: %v", c.Hostname, key, c.Requirements)
		}
		if domain != "" && r.Values()[0] != domain {
			t.Fatalf("claims of the gang in %s and %s", domain, r.Values()[0])
		}
		domain = r.Values()[0]
	}
	return domain
}

// TestGangInOneZone: four 8-GPU pods of a gang with a zone constraint get four nodes in one zone.
func TestGangInOneZone(t *testing.T) {
	snap := &Snapshot{
		NodePools: []NodePool{gpuPool(t)},
		Pods:      gangPods(4, "train"),
		Gangs:     []Gang{{Namespace: "default", Name: "train", MinCount: 4, TopologyKey: apisv1.LabelZone}},
	}
	plan := solveOK(t, snap)
	if len(plan.Unschedulable) != 0 || len(plan.Claims) != 4 {
		t.Fatalf("%d claims, unschedulable %v: want four claims for the gang", len(plan.Claims), plan.Unschedulable)
	}
	if d := claimsDomain(t, plan, "train", apisv1.LabelZone); d == "" {
		t.Fatal("no zone")
	}
}

// TestGangNoDomainHoldsItBuysNothing: a gang of four that no zone can hold (the pool may launch
// three nodes) buys nothing, and every member says why.
func TestGangNoDomainHoldsItBuysNothing(t *testing.T) {
	snap := &Snapshot{
		NodePools: []NodePool{gpuPool(t, func(p *NodePool) { p.NodeLimit = 3 })},
		Pods:      gangPods(4, "train"),
		Gangs:     []Gang{{Namespace: "default", Name: "train", MinCount: 4, TopologyKey: apisv1.LabelZone}},
	}
	plan := solveOK(t, snap)
	if len(plan.Claims) != 0 || len(plan.Unschedulable) != 4 {
		t.Fatalf("%d claims, %d unschedulable: want none bought and four unschedulable", len(plan.Claims), len(plan.Unschedulable))
	}
	for _, u := range plan.Unschedulable {
		if u.Reasons[0].Kind != ReasonGang || !strings.Contains(u.Message(), "default/train") || !strings.Contains(u.Message(), "limit") {
			t.Fatalf("reason %q: want the gang named and the limit of the member that could not be placed", u.Message())
		}
	}
	// Without the zone constraint it is the same: the limit holds three of four anywhere.
	snap.Gangs[0].TopologyKey = ""
	if plan := solveOK(t, snap); len(plan.Claims) != 0 || len(plan.Unschedulable) != 4 {
		t.Fatalf("without a key: %d claims, %d unschedulable", len(plan.Claims), len(plan.Unschedulable))
	}
}

// TestGangTooFewPods: a gang whose minCount is more than its pods buys nothing.
func TestGangTooFewPods(t *testing.T) {
	snap := &Snapshot{
		NodePools: []NodePool{gpuPool(t)},
		Pods:      gangPods(3, "train"),
		Gangs:     []Gang{{Namespace: "default", Name: "train", MinCount: 5}},
	}
	plan := solveOK(t, snap)
	if len(plan.Claims) != 0 || len(plan.Unschedulable) != 3 || !strings.Contains(plan.Unschedulable[0].Message(), "needs 5 pods at once; 3 are pending") {
		t.Fatalf("%d claims, unschedulable %v", len(plan.Claims), plan.Unschedulable)
	}
}

// TestGangRunningMembersCount: two members already run in us-east-1b; the other two of a
// minCount of four go there too, and a minCount of two is met by the running ones alone.
func TestGangRunningMembersCount(t *testing.T) {
	running := gangPods(2, "train")
	var alloc scheduling.Resources
	alloc[scheduling.CPU], alloc[scheduling.Memory], alloc[scheduling.Pods], alloc[scheduling.NvidiaGPU] = 192_000, 2000<<30, 100, 16
	node := Node{Name: "gpu-node", Labels: map[string]string{apisv1.LabelZone: "us-east-1b", apisv1.LabelHostname: "gpu-node"},
		Allocatable: alloc, Initialized: true, Pods: running}
	snap := &Snapshot{
		NodePools: []NodePool{gpuPool(t)},
		Nodes:     []Node{node},
		Pods:      gangPods(2, "train"),
		Gangs:     []Gang{{Namespace: "default", Name: "train", MinCount: 4, TopologyKey: apisv1.LabelZone}},
	}
	plan := solveOK(t, snap)
	if len(plan.Unschedulable) != 0 || claimsDomain(t, plan, "train", apisv1.LabelZone) != "us-east-1b" {
		t.Fatalf("unschedulable %v: want the pending members beside the running ones", plan.Unschedulable)
	}
}

// TestGangLosesRoomToOthers: when the pool's limit leaves room for only part of a gang beside
// the other pending pods, the gang gets none, not part, and the others keep theirs. First-fit
// alone (NoGuide) places the larger other pods first; the guided packing would find that the
// gang and one other pod cost less, which is as valid.
func TestGangLosesRoomToOthers(t *testing.T) {
	others := pods(2, "150", "1000Gi", gpus(8), tolerate("nvidia.com/gpu"))
	snap := &Snapshot{
		NodePools: []NodePool{gpuPool(t, func(p *NodePool) { p.NodeLimit = 3 })},
		Pods:      append(others, gangPods(2, "train")...),
		Gangs:     []Gang{{Namespace: "default", Name: "train", MinCount: 2}},
	}
	plan, err := Solve(snap, Options{NoGuide: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(snap, plan); err != nil {
		t.Fatal(err)
	}
	gangUnsched := 0
	for _, u := range plan.Unschedulable {
		if GangOf(u.Pod) == "default/train" {
			gangUnsched++
		}
	}
	if gangUnsched != 2 || len(plan.Claims) != 2 {
		t.Fatalf("%d claims, unschedulable %v: want the two others bought for and the gang left whole", len(plan.Claims), plan.Unschedulable)
	}
}

// TestGangCheapestDomain: a gang keyed on a label two NodePools set to different values goes
// to the cheaper one's domain, though the dearer pool weighs more.
func TestGangCheapestDomain(t *testing.T) {
	its := aws(t).Types
	rack := func(name, value string, reqs scheduling.Requirements, weight int32) NodePool {
		return nodePool(name, its, reqs, func(p *NodePool) { p.Labels = map[string]string{"example.com/rack": value}; p.Weight = weight })
	}
	snap := &Snapshot{
		NodePools: []NodePool{
			rack("dear", "a", onDemand(scheduling.In(apisv1.LabelInstanceFamily, "m5")), 10),
			rack("cheap", "b", onDemand(scheduling.In(apisv1.LabelInstanceFamily, "c5")), 0),
		},
		Pods:  pods(3, "7", "8Gi", inGang("job")),
		Gangs: []Gang{{Namespace: "default", Name: "job", MinCount: 3, TopologyKey: "example.com/rack"}},
	}
	plan := solveOK(t, snap)
	if len(plan.Unschedulable) != 0 {
		t.Fatalf("unschedulable %v", plan.Unschedulable)
	}
	for _, c := range plan.Claims {
		if c.NodePool != "dear" {
			continue
		}
		t.Fatalf("claim %s in the dearer rack (a, pool dear)", c.Hostname)
	}
	// An ordinary pod of the same shape goes to the heavier pool, as first-fit wants.
	solo := solveOK(t, &Snapshot{NodePools: snap.NodePools, Pods: pods(1, "7", "8Gi")})
	if solo.Claims[0].NodePool != "dear" {
		t.Fatalf("the ordinary pod went to %s", solo.Claims[0].NodePool)
	}
}

// TestPropertyGangsWholeOrNothing: on random snapshots with random gangs (minCounts up to
// more than their pods, a zone key or none), every plan is valid, Verify included: each gang is
// placed for its minCount (running members counted) in one zone, or not at all.
func TestPropertyGangsWholeOrNothing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		snap := drawSnapshot(t)
		for g := range rapid.IntRange(1, 3).Draw(t, "gangs") {
			name := fmt.Sprintf("gang-%d", g)
			gang := Gang{Namespace: "default", Name: name, MinCount: rapid.IntRange(1, 5).Draw(t, "minCount")}
			if rapid.Bool().Draw(t, "zoned") {
				gang.TopologyKey = apisv1.LabelZone
			}
			snap.Gangs = append(snap.Gangs, gang)
			for range rapid.IntRange(0, 4).Draw(t, "members") {
				p := drawPod(t, 5000+len(snap.Pods))
				p.Namespace = "default"
				inGang(name)(p)
				snap.Pods = append(snap.Pods, p)
			}
		}
		// Some running pods of the nodes join a gang too.
		for i := range snap.Nodes {
			for _, p := range snap.Nodes[i].Pods {
				if rapid.IntRange(0, 3).Draw(t, "runningMember") == 0 {
					p.Namespace = "default"
					inGang(fmt.Sprintf("gang-%d", rapid.IntRange(0, len(snap.Gangs)-1).Draw(t, "which")))(p)
				}
			}
		}
		plan, err := Solve(snap, Options{SkipBound: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := Verify(snap, plan); err != nil {
			t.Fatalf("invalid plan: %v\n%s", err, describe(plan))
		}
		// No gang is left out that would have fitted beside those that got capacity: solved
		// with the pods of the gangs left out removed but for one, some gang falls short.
		out := map[string]bool{}
		for _, o := range plan.Gangs {
			if o.Reason != nil {
				out[o.Namespace+"/"+o.Name] = true
			}
		}
		for retry := range out {
			sub := *snap
			sub.Pods = slices.DeleteFunc(slices.Clone(snap.Pods), func(p *corev1.Pod) bool { g := GangOf(p); return out[g] && g != retry })
			again, err := Solve(&sub, Options{SkipBound: true})
			if err != nil {
				t.Fatal(err)
			}
			short := false
			for _, o := range again.Gangs {
				short = short || o.Reason != nil
			}
			if !short {
				t.Fatalf("gang %s was left out, but solved beside the gangs that got capacity every gang gets its minCount\n%s", retry, describe(again))
			}
		}
	})
}

// BenchmarkSolveGangs: training jobs as gangs (each 2–16 pods of 1–8 GPUs, half of them held to
// one zone) beside 2,000 distinct web pods, on the AWS catalog's GPU and c/m/r pools.
func BenchmarkSolveGangs(b *testing.B) {
	for _, n := range []int{10, 50} {
		for _, limited := range []bool{false, true} {
			name := fmt.Sprintf("gangs=%d", n)
			if limited {
				name += "/gpu-limit=100"
			}
			b.Run(name, func(b *testing.B) {
				snap := &Snapshot{NodePools: distinctPools(b, "gpu"), Pods: distinctPods("web", 2000, 7)}
				if limited {
					// The GPU pool may hold 100 GPUs; the gangs ask for 220 (10 gangs) or 1,535
					// (50): most fall short, and are taken out one solve at a time.
					gpu := &snap.NodePools[len(snap.NodePools)-1]
					gpu.Limits[scheduling.NvidiaGPU], gpu.HasLimit[scheduling.NvidiaGPU] = 100, true
				}
				for g := range n {
					name := fmt.Sprintf("job-%d", g)
					gang := Gang{Namespace: "default", Name: name, MinCount: 2 + g%15}
					if g%2 == 0 {
						gang.TopologyKey = apisv1.LabelZone
					}
					snap.Gangs = append(snap.Gangs, gang)
					gpu := 1 << (g % 4)
					snap.Pods = append(snap.Pods, pods(gang.MinCount, fmt.Sprint(3*gpu), fmt.Sprintf("%dGi", 24*gpu), gpus(gpu), tolerate("nvidia.com/gpu"), inGang(name))...)
				}
				benchSolve(b, snap)
			})
		}
	}
}

// TestGangCompletedWhereItsClaimsAre: three of a gang's four NodeClaims are in flight in
// us-east-1c (the fourth failed to launch); planned again, the gang goes back to that zone,
// three pods onto the claims in flight and one new claim there.
func TestGangCompletedWhereItsClaimsAre(t *testing.T) {
	its := aws(t).Types
	var inFlight []Node
	for _, it := range its {
		if it.Name != "m5.xlarge" {
			continue
		}
		for i := range 3 {
			inFlight = append(inFlight, Node{Name: fmt.Sprintf("train-claim-%d", i), InFlight: true, NodePool: "gangs",
				Labels:      map[string]string{apisv1.LabelZone: "us-east-1c", apisv1.LabelInstanceType: it.Name, apisv1.NodePoolLabelKey: "gangs", apisv1.LabelHostname: fmt.Sprintf("train-claim-%d", i)},
				Allocatable: it.Allocatable()})
		}
	}
	if len(inFlight) == 0 {
		t.Fatal("no m5.xlarge in the catalog")
	}
	snap := &Snapshot{
		NodePools: []NodePool{nodePool("gangs", its, onDemand(scheduling.In(apisv1.LabelInstanceType, "m5.xlarge")))},
		Nodes:     inFlight,
		Pods:      pods(4, "3", "4Gi", inGang("train")),
		Gangs:     []Gang{{Namespace: "default", Name: "train", MinCount: 4, TopologyKey: apisv1.LabelZone}},
	}
	plan := solveOK(t, snap)
	if len(plan.Placements) != 3 || len(plan.Claims) != 1 || claimsDomain(t, plan, "train", apisv1.LabelZone) != "us-east-1c" {
		t.Fatalf("%d placements, %d claims, unschedulable %v: want three on the claims in flight and one new in us-east-1c",
			len(plan.Placements), len(plan.Claims), plan.Unschedulable)
	}
}

// TestGangsCompetingForALimit: two gangs of three 8-GPU pods whose sizes interleave (largest
// first, a member of each gang in turn), and a pool limit of four nodes: one gang fits, not
// both. One gang gets its three nodes and the other none; taking both out because each fell
// short beside the other would buy nothing at all.
func TestGangsCompetingForALimit(t *testing.T) {
	var interleaved []*corev1.Pod
	for i, cpu := range []int{60, 50, 40} {
		a := pods(1, fmt.Sprint(cpu), "400Gi", gpus(8), tolerate("nvidia.com/gpu"), inGang("a"))[0]
		b := pods(1, fmt.Sprint(cpu-1), "400Gi", gpus(8), tolerate("nvidia.com/gpu"), inGang("b"))[0]
		a.Name, b.Name = fmt.Sprintf("a-%d", i), fmt.Sprintf("b-%d", i)
		interleaved = append(interleaved, a, b)
	}
	snap := &Snapshot{
		NodePools: []NodePool{gpuPool(t, func(p *NodePool) { p.NodeLimit = 4 })},
		Pods:      interleaved,
		Gangs:     []Gang{{Namespace: "default", Name: "a", MinCount: 3}, {Namespace: "default", Name: "b", MinCount: 3}},
	}
	for _, opts := range []Options{{}, {NoGuide: true}} {
		plan, err := Solve(snap, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := Verify(snap, plan); err != nil {
			t.Fatal(err)
		}
		unsched := map[string]int{}
		for _, u := range plan.Unschedulable {
			unsched[GangOf(u.Pod)]++
		}
		if len(plan.Claims) != 3 || len(plan.Unschedulable) != 3 || len(unsched) != 1 {
			t.Fatalf("NoGuide=%v: %d claims, unschedulable by gang %v: want one gang's three claims and the other gang unschedulable", opts.NoGuide, len(plan.Claims), unsched)
		}
	}
}

// TestGangsCompetingByPriority: of two gangs competing for a limit, the one of the higher
// priority gets the capacity (kube-scheduler admits it first); and a gang of a higher priority
// that cannot fit at all does not keep out a lower one that fits once it is gone.
func TestGangsCompetingByPriority(t *testing.T) {
	member := func(gang string, i, cpu int, priority int32) *corev1.Pod {
		p := pods(1, fmt.Sprint(cpu), "400Gi", gpus(8), tolerate("nvidia.com/gpu"), inGang(gang))[0]
		p.Name, p.Spec.Priority = fmt.Sprintf("%s-%d", gang, i), &priority
		return p
	}
	unschedulableGangs := func(t *testing.T, snap *Snapshot) map[string]int {
		t.Helper()
		plan := solveOK(t, snap)
		out := map[string]int{}
		for _, u := range plan.Unschedulable {
			out[GangOf(u.Pod)]++
		}
		return out
	}
	limit4 := gpuPool(t, func(p *NodePool) { p.NodeLimit = 4 })
	t.Run("the higher priority wins", func(t *testing.T) {
		var ps []*corev1.Pod
		for i, cpu := range []int{60, 50, 40} {
			ps = append(ps, member("a", i, cpu, 0), member("b", i, cpu-1, 100))
		}
		snap := &Snapshot{NodePools: []NodePool{limit4}, Pods: ps,
			Gangs: []Gang{{Namespace: "default", Name: "a", MinCount: 3}, {Namespace: "default", Name: "b", MinCount: 3}}}
		if got := unschedulableGangs(t, snap); len(got) != 1 || got["default/a"] != 3 {
			t.Fatalf("unschedulable by gang %v: want gang a (priority 0) left out for gang b (priority 100)", got)
		}
	})
	t.Run("a gang that cannot fit does not keep out one that can", func(t *testing.T) {
		var ps []*corev1.Pod
		for i := range 5 {
			ps = append(ps, member("big", i, 60, 100))
		}
		for i := range 3 {
			ps = append(ps, member("small", i, 40, 0))
		}
		snap := &Snapshot{NodePools: []NodePool{limit4}, Pods: ps,
			Gangs: []Gang{{Namespace: "default", Name: "big", MinCount: 5}, {Namespace: "default", Name: "small", MinCount: 3}}}
		if got := unschedulableGangs(t, snap); len(got) != 1 || got["default/big"] != 5 {
			t.Fatalf("unschedulable by gang %v: want only the five-node gang left out (the limit is four nodes)", got)
		}
	})
}

// TestGangsShareDomains: two gangs of two 8-GPU pods, each held to one zone, and two existing
// 16-GPU nodes, one in each zone; no pool can launch more. Alone, each gang is cheapest (free)
// in the first zone; together, one must take the other zone. Both get capacity.
func TestGangsShareDomains(t *testing.T) {
	var alloc scheduling.Resources
	alloc[scheduling.CPU], alloc[scheduling.Memory], alloc[scheduling.Pods], alloc[scheduling.NvidiaGPU] = 192_000, 2000<<30, 100, 16
	node := func(name, zone string) Node {
		return Node{Name: name, Labels: map[string]string{apisv1.LabelZone: zone, apisv1.LabelHostname: name}, Allocatable: alloc, Initialized: true}
	}
	snap := &Snapshot{
		NodePools: []NodePool{gpuPool(t, func(p *NodePool) { p.NodeLimit = 0 })},
		Nodes:     []Node{node("gpu-a", "us-east-1a"), node("gpu-b", "us-east-1b")},
		Pods:      append(gangPods(2, "first"), gangPods(2, "second")...),
		Gangs: []Gang{
			{Namespace: "default", Name: "first", MinCount: 2, TopologyKey: apisv1.LabelZone},
			{Namespace: "default", Name: "second", MinCount: 2, TopologyKey: apisv1.LabelZone},
		},
	}
	for _, guide := range []bool{false, true} {
		plan, err := Solve(snap, Options{NoGuide: !guide})
		if err != nil {
			t.Fatal(err)
		}
		if err := Verify(snap, plan); err != nil {
			t.Fatal(err)
		}
		if len(plan.Unschedulable) != 0 || len(plan.Claims) != 0 {
			t.Fatalf("guided %v: %d claims, unschedulable %v: want each gang on one existing node", guide, len(plan.Claims), plan.Unschedulable)
		}
		domains := map[string]bool{}
		for _, o := range plan.Gangs {
			domains[o.Domain] = true
		}
		if len(domains) != 2 {
			t.Fatalf("guided %v: gangs in %v: want one zone each", guide, plan.Gangs)
		}
	}
}

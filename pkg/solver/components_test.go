package solver

import (
	"fmt"
	"math"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// drawSide draws pods pinned to NodePool pool, their labels and selectors prefixed by it so
// that no term of one side selects the other's pods.
func drawSide(t *rapid.T, pool string, n int) []*corev1.Pod {
	var pods []*corev1.Pod
	for i := range n {
		cpu := rapid.SampledFrom([]string{"100m", "250m", "500m", "1", "2", "3"}).Draw(t, "cpu")
		mem := rapid.SampledFrom([]string{"128Mi", "512Mi", "1Gi", "3Gi", "6Gi"}).Draw(t, "mem")
		app := pool + "-" + rapid.SampledFrom([]string{"a", "b"}).Draw(t, "app")
		p := pod(cpu, mem, named(fmt.Sprintf("%s-%d", pool, i)), labelled("app", app), nodeSelector(apisv1.NodePoolLabelKey, pool))
		sel := map[string]string{"app": app}
		switch rapid.IntRange(0, 6).Draw(t, "kind") {
		case 1:
			spread(apisv1.LabelZone, 1, corev1.DoNotSchedule, sel)(p)
		case 2:
			antiAffinity(apisv1.LabelHostname, sel)(p)
		case 3:
			nodeSelector(apisv1.LabelZone, rapid.SampledFrom(genZones).Draw(t, "zone"))(p)
		case 4:
			hostPort(80)(p)
		}
		pods = append(pods, p)
	}
	return pods
}

// TestPropertyDisjointPoolsAdd: two workloads pinned to disjoint NodePools (with nodes of
// their own, and limits) solve together for no more than they cost apart, and the joint plan is
// valid.
func TestPropertyDisjointPoolsAdd(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		its := genTypes()
		snap := &Snapshot{}
		for _, name := range []string{"left", "right"} {
			reqs := scheduling.Requirements{}
			if rapid.Bool().Draw(t, "odOnly") {
				reqs = onDemand()
			}
			snap.NodePools = append(snap.NodePools, nodePool(name, its, reqs, func(p *NodePool) {
				p.Weight = int32(rapid.IntRange(0, 1).Draw(t, "weight"))
				if rapid.IntRange(0, 3).Draw(t, "limited") == 0 {
					p.HasLimit[scheduling.CPU] = true
					p.Limits[scheduling.CPU] = int64(rapid.IntRange(4, 40).Draw(t, "cpuLimit")) * 1000
				}
			}))
			for i := rapid.IntRange(0, 2).Draw(t, "nodes"); i > 0; i-- {
				it := rapid.SampledFrom(its).Draw(t, "nodeType")
				host := fmt.Sprintf("%s-node-%d", name, i)
				snap.Nodes = append(snap.Nodes, Node{Name: host, Allocatable: it.Allocatable(), Initialized: true, NodePool: name,
					Labels: map[string]string{apisv1.LabelZone: rapid.SampledFrom(genZones).Draw(t, "nodeZone"),
						apisv1.LabelHostname: host, apisv1.NodePoolLabelKey: name}})
			}
		}
		left := drawSide(t, "left", rapid.IntRange(1, 20).Draw(t, "leftPods"))
		right := drawSide(t, "right", rapid.IntRange(1, 20).Draw(t, "rightPods"))
		solveWith := func(pods []*corev1.Pod) *Plan {
			s := *snap
			s.Pods = pods
			plan, err := Solve(&s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := Verify(&s, plan); err != nil {
				t.Fatalf("invalid plan: %v\n%s", err, describe(plan))
			}
			return plan
		}
		var all []*corev1.Pod
		for i := range max(len(left), len(right)) {
			// Interleaved, so that the pods' order says nothing of their parts.
			if i < len(left) {
				all = append(all, left[i])
			}
			if i < len(right) {
				all = append(all, right[i])
			}
		}
		a, b, joint := solveWith(left), solveWith(right), solveWith(all)
		if len(joint.Unschedulable) > len(a.Unschedulable)+len(b.Unschedulable) {
			t.Fatalf("joint plan leaves %d pods unschedulable, apart %d + %d", len(joint.Unschedulable), len(a.Unschedulable), len(b.Unschedulable))
		}
		if joint.Price > a.Price+b.Price+1e-9 {
			t.Fatalf("joint plan $%.4f/h, apart $%.4f + $%.4f\njoint:\n%s\nleft:\n%s\nright:\n%s", joint.Price, a.Price, b.Price, describe(joint), describe(a), describe(b))
		}
		if joint.LowerBound > joint.Price+1e-9 {
			t.Fatalf("bound %.4f above the price %.4f", joint.LowerBound, joint.Price)
		}
	})
}

// drawRepairSnapshot is drawSnapshot with more pods of plain, mid-sized shapes, so that the
// plans have several claims of one pool for the repair to work on.
func drawRepairSnapshot(t *rapid.T) *Snapshot {
	snap := drawSnapshot(t)
	if rapid.IntRange(0, 2).Draw(t, "volumeDiscount") == 0 {
		// Larger types cheaper per unit (as large GPU and MIG types can be): where several
		// claims merged into one larger type cost less (the merge repair).
		var discounted []*catalog.InstanceType
		for i, it := range genTypes() {
			cp := *it
			cp.Offerings = slices.Clone(it.Offerings)
			f := 1 / math.Sqrt(float64(it.Capacity[scheduling.CPU])/1000)
			for o := range cp.Offerings {
				cp.Offerings[o].Price *= f
			}
			cp.Offerings[0].Price += 1e-4 * float64(i) // no two types alike in price
			discounted = append(discounted, &cp)
		}
		for i := range snap.NodePools {
			snap.NodePools[i].InstanceTypes = discounted
		}
	}
	for i := rapid.IntRange(0, 40).Draw(t, "extra"); i > 0; i-- {
		cpu := rapid.SampledFrom([]string{"250m", "500m", "900m", "1", "1500m", "3"}).Draw(t, "extraCPU")
		mem := rapid.SampledFrom([]string{"256Mi", "1Gi", "2Gi", "5Gi"}).Draw(t, "extraMem")
		p := pod(cpu, mem, named(fmt.Sprintf("x%d", i)), labelled("app", rapid.SampledFrom([]string{"a", "b", "x"}).Draw(t, "extraApp")))
		if rapid.IntRange(0, 3).Draw(t, "extraZoned") == 0 {
			nodeSelector(apisv1.LabelZone, rapid.SampledFrom(genZones).Draw(t, "extraZone"))(p)
		}
		// Hostname-level terms, which the pair repair exchanges only count for count.
		sel := map[string]string{"app": rapid.SampledFrom([]string{"a", "b", "x"}).Draw(t, "extraSel")}
		switch rapid.IntRange(0, 5).Draw(t, "extraHost") {
		case 1:
			spread(apisv1.LabelHostname, int32(rapid.IntRange(1, 2).Draw(t, "extraSkew")), corev1.DoNotSchedule, sel)(p)
		case 2:
			antiAffinity(apisv1.LabelHostname, sel)(p)
		case 3:
			podAffinity(apisv1.LabelHostname, sel)(p)
		}
		snap.Pods = append(snap.Pods, p)
	}
	return snap
}

// TestPairRepairExchangesCountedPods: on the diverse benchmark's 50 pods, where every node
// holds one pod of a hostname anti-affinity group and most pods count towards hostname spreads,
// the pair repair exchanges pods count for count and the plan is valid and cheaper.
func TestPairRepairExchangesCountedPods(t *testing.T) {
	snap := &Snapshot{NodePools: []NodePool{nodePool("default", syntheticTypes(400), scheduling.Requirements{})}, Pods: diversePods(50, 42)}
	with := solveOK(t, snap)
	without, err := Solve(snap, Options{noPairRepair: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(snap, with); err != nil {
		t.Fatalf("invalid plan: %v\n%s", err, describe(with))
	}
	if with.Price > without.Price-0.25 {
		t.Fatalf("with the pair repair $%.2f/h, without $%.2f/h: want at least $0.25/h less", with.Price, without.Price)
	}
}

// TestPropertyRepairNeverDearer: on random snapshots the repaired plan is valid, leaves no
// more pods unschedulable and costs no more than the same solve without the repair, guided or
// not.
func TestPropertyRepairNeverDearer(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		snap := drawRepairSnapshot(t)
		noGuide := rapid.Bool().Draw(t, "noGuide")
		validAndNoDearer(t, snap, Options{NoGuide: noGuide}, Options{NoGuide: noGuide, NoRepair: true})
	})
}

// validAndNoDearer solves snap with opts and with base, and fails unless the first plan is
// valid, leaves no more pods unschedulable than the second and, leaving as many, costs no more.
// It returns both plans.
func validAndNoDearer(t interface {
	Fatal(...any)
	Fatalf(string, ...any)
}, snap *Snapshot, opts, base Options) (*Plan, *Plan) {
	plan, err := Solve(snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(snap, plan); err != nil {
		t.Fatalf("invalid plan: %v\n%s", err, describe(plan))
	}
	other, err := Solve(snap, base)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Unschedulable) > len(other.Unschedulable) || len(plan.Unschedulable) == len(other.Unschedulable) && plan.Price > other.Price+1e-9 {
		t.Fatalf("$%.4f/h (%d unschedulable), against $%.4f/h (%d)\nplan:\n%s\nagainst:\n%s",
			plan.Price, len(plan.Unschedulable), other.Price, len(other.Unschedulable), describe(plan), describe(other))
	}
	return plan, other
}

// TestPropertyRepairEachMove: the plan after each of the repair's moves (the repair stopped
// after 1, 2, … moves) is valid, and none costs more than the one before.
func TestPropertyRepairEachMove(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		snap := drawRepairSnapshot(t)
		opts := Options{NoGuide: rapid.Bool().Draw(t, "noGuide"), NoRepair: true}
		prev, err := Solve(snap, opts)
		if err != nil {
			t.Fatal(err)
		}
		full, err := Solve(snap, Options{NoGuide: opts.NoGuide})
		if err != nil {
			t.Fatal(err)
		}
		opts.NoRepair = false
		for k := 1; k <= full.Repaired; k++ {
			opts.repairLimit = k
			plan, err := Solve(snap, opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := Verify(snap, plan); err != nil {
				t.Fatalf("after %d moves: invalid plan: %v\n%s", k, err, describe(plan))
			}
			if len(plan.Unschedulable) > len(prev.Unschedulable) ||
				len(plan.Unschedulable) == len(prev.Unschedulable) && plan.Price > prev.Price+1e-9 {
				t.Fatalf("move %d: $%.4f/h (%d unschedulable) after $%.4f/h (%d)", k, plan.Price, len(plan.Unschedulable), prev.Price, len(prev.Unschedulable))
			}
			prev = plan
		}
	})
}

// migPool is a pool of the p4d, p4de and p5 types with their GPUs in 1g.10gb MIG slices.
func migPool(t testing.TB) NodePool {
	its, err := catalog.PartitionAll(aws(t).Types, "all-1g.10gb")
	if err != nil {
		t.Fatal(err)
	}
	return nodePool("mig", its, scheduling.NewRequirements(
		scheduling.In(apisv1.LabelInstanceFamily, "p4d", "p4de", "p5"),
		scheduling.In(apisv1.CapacityTypeLabelKey, apisv1.CapacityTypeOnDemand),
	))
}

// migSlices asks for n 1g.10gb MIG slices.
func migSlices(n int64) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests["nvidia.com/mig-1g.10gb"] = *resource.NewQuantity(n, resource.DecimalSI)
	}
}

// typeAffinity requires one of the instance types.
func typeAffinity(types ...string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: apisv1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: types,
			}}}},
		}}}
	}
}

// TestMergeRepairJoinsClaimsIntoALargerType: 22 pods of one MIG slice each (20 of them kept to
// the MIG types by a node affinity, 2 slices for the last) on a pool whose H100 and A100 GPUs
// are partitioned into 1g.10gb slices: four p5.4xlarge (7 slices each, $6.88/h) is what the
// guide and first-fit leave; one p4d.24xlarge (32 slices, $21.96/h) holds them all for less,
// which only a merge of all four claims finds.
func TestMergeRepairJoinsClaimsIntoALargerType(t *testing.T) {
	pool := migPool(t)
	affine := typeAffinity("p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5.4xlarge")
	snap := &Snapshot{NodePools: []NodePool{pool}, Pods: append(pods(20, "1", "1Gi", migSlices(1), affine), pod("1", "1Gi", migSlices(2), named("two")))}
	with := solveOK(t, snap)
	without, err := Solve(snap, Options{noMergeRepair: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(with.Claims) != 1 || with.Claims[0].InstanceType.Name != "p4d.24xlarge" || with.Price > without.Price-1 {
		t.Fatalf("with the merge repair $%.2f/h:\n%s\nwithout $%.2f/h:\n%s", with.Price, describe(with), without.Price, describe(without))
	}
	t.Logf("with the merge repair $%.2f/h (bound $%.2f/h), without $%.2f/h", with.Price, with.LowerBound, without.Price)
}

// TestPropertyMergeRepair: on random MIG-slice pods (slices, CPU, zone selectors, zone
// spreads, hostname anti-affinity, instance-type affinities) on the partitioned H100 and A100
// types, where small and large types differ in price per slice, the plan with the merge repair
// is valid and costs no more than without it.
func TestPropertyMergeRepair(t *testing.T) {
	pool := migPool(t)
	merges := 0
	rapid.Check(t, func(t *rapid.T) {
		var ps []*corev1.Pod
		types := rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5.4xlarge"}), 2, 4, rapid.ID[string]).Draw(t, "types")
		for i := range rapid.IntRange(1, 40).Draw(t, "pods") {
			p := pod(rapid.SampledFrom([]string{"500m", "1", "1", "2", "12"}).Draw(t, "cpu"), "1Gi", named(fmt.Sprintf("p%d", i)),
				labelled("app", rapid.SampledFrom([]string{"a", "b"}).Draw(t, "app")))
			migSlices(int64(rapid.SampledFrom([]int{1, 1, 1, 2, 3}).Draw(t, "slices")))(p)
			switch rapid.IntRange(0, 11).Draw(t, "constraint") {
			case 1:
				nodeSelector(apisv1.LabelZone, rapid.SampledFrom([]string{"us-east-1a", "us-east-1b"}).Draw(t, "zone"))(p)
			case 2:
				spread(apisv1.LabelZone, 1, corev1.DoNotSchedule, map[string]string{"app": "a"})(p)
			case 3:
				antiAffinity(apisv1.LabelHostname, map[string]string{"app": "b"})(p)
			case 4, 5, 6, 7, 8, 9:
				typeAffinity(types...)(p) // as a device claim narrows its pod
			}
			ps = append(ps, p)
		}
		with, without := validAndNoDearer(t, &Snapshot{NodePools: []NodePool{pool}, Pods: ps}, Options{SkipBound: true}, Options{SkipBound: true, noMergeRepair: true})
		if with.Price < without.Price-1e-9 {
			merges++
		}
	})
	t.Logf("the merge repair made %d plans cheaper", merges)
}

package solver

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
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
		plan, err := Solve(snap, Options{NoGuide: noGuide})
		if err != nil {
			t.Fatal(err)
		}
		if err := Verify(snap, plan); err != nil {
			t.Fatalf("invalid plan: %v\n%s", err, describe(plan))
		}
		raw, err := Solve(snap, Options{NoGuide: noGuide, NoRepair: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(plan.Unschedulable) > len(raw.Unschedulable) {
			t.Fatalf("repair leaves %d pods unschedulable, %d without", len(plan.Unschedulable), len(raw.Unschedulable))
		}
		if len(plan.Unschedulable) == len(raw.Unschedulable) && plan.Price > raw.Price+1e-9 {
			t.Fatalf("repaired $%.4f/h, unrepaired $%.4f/h\nrepaired:\n%s\nunrepaired:\n%s", plan.Price, raw.Price, describe(plan), describe(raw))
		}
	})
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

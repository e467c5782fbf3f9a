package bound

import (
	"math"
	"reflect"
	"testing"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

const gib = 1 << 30

// pod and node build resource vectors: CPU in cores, memory in GiB.
func pod(cpu float64, memGiB, gpu int64) scheduling.Resources {
	return resources(int64(cpu*1000), memGiB*gib, 1, gpu)
}

func node(cpu, memGiB, pods, gpu int64) scheduling.Resources {
	return resources(cpu*1000, memGiB*gib, pods, gpu)
}

func TestKnownAnswers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		p        Problem
		min, max float64 // the bound must lie in [min, max]
		covering float64 // if > 0, the covering LP's value
	}{
		{
			name: "GPU pods: three small nodes, not one large one",
			p: Problem{
				Types: []Type{
					{Name: "g-small", Price: 1.212, Capacity: node(8, 32, 29, 1)},
					{Name: "g-large", Price: 5.672, Capacity: node(48, 192, 234, 4)},
				},
				Classes: []Class{{Count: 3, Demand: pod(4, 8, 1), Types: []int{0, 1}, Group: -1}},
			},
			min: 3.636 - 1e-6, max: 3.636, covering: 3.636,
		},
		{
			name: "pods of 60% of a node: one per node, where covering sees six nodes",
			p: Problem{
				Types:   []Type{{Price: 1, Capacity: node(4, 16, 110, 0)}},
				Classes: []Class{{Count: 10, Demand: pod(2.4, 1, 0), Types: []int{0}, Group: -1}},
			},
			min: 10 - 1e-6, max: 10, covering: 6,
		},
		{
			name: "hostname anti-affinity: five tiny pods need five nodes",
			p: Problem{
				Types: []Type{
					{Price: 0.1, Capacity: node(2, 4, 29, 0)},
					{Price: 1, Capacity: node(16, 64, 234, 0)},
				},
				Classes: []Class{{Count: 5, Demand: pod(0.1, 0, 0), Types: []int{0, 1}, Group: 0}},
				Groups:  []Group{{PerNode: 1}},
			},
			min: 0.5 - 1e-6, max: 0.5,
		},
		{
			name: "topology spread with maxSkew 2 across two classes of one group",
			p: Problem{
				Types: []Type{{Price: 1, Capacity: node(16, 64, 110, 0)}},
				Classes: []Class{
					{Count: 3, Demand: pod(0.5, 1, 0), Types: []int{0}, Group: 0},
					{Count: 4, Demand: pod(0.25, 1, 0), Types: []int{0}, Group: 0},
				},
				Groups: []Group{{PerNode: 2}},
			},
			min: 4 - 1e-6, max: 4,
		},
		{
			// Five cores of pods in two classes, on nodes of four: the LPs buy 1.25 nodes and
			// each class alone fits one, but whole nodes must hold all five cores.
			name: "whole nodes for the pods' total demand, across classes",
			p: Problem{
				Types: []Type{
					{Name: "c.xlarge", Price: 1, Capacity: node(4, 8, 58, 0)},
					{Name: "c.2xlarge", Price: 2, Capacity: node(8, 16, 58, 0)},
				},
				Classes: []Class{
					{Count: 3, Demand: pod(1, 1, 0), Types: []int{0, 1}, Group: -1},
					{Count: 4, Demand: pod(0.5, 0, 0), Types: []int{0, 1}, Group: -1},
				},
			},
			min: 2 - 1e-6, max: 2, covering: 1.25,
		},
		{
			name: "reserved capacity: two nearly free nodes, then on-demand",
			p: Problem{
				Types: []Type{
					{Name: "reserved", Price: 0.001, MaxCount: 2, Capacity: node(4, 16, 110, 0)},
					{Name: "on-demand", Price: 1, Capacity: node(4, 16, 110, 0)},
				},
				Classes: []Class{{Count: 6, Demand: pod(2, 1, 0), Types: []int{0, 1}, Group: -1}},
			},
			min: 1.002 - 1e-6, max: 1.002,
		},
		{
			name: "an existing free node holds four of five pods",
			p: Problem{
				Types: []Type{
					{Name: "existing", Price: 0, MaxCount: 1, Capacity: node(8, 32, 110, 0)},
					{Name: "new", Price: 1, Capacity: node(4, 16, 110, 0)},
				},
				Classes: []Class{{Count: 5, Demand: pod(2, 1, 0), Types: []int{0, 1}, Group: -1}},
			},
			min: 1 - 1e-6, max: 1,
		},
		{
			name: "everything fits on free existing nodes",
			p: Problem{
				Types: []Type{
					{Name: "existing", Price: 0, MaxCount: 3, Capacity: node(8, 32, 110, 0)},
					{Name: "new", Price: 1, Capacity: node(4, 16, 110, 0)},
				},
				Classes: []Class{{Count: 9, Demand: pod(2, 1, 0), Types: []int{0, 1}, Group: -1}},
			},
			min: 0, max: 0,
		},
		{
			name: "a class limited to one type rounds its nodes up",
			p: Problem{
				Types: []Type{
					{Price: 1, Capacity: node(4, 16, 110, 0)},
					{Price: 0.8, Capacity: node(4, 16, 110, 0)},
				},
				Classes: []Class{
					{Count: 3, Demand: pod(2, 1, 0), Types: []int{0}, Group: -1},
					{Count: 1, Demand: pod(2, 1, 0), Types: []int{1}, Group: -1},
				},
			},
			min: 2.8 - 1e-6, max: 2.8,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Lower(&tc.p)
			if r.Value < tc.min || r.Value > tc.max+1e-9 {
				t.Errorf("Value = %.9g, want in [%.9g, %.9g]; %+v", r.Value, tc.min, tc.max, r)
			}
			if tc.covering > 0 && math.Abs(r.Covering-tc.covering) > 1e-6 {
				t.Errorf("Covering = %.9g, want %.9g", r.Covering, tc.covering)
			}
			if opt := bruteForce(&tc.p); math.Abs(opt-tc.max) > 1e-12 {
				t.Errorf("the test's optimum %.9g is wrong: brute force says %.9g", tc.max, opt)
			}
		})
	}
}

func TestInfeasible(t *testing.T) {
	small := Type{Price: 1, Capacity: node(2, 8, 29, 0)}
	for _, tc := range []struct {
		name string
		p    Problem
	}{
		{"a class with no types", Problem{Types: []Type{small}, Classes: []Class{{Count: 1, Demand: pod(1, 1, 0), Group: -1}}}},
		{"a class that fits none of its types", Problem{Types: []Type{small}, Classes: []Class{{Count: 1, Demand: pod(4, 1, 0), Types: []int{0}, Group: -1}}}},
		{"a group that allows no pod on a node", Problem{
			Types: []Type{small}, Classes: []Class{{Count: 1, Demand: pod(1, 1, 0), Types: []int{0}, Group: 0}}, Groups: []Group{{PerNode: 0}},
		}},
		{"limited nodes that cannot hold every pod", Problem{
			Types:   []Type{{Price: 0, MaxCount: 2, Capacity: node(2, 8, 29, 0)}},
			Classes: []Class{{Count: 5, Demand: pod(1, 1, 0), Types: []int{0}, Group: -1}},
		}},
		{"limited nodes and anti-affinity", Problem{
			Types:   []Type{{Price: 1, MaxCount: 2, Capacity: node(64, 256, 234, 0)}},
			Classes: []Class{{Count: 3, Demand: pod(1, 1, 0), Types: []int{0}, Group: 0}},
			Groups:  []Group{{PerNode: 1}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := Lower(&tc.p); !math.IsInf(r.Value, 1) {
				t.Errorf("Value = %v, want +Inf; %+v", r.Value, r)
			}
			if opt := bruteForce(&tc.p); !math.IsInf(opt, 1) {
				t.Errorf("brute force finds a packing of cost %v", opt)
			}
		})
	}
}

func TestDegenerate(t *testing.T) {
	types := []Type{{Price: 2, Capacity: node(2, 8, 29, 0)}, {Price: 3, Capacity: node(4, 8, 29, 0)}}
	if r := Lower(&Problem{Types: types}); !reflect.DeepEqual(r, Result{Exact: true}) {
		t.Errorf("no pods: %+v", r)
	}
	if r := Lower(&Problem{Types: types, Classes: []Class{{Count: 0, Demand: pod(64, 1, 0), Group: -1}}}); r.Value != 0 {
		t.Errorf("a class of no pods: %+v", r)
	}
	// Pods that demand nothing still need a node.
	r := Lower(&Problem{Types: types, Classes: []Class{{Count: 3, Types: []int{0, 1}, Group: -1}}})
	if r.Value < 2-1e-6 || r.Value > 2 {
		t.Errorf("pods demanding nothing: %+v", r)
	}
}

func TestMalformedPanics(t *testing.T) {
	for name, p := range map[string]Problem{
		"negative price":  {Types: []Type{{Price: -1}}},
		"NaN price":       {Types: []Type{{Price: math.NaN()}}},
		"type index":      {Types: []Type{{Price: 1}}, Classes: []Class{{Count: 1, Types: []int{1}, Group: -1}}},
		"group index":     {Types: []Type{{Price: 1}}, Classes: []Class{{Count: 1, Types: []int{0}, Group: 0}}},
		"negative demand": {Types: []Type{{Price: 1}}, Classes: []Class{{Count: 1, Demand: resources(-1, 0, 1, 0), Types: []int{0}, Group: -1}}},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			Lower(&p)
		})
	}
}

// TestRealisticBelowFirstFit checks problems too large for brute force against a feasible
// packing: the bound must not exceed its cost, must not depend on the call, and the bounds must
// be ordered as the theory says.
func TestRealisticBelowFirstFit(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		k, n := []int{3, 8, 20, 40}[seed%4], []int{20, 80, 300}[seed%3]
		p := realistic(seed, k, n)
		r := Lower(p)
		ffd := firstFit(p)
		if math.IsNaN(r.Value) || r.Value > ffd+1e-9 {
			t.Fatalf("seed %d: bound %v above a first-fit packing's cost %v", seed, r.Value, ffd)
		}
		if again := Lower(p); !reflect.DeepEqual(again, r) {
			t.Fatalf("seed %d: not deterministic: %+v then %+v", seed, r, again)
		}
		if r.Configuration < r.Covering*(1-1e-6) {
			t.Errorf("seed %d: configuration %v below covering %v", seed, r.Configuration, r.Covering)
		}
		weak := Lower(p, MaxIterations(1), KnapsackNodes(1), CoveringOnly())
		if weak.Value > r.Value+1e-9 || weak.Configuration != 0 {
			t.Errorf("seed %d: capped run %+v beats the full one %+v", seed, weak, r)
		}
		t.Logf("seed %d (%d classes, %d types): bound %.4f = %.3f of first fit (covering %.4f, configuration %.4f, exact %v, %d rounds, %d columns)",
			seed, k, n, r.Value, r.Value/ffd, r.Covering, r.Configuration, r.Exact, r.Iterations, r.Columns)
	}
}

// TestCoveringMatchesGonum compares the covering bound on realistic mid-sized problems with the
// covering LP of the reduced problem written out in full and solved by gonum's simplex.
func TestCoveringMatchesGonum(t *testing.T) {
	checked := 0
	for seed := uint64(100); seed < 110; seed++ {
		p := realistic(seed, 6, 20)
		want, err := coveringLP(reduced(p))
		if err != nil {
			t.Logf("seed %d: gonum: %v", seed, err)
			continue
		}
		checked++
		if got := Lower(p).Covering; math.Abs(got-want) > 1e-6*(1+want) {
			t.Errorf("seed %d: Covering %.9g, covering LP %.9g", seed, got, want)
		}
	}
	if checked < 5 {
		t.Fatalf("gonum solved only %d of 10 problems", checked)
	}
}

// TestRegressions replays problems the property test once caught.
func TestRegressions(t *testing.T) {
	for name, p := range map[string]*Problem{
		// An LP dual above every price (a pod taking a free node's whole capacity is worth
		// all it displaces): an artificial column priced below it stopped the master short.
		"dual above every price": {
			Types: []Type{
				{Price: 0, MaxCount: 1, Capacity: resources(4000, gib, 2, 0)},
				{Price: 0.5, Capacity: resources(1000, gib, 1, 0)},
			},
			Classes: []Class{
				{Count: 1, Demand: resources(4000, 0, 1, 0), Types: []int{0}, Group: -1},
				{Count: 1, Demand: resources(250, 0, 1, 0), Types: []int{0, 1}, Group: -1},
				{Count: 1, Demand: resources(0, 0, 1, 0), Types: []int{1}, Group: -1},
			},
		},
		// An artificial column basic at zero set a dual to its huge cost, whose rounding
		// allowance cost the covering bound 7e-6 of its value.
		"artificial basic at zero": {
			Types: []Type{
				{Price: 0, MaxCount: 1, Capacity: resources(2000, gib, 2, 0)},
				{Price: 0, MaxCount: 2, Capacity: resources(1000, gib, 2, 0)},
				{Price: 0.25, Capacity: resources(1000, gib, 1, 0)},
			},
			Classes: []Class{
				{Count: 5, Demand: resources(0, 0, 1, 0), Types: []int{0, 1}, Group: -1},
				{Count: 1, Demand: resources(1250, 0, 1, 0), Types: []int{0}, Group: -1},
				{Count: 1, Demand: resources(0, 0, 1, 0), Types: []int{0, 2}, Group: -1},
			},
		},
		// Huge degenerate duals: the certificate's rounding exceeded the optimum by 2e-7.
		"huge degenerate duals": {
			Types: []Type{
				{Price: 0.25, MaxCount: 1, Capacity: resources(8000, 5*gib, 5, 0)},
				{Price: 0.01, MaxCount: 1, Capacity: resources(3000, 2*gib, 6, 0)},
			},
			Classes: []Class{
				{Count: 1, Demand: resources(3000, 2*gib, 1, 0), Types: []int{0}, Group: 0},
				{Count: 2, Demand: resources(250, 1879048192, 1, 0), Types: []int{0, 1}, Group: 0},
			},
			Groups: []Group{{PerNode: 3}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := Lower(p)
			opt := checkAgainstBruteForce(t, p, r)
			if r.Value < opt*(1-1e-6) {
				t.Errorf("bound %v, optimum %v", r.Value, opt)
			}
			if cov, err := coveringLP(reduced(p)); err == nil && math.Abs(r.Covering-cov) > 1e-6*(1+cov) {
				t.Errorf("Covering %v, covering LP %v", r.Covering, cov)
			}
		})
	}
}

// TestJointCover: the counting bounds on their own see every resource at once. Sixteen pods
// of many small shapes, half CPU-heavy and half memory-heavy, on a CPU-heavy and a
// memory-heavy type: each resource alone needs two nodes ($2), both at once 1.6 of each ($3.2).
func TestJointCover(t *testing.T) {
	p := Problem{Types: []Type{
		{Name: "cpu", Price: 1, Capacity: node(8, 2, 100, 0)},
		{Name: "mem", Price: 1, Capacity: node(2, 8, 100, 0)},
	}}
	for i := range 8 {
		// 16 CPU and 16 GiB in all, every class distinct.
		p.Classes = append(p.Classes,
			Class{Count: 1, Demand: resources(1500+int64(i), gib/2+int64(i)<<20, 1, 0), Types: []int{0, 1}, Group: -1},
			Class{Count: 1, Demand: resources(500-int64(i), 3*gib/2-int64(i)<<20, 1, 0), Types: []int{0, 1}, Group: -1})
	}
	in, status := prepare(&p)
	if status != solvable {
		t.Fatalf("status %v", status)
	}
	got := 0.0
	for _, part := range in.split() {
		got += jointCover(part)
	}
	if math.Abs(got-3.2) > 1e-6 {
		t.Fatalf("jointCover = %.9f, want 3.2", got)
	}
	if r := Lower(&p, CountingOnly()); r.Value < 3.2*(1-1e-6) || r.Value > 3.2 {
		t.Fatalf("CountingOnly = %.9f, want 3.2 (the joint cover)", r.Value)
	}
	// With the memory-heavy type limited to one node, the other 8 GiB come from CPU-heavy
	// nodes of 2 GiB each: $1 + $4.
	p.Types[1].MaxCount = 1
	if r := Lower(&p, CountingOnly()); math.Abs(r.Value-5) > 1e-6 {
		t.Fatalf("with a limited type, CountingOnly = %.9f, want 5", r.Value)
	}
}

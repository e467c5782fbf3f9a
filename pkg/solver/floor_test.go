package solver

import (
	"fmt"
	"math"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// TestPropertyCapacityFloor: no plan a solve returns is cheaper than the capacity floor, among
// the plans the floor speaks of (every pod placed; none on a node not initialized when it counts
// only initialized nodes; at most one claim when it bounds one claim).
func TestPropertyCapacityFloor(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		snap, prep := drawPrepared(t)
		for round := 0; round < 3; round++ {
			exclude := drawExclude(t, snap)
			fo := FloorOptions{ExcludeNodes: exclude, InitializedOnly: rapid.Bool().Draw(t, "initializedOnly"), OneClaim: rapid.Bool().Draw(t, "oneClaim"), Homeless: true}
			fl := prep.CapacityFloor(requestsOf(snap.Pods), fo)
			floor := fl.Price
			for _, guide := range []bool{false, true} {
				plan, err := prep.Solve(snap.Pods, Options{ExcludeNodes: exclude, NoGuide: !guide})
				if err != nil {
					t.Fatal(err)
				}
				if len(plan.Unschedulable) > 0 || fo.OneClaim && len(plan.Claims) > 1 {
					continue
				}
				onUninitialized := false
				for _, pl := range plan.Placements {
					for _, n := range snap.Nodes {
						if n.Name == pl.Node && (!n.Initialized || n.InFlight) {
							onUninitialized = true
						}
					}
				}
				if fo.InitializedOnly && onUninitialized {
					continue
				}
				if plan.Price < floor-1e-9*max(1, floor) {
					t.Fatalf("round %d (%+v, guided %v): plan at $%.6f/h is under the floor $%.6f/h\n%s", round, fo, guide, plan.Price, floor, describe(plan))
				}
				onClaims := map[scheduling.Resources]int{}
				for _, c := range plan.Claims {
					for _, pod := range c.Pods {
						req, _ := scheduling.PodRequests(pod)
						onClaims[req]++
					}
				}
				for _, h := range fl.Homeless {
					if onClaims[h]--; onClaims[h] < 0 {
						t.Fatalf("round %d: a homeless pod (%s) is not on a new claim\n%s", round, h, describe(plan))
					}
				}
			}
		}
	})
}

// requestsOf reads the pods' requests; a pod whose requests cannot be read has none.
func requestsOf(pods []*corev1.Pod) []scheduling.Resources {
	out := make([]scheduling.Resources, len(pods))
	for i, p := range pods {
		out[i], _ = scheduling.PodRequests(p)
	}
	return out
}

// TestCapacityFloor: a node's pods that no other node has room for cost at least the cheapest
// type that holds them; pods that fit elsewhere cost nothing; pods no type holds cannot be placed.
func TestCapacityFloor(t *testing.T) {
	its := types(t, "m5.large", "m5.xlarge", "m5.2xlarge", "c5.large")
	full := Node{Name: "full", Allocatable: its[0].Allocatable(), Initialized: true, Pods: pods(1, "1800m", "6Gi")}
	roomy := Node{Name: "roomy", Allocatable: its[2].Allocatable(), Initialized: true}
	snap := &Snapshot{NodePools: []NodePool{nodePool("general", its, onDemand())}, Nodes: []Node{full, roomy}}
	prep, err := Prepare(snap)
	if err != nil {
		t.Fatal(err)
	}
	price := func(name string) float64 {
		for _, it := range its {
			if it.Name == name {
				o, _ := it.CheapestOffering(onDemand())
				return o.Price
			}
		}
		t.Fatalf("no %s", name)
		return 0
	}
	for _, tc := range []struct {
		name    string
		pods    int
		cpu     string
		exclude []string
		opts    FloorOptions
		want    float64
	}{
		{name: "fits the roomy node", pods: 2, cpu: "1", exclude: []string{"full"}, want: 0},
		{name: "the roomy node gone", pods: 1, cpu: "1", exclude: []string{"full", "roomy"}, want: price("c5.large")},
		{name: "more than the roomy node holds, one claim", pods: 10, cpu: "1", exclude: []string{"full"}, opts: FloorOptions{OneClaim: true}, want: price("m5.xlarge")},
		{name: "no type holds it", pods: 1, cpu: "64", exclude: []string{"full"}, want: math.Inf(1)},
		{name: "no type holds them together", pods: 12, cpu: "1", exclude: []string{"full", "roomy"}, opts: FloorOptions{OneClaim: true}, want: math.Inf(1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.ExcludeNodes = tc.exclude
			got := prep.CapacityFloor(requestsOf(pods(tc.pods, tc.cpu, "1Gi")), tc.opts).Price
			if got != tc.want && math.Abs(got-tc.want) > 1e-9 {
				t.Fatalf("floor %.4f, want %.4f", got, tc.want)
			}
		})
	}
}

// TestPropertyTypesHolding: a claim's options that hold one of its pods and are offered under a
// price are never more than TypesHolding counts for that pod and price.
func TestPropertyTypesHolding(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		snap, prep := drawPrepared(t)
		plan, err := prep.Solve(snap.Pods, Options{})
		if err != nil {
			t.Fatal(err)
		}
		scale := rapid.Float64Range(0.5, 3).Draw(t, "scale")
		for _, c := range plan.Claims {
			under := c.Price * scale
			q := catalog.NewQuery(c.Requirements)
			for _, pod := range c.Pods {
				req, _ := scheduling.PodRequests(pod)
				for _, notSpot := range []bool{false, true} {
					want := 0
					for _, it := range c.InstanceTypes {
						for i := range it.Offerings {
							o := &it.Offerings[i]
							if o.Usable() && o.Price < under && q.OfferingMatches(o) && (!notSpot || o.CapacityType != apisv1.CapacityTypeSpot) {
								want++
								break
							}
						}
					}
					if got := prep.TypesHolding(&req, under, notSpot, len(c.InstanceTypes)+1); got < want {
						t.Fatalf("claim %s: %d options hold %s under $%.4f/h (notSpot %v), TypesHolding counts %d", c.Hostname, want, req, under, notSpot, got)
					}
				}
			}
		}
	})
}

// TestPropertyUnguided: when Options.Unguided refuses a first-fit plan for putting a watched pod
// on a node that is not initialized, the guided solve that was not made would have put one
// there too; and a solve it lets through is the solve without it.
func TestPropertyUnguided(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		snap := drawSnapshot(t)
		if rapid.Bool().Draw(t, "plain") {
			// Pods with requests alone: every class packable, the case Unguided speaks of.
			snap.Pods = nil
			for i := rapid.IntRange(2, 20).Draw(t, "plainPods"); i > 0; i-- {
				p := pod(rapid.SampledFrom([]string{"250m", "1", "2", "3500m", "7"}).Draw(t, "cpu"), rapid.SampledFrom([]string{"512Mi", "2Gi", "7Gi", "30Gi"}).Draw(t, "mem"))
				p.Name = fmt.Sprintf("plain-%d", i)
				snap.Pods = append(snap.Pods, p)
			}
		}
		prep, err := Prepare(snap)
		if err != nil {
			t.Fatal(err)
		}
		watched := map[string]bool{}
		for _, p := range snap.Pods {
			if rapid.Bool().Draw(t, "watched") {
				watched[p.Name] = true
			}
		}
		uninitialized := map[string]bool{}
		for _, n := range snap.Nodes {
			if !n.Initialized || n.InFlight {
				uninitialized[n.Name] = true
			}
		}
		spilled := func(pls []Placement) bool {
			for _, pl := range pls {
				if watched[pl.Pod.Name] && (pl.InFlight || uninitialized[pl.Node]) {
					return true
				}
			}
			return false
		}
		asked := false
		cut, err := prep.Solve(snap.Pods, Options{Unguided: func(pls []Placement) bool {
			asked = true
			return spilled(pls)
		}})
		if err != nil {
			t.Fatal(err)
		}
		full, err := prep.Solve(snap.Pods, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if asked && spilled(cut.Placements) && !spilled(full.Placements) {
			t.Fatalf("the first-fit plan puts a watched pod on a node not initialized, the guided one does not\n%s\n%s", describe(cut), describe(full))
		}
		if !spilled(cut.Placements) && (cut.Price != full.Price || len(cut.Claims) != len(full.Claims)) {
			t.Fatalf("a plan Unguided let through differs from the full solve\n%s\n%s", describe(cut), describe(full))
		}
	})
}

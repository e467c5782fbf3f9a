package sim

import (
	"context"
	"strings"
	"testing"
)

// A replay ends when the pods left can never start: here one job asks for more CPU than any
// instance type of the pool has. Spot instances draw interruption notices far ahead at each
// launch; before, the replay popped them long after the trace (a 1-hour trace ran to 2,013
// hours), so its time axis and its idle costs covered months.
func TestAReplayEndsWhenThePodsLeftCanNeverStart(t *testing.T) {
	set := parseSet(t, strings.Replace(poolYAML("m5.large", "m5.xlarge"), "values: [on-demand]", "values: [spot]", 1))
	env := traceEnv(t, set, "0,3600,1,1000,1024,0,\n60,3600,2,64000,1024,0,\n")
	opts := exact()
	opts.Spot = SpotAdvisor
	rep := simulate(t, env, opts)
	if rep.Bound.UnplaceablePods != 2 {
		t.Errorf("the bound counts %d unplaceable pods, want the 2 of 64 CPUs", rep.Bound.UnplaceablePods)
	}
	for _, p := range rep.Policies {
		if p.PodsStarted != 1 || p.PodsNeverStarted != 2 || p.PodsUnplaceable != 2 {
			t.Errorf("%s: %d pods started, %d never, %d of them unplaceable; want 1, 2, 2", p.Policy, p.PodsStarted, p.PodsNeverStarted, p.PodsUnplaceable)
		}
		// The job of 1 hour ends at 1 h; a policy that keeps its idle node past that (the
		// node-groups baseline waits 10 minutes) ends at most an hour after.
		if p.EndHours < 1 || p.EndHours > 2.2 {
			t.Errorf("%s: the replay ended at %.2f h; want it to end between 1 and 2.2 h, the trace being 1 h", p.Policy, p.EndHours)
		}
	}
}

// Pods that an instance type holds but the NodePool's limits never let it buy stay pending
// with nothing left to change that: the replay ends, and reports them as held back, not as
// unplaceable.
func TestAReplayEndsWhenLimitsHoldThePodsLeft(t *testing.T) {
	yaml := strings.Replace(poolYAML("m5.large"), "  disruption:", "  limits: {cpu: \"1\"}\n  disruption:", 1)
	env := traceEnv(t, parseSet(t, yaml), "0,3600,3,1000,1024,0,\n")
	rep := simulate(t, env, exact())
	for _, p := range rep.Policies {
		if p.PodsNeverStarted != 3 || p.PodsUnplaceable != 0 {
			t.Errorf("%s: %d pods never started, %d unplaceable; want 3 held back by limits, 0 unplaceable", p.Policy, p.PodsNeverStarted, p.PodsUnplaceable)
		}
		if p.EndHours > 0.01 {
			t.Errorf("%s: the replay ended at %.2f h; with no node to buy and none up it is over at once", p.Policy, p.EndHours)
		}
	}
}

// A replay stopped by its context (a timeout, an interrupt) stops where it is, and its result,
// marked incomplete, covers the virtual time it reached.
func TestAStoppedReplayIsMarkedIncomplete(t *testing.T) {
	env := philly(t, 2000)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := SimulateContext(ctx, env, "test", PolicyNames, phillyOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Incomplete {
		t.Error("the report of a stopped replay is not marked incomplete")
	}
	full := simulate(t, env, phillyOptions(), PolicyTenon)
	for _, p := range rep.Policies {
		if !p.Incomplete || p.EndHours >= full.Policies[0].EndHours {
			t.Errorf("%s: incomplete %v, ended at %.1f h (the whole replay ends at %.1f h)", p.Policy, p.Incomplete, p.EndHours, full.Policies[0].EndHours)
		}
	}
	if full.Incomplete || full.Policies[0].Incomplete {
		t.Error("a replay that ran to its end is marked incomplete")
	}
}

// With finite spot capacity, a spot offering sells no more than its pool: here one m5.large
// (8 vCPUs for the lowest bucket, halved twice for m5's 10–15% bucket, over 2 vCPUs), so of
// three pods that each need a node of their own, one runs on spot and two on on-demand, at
// once, under every policy, and no disruption command is cancelled for a replacement that
// could not launch. With unlimited spot all three run on spot.
func TestFiniteSpotCapacityFallsBackToOnDemand(t *testing.T) {
	set := parseSet(t, strings.Replace(poolYAML("m5.large"), "values: [on-demand]", "values: [spot, on-demand]", 1))
	env := traceEnv(t, set, "0,3600,3,1500,1024,0,\n")
	if pools := spotPools(env, "test", 8); len(pools) != 1 || pools[0].Capacity != 1 {
		t.Fatalf("spot pools %+v; want one of capacity 1", pools)
	}
	for _, tc := range []struct {
		mode       SpotCapacityMode
		spot, onDm int
	}{{SpotCapacityAdvisor, 1, 2}, {SpotCapacityUnlimited, 3, 0}} {
		opts := exact()
		opts.SpotCapacity, opts.SpotCapacityVCPUs = tc.mode, 8
		for _, p := range simulate(t, env, opts).Policies {
			spot, onDm := 0, 0
			for _, u := range p.TypeMix {
				switch u.CapacityType {
				case "spot":
					spot += u.Nodes
				case "on-demand":
					onDm += u.Nodes
				}
			}
			if spot != tc.spot || onDm != tc.onDm || p.PodsStarted != 3 || p.Stats.Cancelled != 0 {
				t.Errorf("%s, %s: %d spot and %d on-demand nodes, %d pods started, %d commands cancelled; want %d, %d, 3 and 0",
					tc.mode, p.Policy, spot, onDm, p.PodsStarted, p.Stats.Cancelled, tc.spot, tc.onDm)
			}
		}
	}
}

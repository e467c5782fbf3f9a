package chaos

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/lifecycle"
)

// limits draws the simulated cloud's capacity: per zone, one of the general pool's families
// (c5, m5) is limited to 0–3 instances; in one zone both are, to 1–2 together (the spread
// Deployment's claims pinned there may run out); r5, the memory pool's only family, has no
// capacity in any zone (a shortage: every launch of the memory pool fails for capacity); and six
// single offerings (type and zone) are limited to 0–2. The memory pods do not run until the
// limits are lifted.
func limits(rng *rand.Rand, zones []string) []simv1alpha1.CapacityPool {
	var pools []simv1alpha1.CapacityPool
	family := func(f, zone string, capacity int32) simv1alpha1.CapacityPool {
		return simv1alpha1.CapacityPool{Zone: zone, Capacity: capacity, Requirements: []simv1alpha1.Requirement{
			{Key: apisv1.LabelInstanceFamily, Operator: corev1.NodeSelectorOpIn, Values: []string{f}}}}
	}
	for _, z := range zones {
		pools = append(pools, family([]string{"c5", "m5"}[rng.IntN(2)], z, int32(rng.IntN(4))))
	}
	for _, z := range zones {
		pools = append(pools, family("r5", z, 0))
	}
	general := family("c5", zones[rng.IntN(len(zones))], int32(1+rng.IntN(2)))
	general.Requirements[0].Values = []string{"c5", "m5"}
	pools = append(pools, general)
	sizes := []string{"large", "xlarge", "2xlarge", "4xlarge"}
	for range 6 {
		t := []string{"c5", "m5", "r5"}[rng.IntN(3)] + "." + sizes[rng.IntN(len(sizes))]
		pools = append(pools, simv1alpha1.CapacityPool{InstanceType: t, Zone: zones[rng.IntN(len(zones))], Capacity: int32(rng.IntN(3))})
	}
	return pools
}

// limited reports whether a capacity pool selects the offering type/zone.
func limited(pools []simv1alpha1.CapacityPool, typ, zone string) bool {
	for _, p := range pools {
		if p.Zone != "" && p.Zone != zone {
			continue
		}
		if p.InstanceType != "" && p.InstanceType != typ {
			continue
		}
		ok := true
		for _, r := range p.Requirements {
			if r.Key == apisv1.LabelInstanceFamily && !slices.Contains(r.Values, strings.SplitN(typ, ".", 2)[0]) {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// The simulated cloud runs out of capacity in seeded offerings (capacity pools), and a seeded
// fraction of its API calls (every write of a SimInstance: launch, status, terminate) fail:
// throttled, 500, or lost after they took effect. Through a scale-up and a scale-down under
// those faults, then the capacity limits lifted (as a cloud's shortage passes) and a final run
// without faults (the controller restarted, which forgets its unavailable offerings, as
// Karpenter's in-memory cache does), the invariants of TestKillAtRandom hold, and no offering
// is marked unavailable but for a capacity error: every InsufficientCapacity event (the
// lifecycle controller's record of each offering it marks) names only offerings a capacity pool
// limits, while launches failed by the injected errors are recorded as LaunchFailed. (The
// simulated cloud reports a full offering as unavailable in GetInstanceTypes, so the solver
// rarely launches into one: a mark needs a launch racing another for the last instance, and a run
// may make none; the injected faults always show up.)
func TestCloudFaults(t *testing.T) {
	s := seed(t)
	began := time.Now()
	rng := rand.New(rand.NewPCG(uint64(s), 0x666175))
	pods := max(*flagPods*3/5, 20)
	c := newCluster(t)
	proxy := startFaultProxy(t, c.cp.RESTConfig(), *flagFault, s)
	ctl := newController(t, proxy.kubeconfig(t))
	nc := nodeClass()
	pools := limits(rng, nc.Spec.Zones)
	nc.Spec.CapacityPools = pools
	c.install(nc, pods)
	w := c.watch()
	ctl.start()

	up := replicas(pods, 1)
	time.Sleep(30 * time.Second) // the scale-up under faults and shortages
	t.Logf("after the scale-up under faults: %s", c.stateLine(total(up)))
	down := replicas(pods, 0.3)
	c.scale(down)
	time.Sleep(15 * time.Second) // the scale-down and consolidation under faults
	t.Logf("after the scale-down under faults: %s", c.stateLine(total(down)))
	ice, _ := ctl.metric("tenon_nodeclaims_launch_failures_total", `reason="insufficient_capacity"`)
	failed, _ := ctl.metric("tenon_nodeclaims_launch_failures_total", `reason="error"`)
	proxy.stop()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var cur simv1alpha1.SimNodeClass
		if err := c.kube.Get(c.ctx, client.ObjectKey{Name: nc.Name}, &cur); err != nil {
			return err
		}
		cur.Spec.CapacityPools = nil
		return c.kube.Update(c.ctx, &cur)
	})
	if err != nil {
		t.Fatalf("lifting the capacity limits: %v", err)
	}
	ctl.kill()
	ctl.start()
	c.converge(total(down), 15*time.Second, 8*time.Minute)
	insts, claims := c.final(t, w)

	var events corev1.EventList
	if err := c.kube.List(c.ctx, &events); err != nil {
		t.Fatal(err)
	}
	marked, launchFailed := 0, 0
	for _, ev := range events.Items {
		switch ev.Reason {
		case lifecycle.ReasonLaunchFailed:
			launchFailed += int(ev.Count)
		case lifecycle.ReasonInsufficientCapacity:
			offerings, err := markedOfferings(ev.Message)
			if err != nil {
				t.Errorf("event %s: %v", ev.Name, err)
				continue
			}
			for _, o := range offerings {
				parts := strings.Split(o, "/")
				marked++
				if !limited(pools, parts[0], parts[1]) {
					t.Errorf("offering %s marked unavailable, but no capacity pool limits it: event %q", o, ev.Message)
				}
			}
		}
	}
	calls, injected, by := proxy.summary()
	if injected == 0 {
		t.Errorf("no fault was injected in %d cloud calls", calls)
	}
	if crashed := ctl.crashed(); len(crashed) > 0 {
		t.Errorf("the controller exited by itself: %v", crashed)
	}
	r := w.report()
	t.Logf("chaos faults: seed %d, %d pods up then %d; %d capacity pools; cloud calls %d, faults injected %d (%s)",
		s, total(up), total(down), len(pools), calls, injected, by)
	t.Logf("chaos faults: launch failures (metric) %v insufficient_capacity, %v error; events: %d LaunchFailed, %d offerings marked unavailable (all capacity-pool limited)",
		ice, failed, launchFailed, marked)
	t.Logf("chaos faults: invariant checks %d samples (%d failed reads), peak %d nodes; end: %d instances, %d NodeClaims; duration %v",
		r.samples, r.failed, r.peakNodes, insts, claims, time.Since(began).Round(time.Second))
}

func (c *cluster) stateLine(want int) string {
	_, s := c.state(want)
	return s
}

// markedOfferings reads the TYPE/ZONE/CAPACITY-TYPE offerings an InsufficientCapacity event
// names ("NodeClaim X: insufficient capacity for c5.large/us-east-1b/on-demand, ...; marking N
// offerings unavailable ..."; the NodeClaim prefix may be absent).
func markedOfferings(message string) ([]string, error) {
	_, list, found := strings.Cut(message, "insufficient capacity for ")
	if !found {
		return nil, fmt.Errorf("cannot read %q", message)
	}
	list, _, _ = strings.Cut(list, ";")
	var out []string
	for _, o := range strings.Split(list, ", ") {
		if len(strings.Split(o, "/")) != 3 {
			return nil, fmt.Errorf("cannot read offering %q in %q", o, message)
		}
		out = append(out, o)
	}
	return out, nil
}

// The lifecycle controller's InsufficientCapacity event names its NodeClaim first; the
// offerings after it are what the checks read.
func TestMarkedOfferingsReadsTheLifecycleEvent(t *testing.T) {
	got, err := markedOfferings("NodeClaim general-k9fv8: insufficient capacity for c5.large/us-east-1b/on-demand, c5.large/us-east-1c/on-demand; marking 2 offerings unavailable for 3m0s and deleting the NodeClaim")
	if err != nil || strings.Join(got, " ") != "c5.large/us-east-1b/on-demand c5.large/us-east-1c/on-demand" {
		t.Errorf("got %v, %v", got, err)
	}
	if _, err := markedOfferings("insufficient capacity for c5.large; marking"); err == nil {
		t.Error("an offering without zone and capacity type was read")
	}
}

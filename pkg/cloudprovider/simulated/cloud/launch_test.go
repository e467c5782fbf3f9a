package cloud

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

func TestLaunchChoosesCheapestCompatibleOffering(t *testing.T) {
	for _, tc := range []struct {
		name string
		reqs []scheduling.Requirement
		at   time.Time
		want string
	}{
		{"anything: the open reservation is cheapest", nil, t0, "m.small/test-1a/reserved/cr-open"},
		{"no reserved: spot", []scheduling.Requirement{capacityTypes("spot", "on-demand")}, t0, "m.small/test-1a/spot/"},
		{"on demand: zone a is cheaper", []scheduling.Requirement{onDemand()}, t0, "m.small/test-1a/on-demand/"},
		{"on demand in zone b", []scheduling.Requirement{onDemand(), zones("test-1b")}, t0, "m.small/test-1b/on-demand/"},
		{"bigger types only", []scheduling.Requirement{types("m.large", "m.xlarge"), capacityTypes("spot")}, t0, "m.large/test-1a/spot/"},
		{"by zone ID", []scheduling.Requirement{scheduling.In(apisv1.LabelTopologyZoneID, "tst1-az2"), capacityTypes("spot")}, t0, "m.small/test-1b/spot/"},
		{"gpu spot exists in zone a only", []scheduling.Requirement{scheduling.Exists(apisv1.LabelInstanceGPUName), capacityTypes("spot")}, t0, "g.large/test-1a/spot/"},
		{"gpu reserved inside the block's window", []scheduling.Requirement{types("g.large")}, t0.Add(2 * time.Hour), "g.large/test-1b/reserved/cb-gpu"},
		{"gpu before the block: spot", []scheduling.Requirement{types("g.large")}, t0, "g.large/test-1a/spot/"},
		{"targeted reservation when named", []scheduling.Requirement{scheduling.In(apisv1.LabelCapacityReservationID, "cr-targeted")}, t0, "m.small/test-1b/reserved/cr-targeted"},
		{"no reservation at all", []scheduling.Requirement{scheduling.DoesNotExist(apisv1.LabelCapacityReservationID)}, t0, "m.small/test-1a/spot/"},
		{"by instance size label", []scheduling.Requirement{scheduling.In(apisv1.LabelInstanceSize, "xlarge"), onDemand()}, t0, "m.xlarge/test-1a/on-demand/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCloud(t, testConfig(t))
			if got := offeringOf(launch(t, c, tc.at, tc.reqs...)); got != tc.want {
				t.Errorf("launched %s, want %s", got, tc.want)
			}
		})
	}
}

func TestLaunchHonoursRequests(t *testing.T) {
	c := newTestCloud(t, testConfig(t))
	requests := scheduling.Resources{}
	requests[scheduling.CPU] = 3000
	inst, err := c.Launch(LaunchRequest{Class: "default", Requirements: reqs(onDemand()), Requests: requests}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if inst.Type.Name != "m.large" {
		t.Errorf("3 CPUs launched %s, want m.large", inst.Type.Name)
	}
}

func TestTargetedReservationNeedsItsID(t *testing.T) {
	c := newTestCloud(t, testConfig(t))
	_, err := c.Launch(LaunchRequest{Class: "default", Requirements: reqs(zones("test-1b"), capacityTypes("reserved"), types("m.small"))}, t0)
	if !errors.Is(err, ErrNoCompatibleOffering) {
		t.Errorf("reserved m.small in zone b without naming cr-targeted: got %v, want ErrNoCompatibleOffering", err)
	}
	named := scheduling.In(apisv1.LabelCapacityReservationID, "cr-targeted", "cr-other")
	if got := offeringOf(launch(t, c, t0, named)); got != "m.small/test-1b/reserved/cr-targeted" {
		t.Errorf("naming it launched %s", got)
	}
	// NotIn names nothing: the targeted reservation stays out, and the capacity block is not
	// open yet, so the only compatible offering is full.
	notIn := scheduling.NotIn(apisv1.LabelCapacityReservationID, "cr-open")
	_, err = c.Launch(LaunchRequest{Class: "default", Requirements: reqs(notIn, capacityTypes("reserved"))}, t0)
	var ice *cloudprovider.InsufficientCapacityError
	if !errors.As(err, &ice) || fmt.Sprint(ice.Offerings) != "[g.large/test-1b/reserved]" {
		t.Errorf("reserved NotIn [cr-open]: got %v, want insufficient capacity for g.large/test-1b/reserved", err)
	}
}

// TestPoolExhaustionFallsBackThenFails, with the pool selecting by requirements and by an
// offering's key, which must behave the same.
func TestPoolExhaustionFallsBackThenFails(t *testing.T) {
	for name, pool := range map[string]Pool{
		"matched": {Match: reqs(types("m.small"), zones("test-1a"), capacityTypes("spot")), Capacity: 2},
		"keyed":   {Offering: &OfferingKey{InstanceType: "m.small", Zone: "test-1a", CapacityType: "spot"}, Capacity: 2},
	} {
		t.Run(name, func(t *testing.T) { testPoolExhaustion(t, pool) })
	}
}

func testPoolExhaustion(t *testing.T, pool Pool) {
	cfg := testConfig(t)
	cfg.Pools = []Pool{pool}
	c := newTestCloud(t, cfg)
	spotA := []scheduling.Requirement{types("m.small"), capacityTypes("spot")}
	var got []string
	for range 4 {
		got = append(got, offeringOf(launch(t, c, t0, spotA...)))
	}
	want := "m.small/test-1a/spot/ m.small/test-1a/spot/ m.small/test-1b/spot/ m.small/test-1b/spot/"
	if strings.Join(got, " ") != want {
		t.Errorf("launches: %s\nwant %s", strings.Join(got, " "), want)
	}
	_, err := c.Launch(LaunchRequest{Class: "default", Requirements: reqs(types("m.small"), capacityTypes("spot"), zones("test-1a"))}, t0)
	var ice *cloudprovider.InsufficientCapacityError
	if !errors.As(err, &ice) || fmt.Sprint(ice.Offerings) != "[m.small/test-1a/spot]" {
		t.Fatalf("full pool: got %v, want insufficient capacity for m.small/test-1a/spot", err)
	}
	first := c.Instances()[0]
	for _, inst := range c.Instances() {
		if inst.Offering.Zone == "test-1a" {
			first = inst
			break
		}
	}
	if err := c.Terminate(first.ID, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := offeringOf(launch(t, c, t0.Add(time.Minute), types("m.small"), capacityTypes("spot"), zones("test-1a"))); got != "m.small/test-1a/spot/" {
		t.Errorf("after a termination freed the pool, launched %s", got)
	}
}

func TestInsufficientCapacityNamesEveryOfferingTried(t *testing.T) {
	cfg := testConfig(t)
	cfg.Pools = []Pool{{Match: reqs(scheduling.In(apisv1.LabelInstanceFamily, "m")), Capacity: 0}}
	c := newTestCloud(t, cfg)
	_, err := c.Launch(LaunchRequest{Class: "default", Requirements: reqs(types("m.small", "m.large"), capacityTypes("spot", "on-demand"))}, t0)
	var ice *cloudprovider.InsufficientCapacityError
	if !errors.As(err, &ice) {
		t.Fatalf("got %v, want InsufficientCapacityError", err)
	}
	want := "[m.small/test-1a/spot m.small/test-1b/spot m.large/test-1a/spot m.large/test-1b/spot m.small/test-1a/on-demand m.small/test-1b/on-demand m.large/test-1a/on-demand m.large/test-1b/on-demand]"
	if got := fmt.Sprint(ice.Offerings); got != want {
		t.Errorf("offerings tried:\n got %s\nwant %s", got, want)
	}
	if !cloudprovider.IsInsufficientCapacity(err) {
		t.Error("IsInsufficientCapacity is false")
	}
}

func TestReservationCountedDownAndFreed(t *testing.T) {
	c := newTestCloud(t, testConfig(t))
	open := []scheduling.Requirement{scheduling.In(apisv1.LabelCapacityReservationID, "cr-open")}
	a, b := launch(t, c, t0, open...), launch(t, c, t0, open...)
	if _, err := c.Launch(LaunchRequest{Class: "default", Requirements: reqs(open...)}, t0); !cloudprovider.IsInsufficientCapacity(err) {
		t.Fatalf("third launch into a reservation of 2: %v", err)
	}
	types, _ := c.InstanceTypes("default", t0)
	if o := findOffering(types, "m.small", "cr-open"); o.Available || o.ReservationCapacity != 0 {
		t.Errorf("full reservation shows available=%v capacity=%d", o.Available, o.ReservationCapacity)
	}
	if err := c.Terminate(a.ID, t0); err != nil {
		t.Fatal(err)
	}
	types, _ = c.InstanceTypes("default", t0)
	if o := findOffering(types, "m.small", "cr-open"); !o.Available || o.ReservationCapacity != 1 {
		t.Errorf("after one termination: available=%v capacity=%d", o.Available, o.ReservationCapacity)
	}
	if got := offeringOf(launch(t, c, t0, open...)); got != "m.small/test-1a/reserved/cr-open" || b.ID == "" {
		t.Errorf("relaunch got %s", got)
	}
}

func TestCapacityBlockOnlyInsideItsWindow(t *testing.T) {
	block := []scheduling.Requirement{scheduling.In(apisv1.LabelCapacityReservationID, "cb-gpu")}
	for _, tc := range []struct {
		at time.Time
		ok bool
	}{
		{t0, false},
		{t0.Add(time.Hour - time.Nanosecond), false},
		{t0.Add(time.Hour), true},
		{t0.Add(3*time.Hour - time.Nanosecond), true},
		{t0.Add(3 * time.Hour), false},
	} {
		c := newTestCloud(t, testConfig(t))
		_, err := c.Launch(LaunchRequest{Class: "default", Requirements: reqs(block...)}, tc.at)
		if (err == nil) != tc.ok || (err != nil && !cloudprovider.IsInsufficientCapacity(err)) {
			t.Errorf("at t0+%v: err %v, want ok=%v (else insufficient capacity)", tc.at.Sub(t0), err, tc.ok)
		}
		types, _ := c.InstanceTypes("default", tc.at)
		if o := findOffering(types, "g.large", "cb-gpu"); o.Available != (tc.ok && o.ReservationCapacity > 0) {
			t.Errorf("at t0+%v the block's offering shows available=%v", tc.at.Sub(t0), o.Available)
		}
	}
}

func TestCapacityBlockInstancesRetiredAtItsEnd(t *testing.T) {
	c := newTestCloud(t, testConfig(t))
	inst := launch(t, c, t0.Add(2*time.Hour+55*time.Minute), scheduling.In(apisv1.LabelCapacityReservationID, "cb-gpu"))
	end := t0.Add(3 * time.Hour)
	evs := c.Advance(end)
	var notice, stopped *Event
	for i := range evs {
		e := &evs[i]
		if e.Kind == EventMessage && e.Message.Kind == cloudprovider.ScheduledMaintenance {
			notice = e
		}
		if e.Kind == EventMessage && e.Message.Kind == cloudprovider.InstanceStopped {
			stopped = e
		}
	}
	if notice == nil || !notice.At.Equal(inst.Launched) || !notice.Message.Deadline.Equal(end) {
		t.Errorf("notice %v, want one at launch (the block ends in 5m, the notice is 10m) for %v", notice, end)
	}
	if stopped == nil || !stopped.At.Equal(end) {
		t.Errorf("stop message %v, want one at %v", stopped, end)
	}
	got, _ := c.Instance(inst.ID)
	if got.State != Terminated || got.Reason != ReasonCapacityBlockExpired {
		t.Errorf("at the block's end the instance is %s (%s)", got.State, got.Reason)
	}
}

func TestLaunchErrors(t *testing.T) {
	c := newTestCloud(t, testConfig(t))
	if _, err := c.Launch(LaunchRequest{Class: "nope"}, t0); !errors.Is(err, ErrUnknownClass) {
		t.Errorf("unknown class: %v", err)
	}
	_, err := c.Launch(LaunchRequest{Class: "default", Requirements: reqs(types("m.small"), scheduling.In(apisv1.LabelArch, "arm64"))}, t0)
	if !errors.Is(err, ErrNoCompatibleOffering) || cloudprovider.IsInsufficientCapacity(err) {
		t.Errorf("nothing compatible: %v", err)
	}
	huge := scheduling.Resources{}
	huge[scheduling.CPU] = 64000
	if _, err := c.Launch(LaunchRequest{Class: "default", Requests: huge}, t0); !errors.Is(err, ErrNoCompatibleOffering) {
		t.Errorf("requests no type holds: %v", err)
	}
}

func TestLaunchIsIdempotentPerClaim(t *testing.T) {
	c := newTestCloud(t, testConfig(t))
	a, err := c.Launch(LaunchRequest{Class: "default", NodeClaim: "claim-1"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Launch(LaunchRequest{Class: "default", NodeClaim: "claim-1", Requirements: reqs(onDemand())}, t0.Add(time.Second))
	if err != nil || b.ID != a.ID || len(c.Instances()) != 1 {
		t.Fatalf("second launch for the claim: %v, %s vs %s, %d instances", err, b.ID, a.ID, len(c.Instances()))
	}
	if err := c.Terminate(a.ID, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	d, err := c.Launch(LaunchRequest{Class: "default", NodeClaim: "claim-1"}, t0.Add(2*time.Minute))
	if err != nil || d.ID == a.ID {
		t.Errorf("a claim whose instance terminated got %s again (%v)", d.ID, err)
	}
}

func findOffering(types []*catalog.InstanceType, name, reservation string) catalog.Offering {
	for _, it := range types {
		if it.Name != name {
			continue
		}
		for _, o := range it.Offerings {
			if o.ReservationID == reservation {
				return o
			}
		}
	}
	return catalog.Offering{}
}

func TestRemoveUndoesALaunch(t *testing.T) {
	cfg := testConfig(t)
	cfg.Pools = []Pool{{Match: reqs(types("m.small")), Capacity: 1}}
	c := newTestCloud(t, cfg)
	only := []scheduling.Requirement{types("m.small"), zones("test-1a"), onDemand()}
	inst, err := c.Launch(LaunchRequest{Class: "default", NodeClaim: "a", Requirements: reqs(only...)}, t0)
	if err != nil {
		t.Fatal(err)
	}
	c.Remove(inst.ID)
	if _, ok := c.ForClaim("a"); ok || len(c.Instances()) != 0 {
		t.Error("removed instance still known")
	}
	if evs := c.Advance(t0.Add(time.Hour)); len(evs) != 0 {
		t.Errorf("a removed instance had events: %v", evs)
	}
	launch(t, c, t0, only...)
}

func TestLaunchAvoidsOfferings(t *testing.T) {
	c := newTestCloud(t, testConfig(t))
	avoided := map[cloudprovider.Offering]bool{{InstanceType: "m.small", Zone: "test-1a", CapacityType: "spot"}: true}
	avoid := func(o cloudprovider.Offering) bool { return avoided[o] }
	spot := reqs(types("m.small"), capacityTypes("spot"))
	inst, err := c.Launch(LaunchRequest{Class: "default", Requirements: spot, Avoid: avoid}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got := offeringOf(inst); got != "m.small/test-1b/spot/" {
		t.Errorf("with m.small/test-1a/spot avoided, launched %s, want the next cheapest m.small/test-1b/spot", got)
	}
	avoided[cloudprovider.Offering{InstanceType: "m.small", Zone: "test-1b", CapacityType: "spot"}] = true
	_, err = c.Launch(LaunchRequest{Class: "default", Requirements: spot, Avoid: avoid}, t0)
	var ice *cloudprovider.InsufficientCapacityError
	if !errors.As(err, &ice) || fmt.Sprint(ice.Offerings) != "[m.small/test-1a/spot m.small/test-1b/spot]" {
		t.Errorf("every compatible offering avoided: got %v, want insufficient capacity naming both", err)
	}
}

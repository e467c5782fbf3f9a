package cloud

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// timeline renders events as "+offset kind" lines relative to t0, messages with their kind and
// deadline.
func timeline(evs []Event) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString("+" + e.At.Sub(t0).String() + " " + e.Kind.String())
		if e.Kind == EventMessage {
			b.WriteString(" " + string(e.Message.Kind))
			if !e.Message.Deadline.IsZero() {
				b.WriteString(" deadline +" + e.Message.Deadline.Sub(t0).String())
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestLifecycleEvents(t *testing.T) {
	cfg := testConfig(t)
	cfg.Delays.Shutdown = 30 * time.Second
	c := newTestCloud(t, cfg)
	cpu := launch(t, c, t0, types("m.small"), onDemand())
	gpu := launch(t, c, t0, types("g.large"), onDemand())
	if cpu.State != Pending || !cpu.RunningAt.Equal(t0.Add(2*time.Second)) || !cpu.RegisteredAt.Equal(t0.Add(3*time.Second)) || !cpu.DevicesAt.IsZero() {
		t.Errorf("cpu instance times: %+v", cpu)
	}
	if !gpu.DevicesAt.Equal(t0.Add(6 * time.Second)) {
		t.Errorf("gpu devices at %v", gpu.DevicesAt)
	}
	if evs := c.Advance(t0.Add(time.Second)); len(evs) != 0 {
		t.Errorf("events before boot: %v", evs)
	}
	got := timeline(c.Advance(t0.Add(10 * time.Second)))
	want := "+2s Running\n+2s Running\n+3s Registered\n+3s Registered\n+6s DevicesReady\n"
	if got != want {
		t.Errorf("events:\n%s\nwant\n%s", got, want)
	}
	if err := c.Terminate(cpu.ID, t0.Add(20*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := c.Terminate(cpu.ID, t0.Add(25*time.Second)); err != nil {
		t.Errorf("second Terminate while shutting down: %v", err)
	}
	if inst, _ := c.Instance(cpu.ID); inst.State != Terminating {
		t.Errorf("state during shutdown: %s", inst.State)
	}
	got = timeline(c.Advance(t0.Add(time.Minute)))
	if want := "+20s Terminating\n+50s Terminated\n"; got != want {
		t.Errorf("termination events:\n%s\nwant\n%s", got, want)
	}
	if err := c.Terminate(cpu.ID, t0.Add(time.Minute)); !errors.Is(err, ErrNotFound) {
		t.Errorf("Terminate of a terminated instance: %v", err)
	}
	if err := c.Forget(gpu.ID); err == nil {
		t.Error("Forget of a running instance succeeded")
	}
	if err := c.Forget(cpu.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Instance(cpu.ID); ok || len(c.Instances()) != 1 {
		t.Error("forgotten instance still listed")
	}
}

func TestInjectedSpotInterruption(t *testing.T) {
	c := newTestCloud(t, testConfig(t))
	inst := launch(t, c, t0, capacityTypes("spot"))
	at := t0.Add(time.Hour)
	if err := c.Inject(inst.ID, cloudprovider.SpotInterruption, at); err != nil {
		t.Fatal(err)
	}
	c.Advance(at.Add(-time.Nanosecond))
	got := timeline(c.Advance(at.Add(time.Hour)))
	want := "+1h0m0s Message SpotInterruption deadline +1h2m0s\n+1h2m0s Terminating\n+1h2m0s Message InstanceStopped\n+1h2m0s Terminated\n"
	if got != want {
		t.Errorf("events:\n%s\nwant\n%s", got, want)
	}
	if i, _ := c.Instance(inst.ID); i.Reason != ReasonSpotInterruption || !i.Interruption.Injected {
		t.Errorf("reason %s, interruption %+v", i.Reason, i.Interruption)
	}
	od := launch(t, c, t0.Add(2*time.Hour), onDemand())
	if err := c.Inject(od.ID, cloudprovider.SpotInterruption, t0.Add(3*time.Hour)); err == nil {
		t.Error("a spot interruption of an on-demand instance was accepted")
	}
	if err := c.Inject(od.ID, cloudprovider.ScheduledMaintenance, t0.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := c.Inject(od.ID, cloudprovider.RebalanceRecommendation, t0.Add(150*time.Minute)); err != nil {
		t.Fatal(err)
	}
	got = timeline(c.Advance(t0.Add(4 * time.Hour)))
	want = "+2h30m0s Message RebalanceRecommendation\n+3h0m0s Message ScheduledMaintenance deadline +3h10m0s\n" +
		"+3h10m0s Terminating\n+3h10m0s Message InstanceStopped\n+3h10m0s Terminated\n"
	if !strings.HasSuffix(got, want) {
		t.Errorf("events:\n%s\nwant them to end with\n%s", got, want)
	}
	if err := c.Inject(od.ID, cloudprovider.InstanceStopped, t0.Add(5*time.Hour)); !errors.Is(err, ErrNotFound) {
		t.Errorf("interrupting a terminated instance: %v", err)
	}
}

func TestInjectRefusedAfterNotice(t *testing.T) {
	c := newTestCloud(t, testConfig(t))
	inst := launch(t, c, t0, capacityTypes("spot"))
	if err := c.Inject(inst.ID, cloudprovider.SpotInterruption, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	c.Advance(t0.Add(time.Minute))
	if err := c.Inject(inst.ID, cloudprovider.SpotInterruption, t0.Add(time.Hour)); err == nil {
		t.Error("a second interruption after the first's notice was accepted")
	}
}

func TestInstanceStoppedHasNoNotice(t *testing.T) {
	c := newTestCloud(t, testConfig(t))
	inst := launch(t, c, t0, onDemand())
	if err := c.Inject(inst.ID, cloudprovider.InstanceStopped, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	got := timeline(c.Advance(t0.Add(2 * time.Hour)))
	want := "+2s Running\n+3s Registered\n+1h0m0s Terminating\n+1h0m0s Message InstanceStopped\n+1h0m0s Terminated\n"
	if got != want {
		t.Errorf("events:\n%s\nwant\n%s", got, want)
	}
}

func TestAdvisorInterruptionsAndRebalance(t *testing.T) {
	cfg := testConfig(t)
	cfg.Interruptions.Spot = SpotAdvisor
	cfg.Interruptions.Seed = 42
	cfg.Interruptions.Scale = 1000 // months become hours
	c := newTestCloud(t, cfg)
	var ids []string
	for range 20 {
		ids = append(ids, launch(t, c, t0, types("m.xlarge"), capacityTypes("spot")).ID)
	}
	od := launch(t, c, t0, types("m.xlarge"), onDemand())
	if !od.Interruption.IsZero() {
		t.Errorf("an on-demand instance has a planned interruption %+v", od.Interruption)
	}
	evs := c.Advance(t0.Add(30 * 24 * time.Hour))
	notices, rebalances, stopped := map[string]Event{}, map[string]Event{}, map[string]bool{}
	for _, e := range evs {
		switch {
		case e.Kind == EventMessage && e.Message.Kind == cloudprovider.SpotInterruption:
			notices[e.Instance] = e
		case e.Kind == EventMessage && e.Message.Kind == cloudprovider.RebalanceRecommendation:
			rebalances[e.Instance] = e
		case e.Kind == EventTerminated:
			stopped[e.Instance] = true
		}
	}
	for _, id := range ids {
		n, ok := notices[id]
		if !ok {
			t.Errorf("%s: no interruption within 30 days at 1000× bucket 4", id)
			continue
		}
		inst, _ := c.Instance(id)
		if !n.Message.Deadline.Equal(n.At.Add(SpotNotice)) || !stopped[id] || !inst.TerminatingAt.Equal(n.Message.Deadline) {
			t.Errorf("%s: notice at %v deadline %v, terminating at %v", id, n.At, n.Message.Deadline, inst.TerminatingAt)
		}
		r, ok := rebalances[id]
		want := n.At.Add(-5 * time.Minute)
		if want.Before(t0) {
			want = t0
		}
		if !ok || !r.At.Equal(want) {
			t.Errorf("%s: rebalance %v, want at %v", id, r.At, want)
		}
		if n.Message.ProviderID != inst.ProviderID() || n.Message.ID == r.Message.ID {
			t.Errorf("%s: message provider ID %s, IDs %s and %s", id, n.Message.ProviderID, n.Message.ID, r.Message.ID)
		}
	}
	if stopped[od.ID] {
		t.Error("the on-demand instance was interrupted")
	}
}

func TestSpotInterruptionRate(t *testing.T) {
	for bucket, p := range []float64{0.025, 0.075, 0.125, 0.175, 0.25} {
		rate := SpotInterruptionRate(catalog.SpotAdvice{Known: true, Bucket: bucket})
		// The probability of surviving 720 hours at this rate is 1 − p.
		if got := 1 - math.Exp(-rate*720); math.Abs(got-p) > 1e-12 {
			t.Errorf("bucket %d: monthly probability %v, want %v", bucket, got, p)
		}
	}
	if SpotInterruptionRate(catalog.SpotAdvice{}) != SpotInterruptionRate(catalog.SpotAdvice{Known: true, Bucket: 2}) {
		t.Error("an unknown type does not get bucket 2's rate")
	}
	// The draws follow the rate: over many instances the mean time to the notice is 1/rate.
	rate := SpotInterruptionRate(catalog.SpotAdvice{Known: true, Bucket: 4})
	var sum float64
	const n = 20000
	for i := range n {
		d, ok := drawExp(7, "i-"+string(rune('a'+i%26))+strings.Repeat("x", i/26), "spot", rate)
		if !ok {
			t.Fatal("draw beyond the horizon")
		}
		sum += d.Hours()
	}
	if mean := sum / n; math.Abs(mean*rate-1) > 0.03 {
		t.Errorf("mean draw %.0fh, want about %.0fh", mean, 1/rate)
	}
}

func TestMaintenanceRetiresAnyInstance(t *testing.T) {
	cfg := testConfig(t)
	cfg.Interruptions.MaintenanceInterval = time.Hour
	c := newTestCloud(t, cfg)
	inst := launch(t, c, t0, onDemand())
	p := inst.Interruption
	if p.Kind != cloudprovider.ScheduledMaintenance || p.Reason != ReasonScheduledMaintenance || p.Deadline.Sub(p.Notice) != 10*time.Minute {
		t.Fatalf("planned %+v", p)
	}
	c.Advance(p.Deadline)
	if got, _ := c.Instance(inst.ID); got.State != Terminated || got.Reason != ReasonScheduledMaintenance {
		t.Errorf("after the deadline: %s %s", got.State, got.Reason)
	}
}

func TestProviderIDRoundTrip(t *testing.T) {
	id := ProviderID("us-east-1", "us-east-1a", "i-0123")
	if id != "sim://us-east-1/us-east-1a/i-0123" {
		t.Errorf("ProviderID = %s", id)
	}
	r, z, i, err := ParseProviderID(id)
	if err != nil || r != "us-east-1" || z != "us-east-1a" || i != "i-0123" {
		t.Errorf("ParseProviderID = %s %s %s %v", r, z, i, err)
	}
	for _, bad := range []string{"", "aws:///us-east-1a/i-1", "sim://a/b", "sim://a//c", "sim://a/b/c/d"} {
		if _, _, _, err := ParseProviderID(bad); err == nil {
			t.Errorf("ParseProviderID(%q) succeeded", bad)
		}
	}
}

func TestRestoreRebuildsScheduleAndUsage(t *testing.T) {
	cfg := testConfig(t)
	cfg.Interruptions.Spot, cfg.Interruptions.Seed, cfg.Interruptions.Scale = SpotAdvisor, 3, 100
	cfg.Pools = []Pool{{Match: reqs(types("m.small"), capacityTypes("spot")), Capacity: 2}}
	a := newTestCloud(t, cfg)
	spot := launch(t, a, t0, types("m.small"), capacityTypes("spot"))
	res := launch(t, a, t0, scheduling.In(apisv1.LabelCapacityReservationID, "cr-open"))
	gone := launch(t, a, t0, onDemand())
	if err := a.Terminate(gone.ID, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}

	b := New(Options{IDSeed: 2})
	if err := b.SetClass("default", cfg); err != nil {
		t.Fatal(err)
	}
	for _, inst := range a.Instances() {
		rec := Record{ID: inst.ID, Class: inst.Class, Region: inst.Region, Type: inst.Type, Offering: inst.Offering,
			Launched: inst.Launched, State: inst.State, TerminatingAt: inst.TerminatingAt, Reason: inst.Reason}
		if inst.ID == spot.ID {
			rec.Interruption = inst.Interruption // persisted: kept, and its rebalance recomputed
		}
		if err := b.Restore(rec); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := b.Instance(spot.ID)
	if got.Interruption != spot.Interruption || got.Interruption.IsZero() || !got.RegisteredAt.Equal(spot.RegisteredAt) ||
		got.RebalanceAt.IsZero() || !got.RebalanceAt.Equal(spot.RebalanceAt) {
		t.Errorf("restored plan %+v, want %+v", got.Interruption, spot.Interruption)
	}
	if g, _ := b.Instance(gone.ID); g.State != Terminated {
		t.Errorf("restored terminated instance is %s", g.State)
	}
	if got := offeringOf(launch(t, b, t0.Add(time.Minute), types("m.small"), capacityTypes("spot"), zones("test-1a", "test-1b"))); got != "m.small/test-1a/spot/" {
		t.Errorf("launch after restore: %s", got)
	}
	if _, err := b.Launch(LaunchRequest{Class: "default", Requirements: reqs(types("m.small"), capacityTypes("spot"))}, t0.Add(time.Minute)); !cloudprovider.IsInsufficientCapacity(err) {
		t.Errorf("the pool of 2 holds the restored instance and the new one, yet a third launch got %v", err)
	}
	types, _ := b.InstanceTypes("default", t0.Add(time.Minute))
	if o := findOffering(types, "m.small", "cr-open"); o.ReservationCapacity != 1 || res.Offering.ReservationID != "cr-open" {
		t.Errorf("restored reservation use: capacity left %d", o.ReservationCapacity)
	}
	if err := b.Restore(Record{ID: spot.ID, Class: "default", Type: spot.Type}); err == nil {
		t.Error("restoring a known instance again succeeded")
	}
	if err := b.Restore(Record{ID: "i-x", Class: "other", Type: spot.Type}); !errors.Is(err, ErrUnknownClass) {
		t.Errorf("restoring into an unknown class: %v", err)
	}
}

package cloudprovider_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	clocktesting "k8s.io/utils/clock/testing"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
)

func TestUnavailableOfferingsTTL(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	u := cloudprovider.NewUnavailableOfferings(clk)
	o := cloudprovider.Offering{InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: apisv1.CapacityTypeSpot}
	if u.IsUnavailable("m5.large", "us-east-1a", apisv1.CapacityTypeSpot) {
		t.Fatal("unavailable before any mark")
	}
	u.MarkUnavailable(o, "InsufficientCapacity", 3*time.Minute)
	if reason, ok := u.Reason("m5.large", "us-east-1a", apisv1.CapacityTypeSpot); !ok || reason != "InsufficientCapacity" {
		t.Errorf("after the mark: %q %v", reason, ok)
	}
	for _, other := range [][3]string{
		{"m5.large", "us-east-1b", apisv1.CapacityTypeSpot},
		{"m5.large", "us-east-1a", apisv1.CapacityTypeOnDemand},
		{"m5.xlarge", "us-east-1a", apisv1.CapacityTypeSpot},
	} {
		if u.IsUnavailable(other[0], other[1], other[2]) {
			t.Errorf("%v is unavailable too", other)
		}
	}
	clk.Step(2 * time.Minute)
	u.MarkUnavailable(o, "again", 3*time.Minute) // renews: 3 minutes from now
	clk.Step(2 * time.Minute)
	if !u.IsUnavailable("m5.large", "us-east-1a", apisv1.CapacityTypeSpot) {
		t.Error("the renewed mark expired with the first one")
	}
	clk.Step(time.Minute)
	if u.IsUnavailable("m5.large", "us-east-1a", apisv1.CapacityTypeSpot) {
		t.Error("still unavailable after the ttl")
	}
	u.MarkUnavailable(cloudprovider.Offering{InstanceType: "c5.large", Zone: "us-east-1a", CapacityType: apisv1.CapacityTypeSpot}, "x", time.Minute)
	if u.Len() != 1 {
		t.Errorf("expired marks are not dropped on write: %d left", u.Len())
	}
}

func TestUnavailableOfferingsApply(t *testing.T) {
	cat, err := catalog.Load("us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	m5, _ := cat.Get("m5.large")
	c5, _ := cat.Get("c5.large")
	types := []*catalog.InstanceType{c5, m5}
	clk := clocktesting.NewFakeClock(time.Now())
	u := cloudprovider.NewUnavailableOfferings(clk)
	if got := u.Apply(types); &got[0] != &types[0] {
		t.Error("Apply with nothing marked copied the slice")
	}
	zone := m5.Offerings[0].Zone
	u.MarkUnavailable(cloudprovider.Offering{InstanceType: "m5.large", Zone: zone, CapacityType: apisv1.CapacityTypeOnDemand}, "ice", time.Minute)
	u.MarkUnavailable(cloudprovider.Offering{InstanceType: "r5.large", Zone: zone, CapacityType: apisv1.CapacityTypeOnDemand}, "ice", time.Minute)
	got := u.Apply(types)
	if len(got) != 2 || got[0] != c5 {
		t.Fatalf("Apply returned %v; the unaffected type must be shared", got)
	}
	if got[1] == m5 {
		t.Fatal("the affected type was not copied")
	}
	for i, o := range got[1].Offerings {
		marked := o.Zone == zone && o.CapacityType == apisv1.CapacityTypeOnDemand
		if o.Available == marked && m5.Offerings[i].Available {
			t.Errorf("offering %s %s: available %v", o.Zone, o.CapacityType, o.Available)
		}
	}
	if !slices.ContainsFunc(m5.Offerings, func(o catalog.Offering) bool {
		return o.Zone == zone && o.CapacityType == apisv1.CapacityTypeOnDemand && o.Available
	}) {
		t.Error("Apply modified the shared catalog")
	}
	clk.Step(2 * time.Minute)
	if got := u.Apply(types); got[1] != m5 {
		t.Error("an expired mark still applies")
	}
}

// Marks and reads from many goroutines (run with -race).
func TestUnavailableOfferingsConcurrent(t *testing.T) {
	cat, err := catalog.Load("us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	m5, _ := cat.Get("m5.large")
	u := cloudprovider.NewUnavailableOfferings(nil)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 200 {
				o := m5.Offerings[(i+j)%len(m5.Offerings)]
				u.MarkUnavailable(cloudprovider.Offering{InstanceType: "m5.large", Zone: o.Zone, CapacityType: o.CapacityType}, "x", time.Minute)
				_ = u.IsUnavailable("m5.large", o.Zone, o.CapacityType)
				_ = u.Apply([]*catalog.InstanceType{m5})
			}
		}()
	}
	wg.Wait()
	for _, it := range u.Apply([]*catalog.InstanceType{m5}) {
		for _, o := range it.Offerings {
			if o.Available && o.CapacityType != apisv1.CapacityTypeReserved {
				t.Errorf("offering %s %s still available after every offering was marked", o.Zone, o.CapacityType)
			}
		}
	}
}

func BenchmarkApplyNothingMarked(b *testing.B) {
	cat, err := catalog.Load("us-east-1")
	if err != nil {
		b.Fatal(err)
	}
	u := cloudprovider.NewUnavailableOfferings(nil)
	b.ReportAllocs()
	for b.Loop() {
		_ = u.Apply(cat.Types)
	}
}

func BenchmarkApplyOneMarked(b *testing.B) {
	cat, err := catalog.Load("us-east-1")
	if err != nil {
		b.Fatal(err)
	}
	u := cloudprovider.NewUnavailableOfferings(nil)
	u.MarkUnavailable(cloudprovider.Offering{InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: apisv1.CapacityTypeSpot}, "x", time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		_ = u.Apply(cat.Types)
	}
}

// Karpenter's availability gauge follows the cache: 0 from a mark, 1 the moment the mark runs
// out (a renewed mark holds it at 0 until the renewal runs out), or is lifted; an offering
// never marked has no series.
func TestOfferingAvailableGaugeFollowsMarksAndTheirExpiry(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	u := cloudprovider.NewUnavailableOfferings(clk)
	o := cloudprovider.Offering{InstanceType: "gauge.large", Zone: "us-east-1a", CapacityType: apisv1.CapacityTypeOnDemand}
	lifted := cloudprovider.Offering{InstanceType: "gauge.large", Zone: "us-east-1b", CapacityType: apisv1.CapacityTypeOnDemand}
	gauge := func(o cloudprovider.Offering) float64 {
		return testutil.ToFloat64(cloudprovider.OfferingAvailable.WithLabelValues(o.InstanceType, o.CapacityType, o.Zone))
	}
	series := func() int {
		n := 0
		for _, it := range []string{"gauge.large", "gauge.xlarge"} {
			for _, z := range []string{"us-east-1a", "us-east-1b", "us-east-1c"} {
				if cloudprovider.OfferingAvailable.DeleteLabelValues(it, apisv1.CapacityTypeOnDemand, z) {
					n++
				}
			}
		}
		return n
	}
	u.MarkUnavailable(o, "InsufficientCapacity", 3*time.Minute)
	u.MarkUnavailable(lifted, "InsufficientCapacity", time.Hour)
	if gauge(o) != 0 || gauge(lifted) != 0 {
		t.Fatalf("after the marks: %v %v, want 0 0", gauge(o), gauge(lifted))
	}
	u.MarkUnavailable(lifted, "", 0)
	if gauge(lifted) != 1 {
		t.Errorf("a lifted mark: %v, want 1", gauge(lifted))
	}
	clk.Step(2 * time.Minute)
	u.MarkUnavailable(o, "again", 3*time.Minute) // renewed until 12:05
	clk.Step(time.Minute + 30*time.Second)       // past the first mark's 12:03
	if gauge(o) != 0 {
		t.Errorf("the first mark's expiry reset a renewed offering: %v, want 0", gauge(o))
	}
	clk.Step(2 * time.Minute) // past 12:05, with no other call into the cache
	if gauge(o) != 1 {
		t.Errorf("after the renewed mark ran out: %v, want 1", gauge(o))
	}
	if u.IsUnavailable(o.InstanceType, o.Zone, o.CapacityType) || u.Len() != 0 {
		t.Errorf("the expired mark is still held: %d marks", u.Len())
	}
	// Only the two offerings ever marked have series (series deletes what it counts).
	if n := series(); n != 2 {
		t.Errorf("%d series of the test's offerings, want 2", n)
	}
}

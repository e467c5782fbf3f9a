package catalog

import (
	"maps"
	"math"
	"strings"
	"testing"
	"time"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func TestSpotOfferings(t *testing.T) {
	c := mustLoad(t, "")
	tests := []struct {
		name string
		want map[string]float64 // zone → spot price
	}{
		// Zonal rows in use1-az1,2,4,5,6: spot only there (us-east-1c has none), at those prices.
		{"g5.xlarge", map[string]float64{
			"us-east-1a": 0.4507, "us-east-1b": 0.4246, "us-east-1d": 0.436, "us-east-1e": 0.4259, "us-east-1f": 0.4364,
		}},
		// Zonal rows in all six zones, two of them without a price: no spot there, and the
		// Spot Advisor's figure is not used instead.
		{"p3.8xlarge", map[string]float64{
			"us-east-1a": 1.4427, "us-east-1b": 1.5132, "us-east-1e": 1.4129, "us-east-1f": 1.4762,
		}},
		// Zonal rows without any price: never spot.
		{"p5.4xlarge", map[string]float64{}},
		// No zonal rows: every zone at on-demand × (1 − 54%).
		{"m5.2xlarge", map[string]float64{
			"us-east-1a": 0.17664, "us-east-1b": 0.17664, "us-east-1c": 0.17664, "us-east-1d": 0.17664, "us-east-1e": 0.17664, "us-east-1f": 0.17664,
		}},
		// Neither zonal rows nor advice: never spot.
		{"u-3tb1.56xlarge", map[string]float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := offeringsOf(mustGet(t, c, tt.name), apisv1.CapacityTypeSpot)
			if !maps.EqualFunc(got, tt.want, near) {
				t.Errorf("spot offerings %v, want %v", got, tt.want)
			}
		})
	}
	for _, it := range c.Types {
		for _, o := range it.Offerings {
			if !o.Available || o.Price <= 0 || o.Zone == "" || o.ZoneID == "" {
				t.Fatalf("%s: bad offering %+v", it.Name, o)
			}
		}
	}
}

func TestSpotWest(t *testing.T) {
	it := mustGet(t, mustLoad(t, "us-west-2"), "g5.xlarge")
	want := map[string]float64{"us-west-2a": 0.4857, "us-west-2b": 0.5134, "us-west-2c": 0.4829}
	if got := offeringsOf(it, apisv1.CapacityTypeSpot); !maps.EqualFunc(got, want, near) {
		t.Errorf("spot %v, want %v", got, want)
	}
}

func TestReservations(t *testing.T) {
	block := Window{Start: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 8, 8, 0, 0, 0, 0, time.UTC)}
	c := mustLoad(t, "", WithReservations(
		Reservation{ID: "cr-large", InstanceType: "m5.large", Zone: "us-east-1a", Count: 3},
		Reservation{ID: "cr-2xl", InstanceType: "m5.2xlarge", Zone: "use1-az2", Count: 1},
		Reservation{ID: "cr-empty", InstanceType: "m5.xlarge", Zone: "us-east-1a", Count: 0},
		Reservation{ID: "cb-p5e", InstanceType: "p5e.48xlarge", Zone: "us-east-1c", Count: 2, Price: 31.4, Window: block},
	))
	m5l := mustGet(t, c, "m5.large")
	var res Offering
	for _, o := range m5l.Offerings {
		if o.CapacityType == apisv1.CapacityTypeReserved {
			res = o
		}
	}
	if res.ReservationID != "cr-large" || res.ReservationCapacity != 3 || !res.Available || res.Zone != "us-east-1a" || res.ZoneID != "use1-az1" {
		t.Fatalf("reserved offering %+v", res)
	}
	if !near(res.Price, 0.096/ReservedPriceDivisor) {
		t.Errorf("reserved price %g, want 0.096/1e7", res.Price)
	}
	if got := res.Labels()[apisv1.LabelCapacityReservationID]; got != "cr-large" {
		t.Errorf("reservation label %q", got)
	}
	// The type's reservation-ID requirement is unconstrained: it has reserved and other offerings.
	if r, _ := m5l.Requirements.Get(apisv1.LabelCapacityReservationID); !r.Equal(scheduling.Unconstrained(apisv1.LabelCapacityReservationID)) {
		t.Errorf("m5.large reservation requirement %s", r)
	}

	// Reserved beats every spot and on-demand offering, and is ordered by size among itself.
	ranked := Rank(c.Types, scheduling.Requirements{})
	if ranked[0].Type.Name != "m5.large" || ranked[1].Type.Name != "m5.2xlarge" || ranked[1].Type.Offerings[ranked[1].Offering].ReservationID != "cr-2xl" {
		t.Errorf("cheapest: %s, %s", ranked[0].Type.Name, ranked[1].Type.Name)
	}
	// An empty reservation is not usable.
	for _, r := range ranked[:3] {
		if r.Type.Name == "m5.xlarge" {
			t.Error("a reservation without capacity was ranked")
		}
	}

	// A capacity-block-only type is usable through its reservation only.
	p5e := mustGet(t, c, "p5e.48xlarge")
	if len(p5e.Offerings) != 1 || p5e.Offerings[0].Window != block || !near(p5e.Offerings[0].Price, 31.4/ReservedPriceDivisor) {
		t.Fatalf("p5e offerings %+v", p5e.Offerings)
	}
	if r, _ := p5e.Requirements.Get(apisv1.LabelCapacityReservationID); !r.Equal(scheduling.In(apisv1.LabelCapacityReservationID, "cb-p5e")) {
		t.Errorf("p5e reservation requirement %s", r)
	}
	if !block.Contains(block.Start) || block.Contains(block.End) || (Window{}).Contains(block.Start) == false {
		t.Error("Window.Contains")
	}
	onlyOD := scheduling.NewRequirements(scheduling.In(apisv1.CapacityTypeLabelKey, apisv1.CapacityTypeOnDemand))
	if _, ok := p5e.CheapestOffering(onlyOD); ok {
		t.Error("p5e offered on demand")
	}

	for _, bad := range []struct {
		r    Reservation
		want string
	}{
		{Reservation{ID: "x", InstanceType: "m5.large", Zone: "us-west-2a", Count: 1}, "zone"},
		{Reservation{ID: "x", InstanceType: "nope.large", Zone: "us-east-1a", Count: 1}, "not sold"},
		{Reservation{ID: "x", InstanceType: "hpc7a.12xlarge", Zone: "us-east-1a", Count: 1}, "not sold"},
		{Reservation{InstanceType: "m5.large", Zone: "us-east-1a", Count: 1}, "no ID"},
		{Reservation{ID: "x", InstanceType: "m5.large", Zone: "us-east-1a", Count: -1}, "negative"},
	} {
		if _, err := Load("", WithReservations(bad.r)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("reservation %+v: error %v, want one mentioning %q", bad.r, err, bad.want)
		}
	}
	dup := Reservation{ID: "x", InstanceType: "m5.large", Zone: "us-east-1a", Count: 1}
	if _, err := Load("", WithReservations(dup, dup)); err == nil {
		t.Error("duplicate reservation ID accepted")
	}
}

package catalog

import (
	"testing"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

func TestPriceOverrides(t *testing.T) {
	g5Spot := AdjustPrice(scheduling.NewRequirements(
		scheduling.In(apisv1.LabelInstanceFamily, "g5"),
		scheduling.In(apisv1.CapacityTypeLabelKey, apisv1.CapacityTypeSpot),
	), 20)
	m5LargeOD := FixedPrice(scheduling.NewRequirements(
		scheduling.In(apisv1.LabelInstanceType, "m5.large"),
		scheduling.In(apisv1.CapacityTypeLabelKey, apisv1.CapacityTypeOnDemand),
	), 0.05)
	oneZone := AdjustPrice(scheduling.NewRequirements(
		scheduling.In(apisv1.LabelInstanceType, "c5.large"),
		scheduling.In(apisv1.LabelTopologyZoneID, "use1-az2"),
	), -50)
	noGPU := AdjustPrice(scheduling.NewRequirements(scheduling.DoesNotExist(apisv1.LabelInstanceGPUCount)), 1)

	base := mustLoad(t, "")
	c := mustLoad(t, "",
		WithPriceOverrides(g5Spot, m5LargeOD, oneZone),
		WithReservations(Reservation{ID: "cr", InstanceType: "m5.large", Zone: "us-east-1a", Count: 1}),
	)
	for _, it := range c.Types {
		was := mustGet(t, base, it.Name)
		for i, o := range it.Offerings {
			if o.CapacityType == apisv1.CapacityTypeReserved {
				continue
			}
			before := was.Offerings[i].Price
			want := before
			switch {
			case it.Shape.Family == "g5" && o.CapacityType == apisv1.CapacityTypeSpot:
				want = before * 1.2
			case it.Name == "m5.large" && o.CapacityType == apisv1.CapacityTypeOnDemand:
				want = 0.05
			case it.Name == "c5.large" && o.ZoneID == "use1-az2":
				want = before / 2
			}
			if !near(o.Price, want) {
				t.Errorf("%s %s %s: price %g, want %g (was %g)", it.Name, o.Zone, o.CapacityType, o.Price, want, before)
			}
		}
	}
	// The reservation follows the overridden on-demand price of its zone.
	res, ok := mustGet(t, c, "m5.large").CheapestOffering(scheduling.NewRequirements(scheduling.In(apisv1.CapacityTypeLabelKey, apisv1.CapacityTypeReserved)))
	if !ok || !near(res.Price, 0.05/ReservedPriceDivisor) {
		t.Errorf("reserved m5.large %+v", res)
	}

	// Overrides apply in order: +1% on every type without a GPU, then m5.large fixed.
	c = mustLoad(t, "", WithPriceOverrides(noGPU, m5LargeOD))
	if p, _ := mustGet(t, c, "m5.large").OnDemandPrice(); p != 0.05 {
		t.Errorf("m5.large on-demand %g after +1%% then fixed", p)
	}
	if p, _ := mustGet(t, c, "m5.xlarge").OnDemandPrice(); !near(p, 0.192*1.01) {
		t.Errorf("m5.xlarge on-demand %g", p)
	}
	if p, _ := mustGet(t, c, "g5.xlarge").OnDemandPrice(); p != 1.006 {
		t.Errorf("g5.xlarge on-demand %g, a GPU type matched DoesNotExist gpu-count", p)
	}

	for _, bad := range []PriceOverride{
		FixedPrice(scheduling.Requirements{}, -1),
		AdjustPrice(scheduling.Requirements{}, -101),
	} {
		if _, err := Load("", WithPriceOverrides(bad)); err == nil {
			t.Errorf("override %+v accepted", bad)
		}
	}
}

package commitment

import (
	"testing"
	"time"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

func typeWith(name string, vcpu int64, od, spot float64) *catalog.InstanceType {
	var capacity scheduling.Resources
	capacity[scheduling.CPU] = vcpu * 1000
	return &catalog.InstanceType{Name: name, Capacity: capacity, Offerings: []catalog.Offering{
		{Zone: "a", CapacityType: apisv1.CapacityTypeOnDemand, Price: od, Available: true},
		{Zone: "a", CapacityType: apisv1.CapacityTypeSpot, Price: spot, Available: true},
	}}
}

// Reprice puts on-demand offerings at what they add to the bill, with the list price as a
// tie-break, leaves spot alone and never writes the types it was given.
func TestReprice(t *testing.T) {
	xl, big, other := typeWith("m5.xlarge", 4, 0.192, 0.07), typeWith("m5.4xlarge", 16, 0.768, 0.3), typeWith("c5.xlarge", 4, 0.17, 0.06)
	book := NewBook([]Commitment{
		{Name: "ri", Kind: ZonalReservation, InstanceType: "m5.xlarge", Zone: "a", Count: 1},
		{Name: "sp", Kind: InstanceSavingsPlan, Family: "m5", Hourly: 0.2, Default: 0.5},
	}, time.Now())
	out := Reprice([]*catalog.InstanceType{xl, big, other}, book.Room(nil), "")
	if xl.Offerings[0].Price != 0.192 || big.Offerings[0].Price != 0.768 {
		t.Fatal("reprice wrote the types it was given")
	}
	if got := out[0].Offerings[0].Price; got != 0.192/catalog.ReservedPriceDivisor {
		t.Errorf("m5.xlarge on demand, reserved: %v", got)
	}
	// 0.2 of a plan at 0.384 per hour covers 0.2/0.384 of an m5.4xlarge.
	if got, want := out[1].Offerings[0].Price, 0.768*(1-0.2/0.384)+0.768/catalog.ReservedPriceDivisor; got < want-1e-12 || got > want+1e-12 {
		t.Errorf("m5.4xlarge on demand, half covered: %v, want %v", got, want)
	}
	if out[0].Offerings[1].Price != 0.07 || out[1].Offerings[1].Price != 0.3 {
		t.Error("spot offerings repriced")
	}
	if out[2].Offerings[0].Price != 0.17+0.17/catalog.ReservedPriceDivisor {
		t.Errorf("c5.xlarge, uncovered: %v", out[2].Offerings[0].Price)
	}
}

package catalog

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

func names(types []*InstanceType) []string {
	out := make([]string, len(types))
	for i, it := range types {
		out[i] = it.Name
	}
	return out
}

// naiveCheapest is the reference for Query.Cheapest: the full requirement algebra on every
// offering's complete requirements.
func naiveCheapest(it *InstanceType, reqs scheduling.Requirements) (float64, bool) {
	price, ok := 0.0, false
	for _, o := range it.Offerings {
		if !o.Usable() {
			continue
		}
		node := it.Requirements.Intersect(o.Requirements())
		// The type's requirements may leave the reservation ID unconstrained; the offering's
		// requirement on it is exact, so intersecting gives the node's true label states.
		if scheduling.Compatible(node, reqs, undefinedIsFree) != nil {
			continue
		}
		if !ok || o.Price < price {
			price, ok = o.Price, true
		}
	}
	return price, ok
}

func TestOrderByPrice(t *testing.T) {
	c := mustLoad(t, "", WithReservations(Reservation{ID: "cr-1", InstanceType: "c5.xlarge", Zone: "us-east-1b", Count: 1}))
	req := func(key string, op corev1.NodeSelectorOperator, values ...string) scheduling.Requirement {
		return scheduling.MustRequirement(key, op, values...)
	}
	tests := []struct {
		name  string
		reqs  scheduling.Requirements
		first []string // the first few types expected, in order; nil to skip
		count int      // expected number of types; -1 to skip
	}{
		{"everything", scheduling.Requirements{}, []string{"c5.xlarge"}, 1366 - 2},
		{"a10g on demand", scheduling.NewRequirements(
			req(apisv1.LabelInstanceGPUName, corev1.NodeSelectorOpIn, "a10g"),
			req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "on-demand"),
			// g5.16xlarge ($4.096) is cheaper than g5.12xlarge ($5.672): it has one GPU, not four.
		), []string{"g5.xlarge", "g5.2xlarge", "g5.4xlarge", "g5.8xlarge", "g5.16xlarge", "g5.12xlarge"}, 8},
		{"4+ nvidia gpus in zone c", scheduling.NewRequirements(
			req(apisv1.LabelInstanceGPUCount, scheduling.OpGte, "4"),
			req(apisv1.LabelInstanceGPUManufacturer, corev1.NodeSelectorOpIn, "nvidia"),
			req(apisv1.LabelZone, corev1.NodeSelectorOpIn, "us-east-1c"),
		), nil, -1},
		{"no gpu, arm64, spot", scheduling.NewRequirements(
			req(apisv1.LabelInstanceGPUCount, corev1.NodeSelectorOpDoesNotExist),
			req(apisv1.LabelArch, corev1.NodeSelectorOpIn, "arm64"),
			req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "spot"),
		), nil, -1},
		{"reserved only", scheduling.NewRequirements(
			req(apisv1.LabelCapacityReservationID, corev1.NodeSelectorOpExists),
		), []string{"c5.xlarge"}, 1},
		{"not reserved", scheduling.NewRequirements(
			req(apisv1.LabelCapacityReservationID, corev1.NodeSelectorOpDoesNotExist),
			req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "c5.xlarge", "c5.large"),
		), []string{"c5.large", "c5.xlarge"}, 2},
		{"custom label is free", scheduling.NewRequirements(
			req("team", corev1.NodeSelectorOpIn, "ml"),
			req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large"),
		), []string{"m5.large"}, 1},
		{"nothing", scheduling.NewRequirements(req(apisv1.LabelZone, corev1.NodeSelectorOpIn, "us-west-2a")), nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ranked := Rank(c.Types, tt.reqs)
			got := OrderByPrice(c.Types, tt.reqs)
			if tt.count >= 0 && len(got) != tt.count {
				t.Errorf("%d types, want %d", len(got), tt.count)
			}
			if len(tt.first) > 0 && (len(got) < len(tt.first) || !slices.Equal(names(got[:len(tt.first)]), tt.first)) {
				t.Errorf("first %v, want %v", names(got[:min(len(got), len(tt.first))]), tt.first)
			}
			// Against the reference: same set of types, same prices, sorted by (price, name).
			var want int
			for _, it := range c.Types {
				if _, ok := naiveCheapest(it, tt.reqs); ok {
					want++
				}
			}
			if want != len(ranked) {
				t.Errorf("ranked %d types, reference %d", len(ranked), want)
			}
			for i, r := range ranked {
				if p, ok := naiveCheapest(r.Type, tt.reqs); !ok || p != r.Price || r.Type.Offerings[r.Offering].Price != r.Price {
					t.Errorf("%s: ranked at %g, reference %g %v", r.Type.Name, r.Price, p, ok)
				}
				if got[i] != r.Type {
					t.Errorf("OrderByPrice and Rank disagree at %d", i)
				}
				if i > 0 {
					prev := ranked[i-1]
					if prev.Price > r.Price || (prev.Price == r.Price && prev.Type.Name >= r.Type.Name) {
						t.Errorf("out of order at %d: %s %g before %s %g", i, prev.Type.Name, prev.Price, r.Type.Name, r.Price)
					}
				}
			}
		})
	}
}

func TestCheapestSkipsUnavailable(t *testing.T) {
	it := mustGet(t, mustLoad(t, ""), "g5.xlarge")
	reqs := scheduling.NewRequirements(scheduling.In(apisv1.CapacityTypeLabelKey, apisv1.CapacityTypeSpot))
	o, ok := it.CheapestOffering(reqs)
	if !ok || o.Zone != "us-east-1b" || o.Price != 0.4246 {
		t.Fatalf("cheapest spot %+v", o)
	}
	for i := range it.Offerings {
		if it.Offerings[i].Zone == "us-east-1b" {
			it.Offerings[i].Available = false
		}
	}
	if o, _ = it.CheapestOffering(reqs); o.Zone != "us-east-1e" || o.Price != 0.4259 {
		t.Errorf("cheapest spot with us-east-1b unavailable %+v", o)
	}
}

func TestTieBreakByName(t *testing.T) {
	zones := []Zone{{Name: "z", ID: "z1"}}
	var types []*InstanceType
	for _, name := range []string{"c.large", "a.large", "b.large"} {
		it, err := NewInstanceType(name, "r", Shape{Arch: "amd64", VCPU: 2, MemoryMiB: 1024, MaxPods: 4},
			[]Offering{{Zone: "z", ZoneID: "z1", CapacityType: apisv1.CapacityTypeOnDemand, Price: 1, Available: true}})
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, it)
	}
	c, err := New("r", zones, types)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range [][]*InstanceType{types, c.Types, {types[2], types[0], types[1]}} {
		if got := names(OrderByPrice(in, scheduling.Requirements{})); !slices.Equal(got, []string{"a.large", "b.large", "c.large"}) {
			t.Errorf("order %v", got)
		}
	}
}

func TestTruncate(t *testing.T) {
	ordered := OrderByPrice(mustLoad(t, "").Types, scheduling.Requirements{})
	if got := Truncate(ordered, 0); len(got) != MaxInstanceTypes || got[0] != ordered[0] {
		t.Errorf("default truncation kept %d", len(got))
	}
	got := Truncate(ordered, 3)
	if !slices.Equal(got, ordered[:3]) || cap(got) != 3 {
		t.Errorf("Truncate 3: %v cap %d", names(got), cap(got))
	}
	_ = append(got, nil)
	if ordered[3] == nil {
		t.Error("appending to a truncation overwrote the input")
	}
	if got := Truncate(ordered[:2], 10); len(got) != 2 {
		t.Errorf("Truncate beyond length kept %d", len(got))
	}
}

package catalog

import (
	"maps"
	"reflect"
	"strings"
	"testing"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

func mustLoad(t testing.TB, region string, opts ...Option) *Catalog {
	t.Helper()
	c, err := Load(region, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustGet(t testing.TB, c *Catalog, name string) *InstanceType {
	t.Helper()
	it, ok := c.Get(name)
	if !ok {
		t.Fatalf("%s: no instance type %s", c.Region, name)
	}
	return it
}

// offeringsOf returns the offerings of a capacity type as zone → price.
func offeringsOf(it *InstanceType, capacityType string) map[string]float64 {
	out := map[string]float64{}
	for _, o := range it.Offerings {
		if o.CapacityType == capacityType {
			out[o.Zone] = o.Price
		}
	}
	return out
}

func TestKnownFacts(t *testing.T) {
	c := mustLoad(t, "")
	if c.Region != "us-east-1" || len(c.Zones) != 6 || c.Zones[0] != (Zone{Name: "us-east-1a", ID: "use1-az1"}) || c.Zones[5] != (Zone{Name: "us-east-1f", ID: "use1-az6"}) {
		t.Fatalf("region %s zones %v", c.Region, c.Zones)
	}

	m5 := mustGet(t, c, "m5.2xlarge")
	if m5.Shape.VCPU != 8 || m5.Shape.MemoryMiB != 32*1024 || m5.Capacity[scheduling.CPU] != 8000 || m5.Capacity[scheduling.Memory] != 32*GiB {
		t.Errorf("m5.2xlarge shape %+v capacity %v", m5.Shape, m5.Capacity)
	}
	if p, ok := m5.OnDemandPrice(); !ok || p != 0.384 {
		t.Errorf("m5.2xlarge on-demand %v %v, want 0.384", p, ok)
	}
	if od := offeringsOf(m5, apisv1.CapacityTypeOnDemand); len(od) != 6 {
		t.Errorf("m5.2xlarge on-demand offerings %v, want one per zone", od)
	}
	if m5.SpotAdvice != (SpotAdvice{Known: true, SavingsPercent: 54, Bucket: 2, Label: "10-15%", MaxInterruptionPct: 16}) {
		t.Errorf("m5.2xlarge spot advice %+v", m5.SpotAdvice)
	}

	g5 := mustGet(t, c, "g5.12xlarge")
	if g5.Capacity[scheduling.NvidiaGPU] != 4 || g5.Capacity[scheduling.CPU] != 48000 || g5.Shape.GPUName != "a10g" {
		t.Errorf("g5.12xlarge capacity %v shape %+v", g5.Capacity, g5.Shape)
	}
	if v, _ := g5.Label(apisv1.LabelInstanceGPUName); v != "a10g" {
		t.Errorf("g5.12xlarge gpu-name %q", v)
	}

	p5 := mustGet(t, c, "p5.48xlarge")
	if p5.Capacity[scheduling.NvidiaGPU] != 8 || p5.Capacity[scheduling.Pods] != 100 || p5.Shape.GPUName != "h100" || p5.Capacity[scheduling.EFA] != 32 {
		t.Errorf("p5.48xlarge capacity %v shape %+v", p5.Capacity, p5.Shape)
	}

	inf2 := mustGet(t, c, "inf2.48xlarge")
	if inf2.Capacity[scheduling.Neuron] != 12 || inf2.Capacity[scheduling.NeuronCore] != 24 || inf2.Capacity[scheduling.NvidiaGPU] != 0 {
		t.Errorf("inf2.48xlarge capacity %v", inf2.Capacity)
	}
	if inf2.Shape.GPUCount != 0 || inf2.Shape.AcceleratorCount != 12 || !inf2.Shape.IsNeuron() {
		t.Errorf("inf2.48xlarge shape %+v", inf2.Shape)
	}

	g4ad := mustGet(t, c, "g4ad.xlarge")
	if g4ad.Capacity[scheduling.AMDGPU] != 1 || g4ad.Capacity[scheduling.NvidiaGPU] != 0 {
		t.Errorf("g4ad.xlarge capacity %v", g4ad.Capacity)
	}
	dl1 := mustGet(t, c, "dl1.24xlarge")
	gaudi, ok := scheduling.ResourceIndex(ResourceHabanaGaudi)
	if !ok || dl1.Capacity[gaudi] != 8 {
		t.Errorf("dl1.24xlarge capacity %v", dl1.Capacity)
	}
}

func TestRegions(t *testing.T) {
	east := mustLoad(t, "us-east-1")
	west := mustLoad(t, "us-west-2")
	if len(east.Types) != 1366 {
		t.Errorf("us-east-1 has %d types, want 1,364 priced + 2 capacity-block-only", len(east.Types))
	}
	if len(west.Types) != 75 || len(west.Zones) != 4 || west.Zones[3] != (Zone{Name: "us-west-2d", ID: "usw2-az4"}) {
		t.Errorf("us-west-2: %d types, zones %v", len(west.Types), west.Zones)
	}
	for _, it := range west.Types {
		if _, ok := it.OnDemandPrice(); !ok {
			t.Errorf("us-west-2 lists %s, which has no on-demand price there", it.Name)
		}
		if r, _ := it.Label(apisv1.LabelRegion); r != "us-west-2" {
			t.Errorf("%s region label %q", it.Name, r)
		}
	}
	for _, name := range []string{"p5e.48xlarge", "trn2.48xlarge"} {
		it := mustGet(t, east, name)
		if len(it.Offerings) != 0 {
			t.Errorf("%s has offerings %v without a reservation", name, it.Offerings)
		}
		if NewQuery(scheduling.Requirements{}).TypeMatches(it) {
			t.Errorf("%s without offerings should match no requirements (its zone requirement is empty)", name)
		}
	}
	if _, ok := east.Get("hpc7a.12xlarge"); ok {
		t.Error("hpc7a.12xlarge has no price in us-east-1 and is not capacity-block-only")
	}
	if _, err := Load("eu-west-1"); err == nil || !strings.Contains(err.Error(), "us-west-2") {
		t.Errorf("unknown region: %v", err)
	}
}

func TestWithZones(t *testing.T) {
	c := mustLoad(t, "", WithZones("us-east-1b", "use1-az4"))
	if len(c.Zones) != 2 || c.Zones[0].Name != "us-east-1b" || c.Zones[1].Name != "us-east-1d" {
		t.Fatalf("zones %v", c.Zones)
	}
	for _, o := range mustGet(t, c, "g5.xlarge").Offerings {
		if o.Zone != "us-east-1b" && o.Zone != "us-east-1d" {
			t.Errorf("offering in unselected zone: %+v", o)
		}
	}
	if _, err := Load("", WithZones("us-west-2a")); err == nil {
		t.Error("a zone of another region was accepted")
	}
}

func TestLabels(t *testing.T) {
	c := mustLoad(t, "")
	absent := ""
	tests := []struct {
		name string
		want map[string]string // "" means the label must be absent
	}{
		{"m5.2xlarge", map[string]string{
			apisv1.LabelInstanceType: "m5.2xlarge", apisv1.LabelArch: "amd64", apisv1.LabelOS: "linux",
			apisv1.LabelRegion: "us-east-1", apisv1.LabelInstanceCategory: "m", apisv1.LabelInstanceFamily: "m5",
			apisv1.LabelInstanceGeneration: "5", apisv1.LabelInstanceSize: "2xlarge", apisv1.LabelInstanceCPU: "8",
			apisv1.LabelInstanceCPUManufacturer: "intel", apisv1.LabelInstanceMemory: "32768",
			apisv1.LabelInstanceNetworkBandwidth: "2500", apisv1.LabelInstanceHypervisor: "nitro",
			apisv1.LabelInstanceEBSBandwidth: "4750", apisv1.LabelInstanceLocalNVME: absent,
			apisv1.LabelInstanceGPUName: absent, apisv1.LabelInstanceAcceleratorName: absent,
		}},
		{"g5.12xlarge", map[string]string{
			apisv1.LabelInstanceGPUName: "a10g", apisv1.LabelInstanceGPUCount: "4",
			apisv1.LabelInstanceGPUManufacturer: "nvidia", apisv1.LabelInstanceGPUMemory: "22888",
			apisv1.LabelInstanceLocalNVME: "3800", apisv1.LabelInstanceAcceleratorCount: absent,
		}},
		{"inf2.48xlarge", map[string]string{
			apisv1.LabelInstanceAcceleratorName: "inferentia2", apisv1.LabelInstanceAcceleratorCount: "12",
			apisv1.LabelInstanceAcceleratorMfr: "aws", apisv1.LabelInstanceGPUCount: absent,
		}},
		{"trn1.32xlarge", map[string]string{
			apisv1.LabelInstanceAcceleratorName: "trainium", apisv1.LabelInstanceAcceleratorCount: "16",
			apisv1.LabelInstanceAcceleratorMfr: "aws",
		}},
		{"dl1.24xlarge", map[string]string{
			apisv1.LabelInstanceGPUName: "gaudi-hl-205", apisv1.LabelInstanceGPUManufacturer: "habana",
			apisv1.LabelInstanceGPUCount: "8", apisv1.LabelInstanceGPUMemory: "32768",
		}},
		{"m7g.large", map[string]string{
			apisv1.LabelArch: "arm64", apisv1.LabelInstanceCPUManufacturer: "aws", apisv1.LabelInstanceGeneration: "7",
		}},
		{"m5.metal", map[string]string{apisv1.LabelInstanceHypervisor: absent, apisv1.LabelInstanceSize: "metal"}},
		{"p3.2xlarge", map[string]string{apisv1.LabelInstanceHypervisor: "xen", apisv1.LabelInstanceGPUName: "v100"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it := mustGet(t, c, tt.name)
			labels := it.Labels()
			for k, want := range tt.want {
				got, ok := labels[k]
				if want == absent {
					if ok {
						t.Errorf("%s = %q, want absent", k, got)
					}
					r, _ := it.Requirements.Get(k)
					if !r.Equal(scheduling.DoesNotExist(k)) {
						t.Errorf("requirement on absent %s is %s", k, r)
					}
					continue
				}
				if got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
				if r, _ := it.Requirements.Get(k); !r.Equal(scheduling.In(k, want)) {
					t.Errorf("requirement %s, want In [%s]", r, want)
				}
			}
			// Every label is also a requirement, and the requirements match the node's labels.
			if err := it.Requirements.Matches(it.NodeLabels(&it.Offerings[0])); err != nil {
				t.Errorf("requirements reject the type's own node labels: %v", err)
			}
			labels["mutated"] = "x"
			if _, ok := it.Label("mutated"); ok {
				t.Error("Labels returned the type's own map")
			}
		})
	}
}

func TestOfferingRequirements(t *testing.T) {
	it := mustGet(t, mustLoad(t, ""), "g5.xlarge")
	zones, _ := it.Requirements.Get(apisv1.LabelZone)
	if !zones.Equal(scheduling.In(apisv1.LabelZone, "us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1e", "us-east-1f")) {
		t.Errorf("zones %s", zones)
	}
	ct, _ := it.Requirements.Get(apisv1.CapacityTypeLabelKey)
	if !ct.Equal(scheduling.In(apisv1.CapacityTypeLabelKey, "on-demand", "spot")) {
		t.Errorf("capacity types %s", ct)
	}
	o := it.Offerings[0]
	want := map[string]string{apisv1.LabelZone: "us-east-1a", apisv1.LabelTopologyZoneID: "use1-az1", apisv1.CapacityTypeLabelKey: "on-demand"}
	if !maps.Equal(o.Labels(), want) {
		t.Errorf("offering labels %v", o.Labels())
	}
	if err := o.Requirements().Matches(want); err != nil {
		t.Error(err)
	}
	if o.Requirements().Matches(map[string]string{apisv1.LabelZone: "us-east-1a", apisv1.LabelTopologyZoneID: "use1-az1", apisv1.CapacityTypeLabelKey: "on-demand", apisv1.LabelCapacityReservationID: "r"}) == nil {
		t.Error("an on-demand offering's requirements accept a reservation ID")
	}
}

func TestDeterministic(t *testing.T) {
	opts := []Option{
		WithReservations(Reservation{ID: "cr-1", InstanceType: "m5.large", Zone: "us-east-1a", Count: 2}),
		WithPriceOverrides(AdjustPrice(scheduling.NewRequirements(scheduling.In(apisv1.LabelInstanceFamily, "c5")), -10)),
	}
	a, b := mustLoad(t, "", opts...), mustLoad(t, "", opts...)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two loads differ")
	}
	a.Types[0].Offerings[0].Available = false
	if !b.Types[0].Offerings[0].Available {
		t.Error("two loads share offerings")
	}
}

func TestNew(t *testing.T) {
	zones := []Zone{{Name: "z-a", ID: "z1"}, {Name: "z-b", ID: "z2"}}
	shape := Shape{Family: "x1", Generation: 1, Category: "x", Size: "large", Arch: "amd64", VCPU: 2, MemoryMiB: 4096, MaxPods: 10}
	mk := func(name string, zone Zone, price float64) *InstanceType {
		it, err := NewInstanceType(name, "test", shape, []Offering{{Zone: zone.Name, ZoneID: zone.ID, CapacityType: apisv1.CapacityTypeOnDemand, Price: price, Available: true}})
		if err != nil {
			t.Fatal(err)
		}
		return it
	}
	b, a := mk("x1.b", zones[1], 2), mk("x1.a", zones[0], 1)
	c, err := New("test", zones, []*InstanceType{b, a})
	if err != nil {
		t.Fatal(err)
	}
	if c.Types[0] != a || c.Types[1] != b {
		t.Errorf("types not sorted by name: %v", c.Types)
	}
	if got, ok := c.Get("x1.b"); !ok || got != b {
		t.Error("Get x1.b")
	}
	if z, ok := c.Zone("z2"); !ok || z.Name != "z-b" {
		t.Errorf("Zone(z2) = %v", z)
	}
	if _, err := New("test", zones, []*InstanceType{a, a}); err == nil {
		t.Error("duplicate type accepted")
	}
	if _, err := New("test", zones[:1], []*InstanceType{b}); err == nil {
		t.Error("offering in an unknown zone accepted")
	}
	if got := a.Allocatable()[scheduling.CPU]; got != 1930 {
		t.Errorf("hand-built x1.a allocatable cpu %d, want 1930", got)
	}
}

func TestShapesCarryTheNetworkInterfaceLimitsOfTheData(t *testing.T) {
	c, err := Load("us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	it, ok := c.Get("m5.large")
	if !ok {
		t.Fatal("m5.large missing")
	}
	if it.Shape.ENIs != 3 || it.Shape.IPv4PerENI != 10 {
		t.Fatalf("m5.large: %d ENIs × %d IPv4 addresses, want 3 × 10", it.Shape.ENIs, it.Shape.IPv4PerENI)
	}
	// The VPC CNI's formula reproduces the data's max pods from the limits.
	if got := it.Shape.ENIs*(it.Shape.IPv4PerENI-1) + 2; got != it.Shape.MaxPods {
		t.Fatalf("ENIs × (IPv4 − 1) + 2 = %d, max pods %d", got, it.Shape.MaxPods)
	}
}

func TestMaxPodsIsTheVPCCNIFormulaOnTheDefaultNetworkCard(t *testing.T) {
	c, err := Load("us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	it, _ := c.Get("p5.48xlarge")
	if it.Shape.ENIs != 64 || it.Shape.CardENIs != 2 {
		t.Fatalf("p5.48xlarge: %d ENIs, %d on card 0; want 64 and 2", it.Shape.ENIs, it.Shape.CardENIs)
	}
	withLimits := 0
	for _, it := range c.Types {
		s := &it.Shape
		if s.CardENIs == 0 {
			continue
		}
		withLimits++
		if s.CardENIs > s.ENIs {
			t.Errorf("%s: %d ENIs on card 0 of %d in all", it.Name, s.CardENIs, s.ENIs)
		}
		if got := s.CardENIs*(s.IPv4PerENI-1) + 2; got != s.MaxPods {
			t.Errorf("%s: card-0 ENIs × (IPv4 − 1) + 2 = %d, max pods %d", it.Name, got, s.MaxPods)
		}
	}
	if withLimits < 1300 {
		t.Fatalf("only %d types carry ENI limits", withLimits)
	}
}

package cloud

import (
	"testing"
	"time"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

var (
	t0    = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	zoneA = catalog.Zone{Name: "test-1a", ID: "tst1-az1"}
	zoneB = catalog.Zone{Name: "test-1b", ID: "tst1-az2"}
)

func offering(z catalog.Zone, capacityType string, price float64) catalog.Offering {
	return catalog.Offering{Zone: z.Name, ZoneID: z.ID, CapacityType: capacityType, Price: price, Available: true}
}

func reserved(z catalog.Zone, id string, count int, window catalog.Window) catalog.Offering {
	return catalog.Offering{
		Zone: z.Name, ZoneID: z.ID, CapacityType: apisv1.CapacityTypeReserved, Price: 0.000001,
		Available: count > 0, ReservationID: id, ReservationCapacity: count, Window: window,
	}
}

// testCatalog is a small hand-made catalog: three general-purpose sizes and a GPU type in two
// zones, on demand and spot, plus an open reservation, a targeted one and a capacity block
// (from t0+1h to t0+3h), each of two instances.
func testCatalog(t testing.TB) *catalog.Catalog {
	t.Helper()
	block := catalog.Window{Start: t0.Add(time.Hour), End: t0.Add(3 * time.Hour)}
	type spec struct {
		name      string
		vcpu      int
		mem       int64
		gpus      int
		od, spot  float64
		bucket    int
		reserved  []catalog.Offering
		spotZones []catalog.Zone
	}
	specs := []spec{
		{name: "m.small", vcpu: 2, mem: 4096, od: 0.10, spot: 0.03, bucket: 0, spotZones: []catalog.Zone{zoneA, zoneB},
			reserved: []catalog.Offering{reserved(zoneA, "cr-open", 2, catalog.Window{}), reserved(zoneB, "cr-targeted", 2, catalog.Window{})}},
		{name: "m.large", vcpu: 4, mem: 8192, od: 0.20, spot: 0.07, bucket: 2, spotZones: []catalog.Zone{zoneA, zoneB}},
		{name: "m.xlarge", vcpu: 8, mem: 16384, od: 0.40, spot: 0.12, bucket: 4, spotZones: []catalog.Zone{zoneB}},
		{name: "g.large", vcpu: 8, mem: 32768, gpus: 1, od: 1.00, spot: 0.40, bucket: 3, spotZones: []catalog.Zone{zoneA},
			reserved: []catalog.Offering{reserved(zoneB, "cb-gpu", 2, block)}},
	}
	var types []*catalog.InstanceType
	for _, s := range specs {
		shape := catalog.Shape{Family: s.name[:1], Category: s.name[:1], Size: s.name[2:], Arch: "amd64", VCPU: s.vcpu, MemoryMiB: s.mem, MaxPods: 29}
		if s.gpus > 0 {
			shape.GPUCount, shape.GPUName, shape.GPUManufacturer, shape.GPUMemoryMiB = s.gpus, "t4", "nvidia", 16384
		}
		offs := []catalog.Offering{offering(zoneA, apisv1.CapacityTypeOnDemand, s.od), offering(zoneB, apisv1.CapacityTypeOnDemand, s.od*1.01)}
		for _, z := range s.spotZones {
			offs = append(offs, offering(z, apisv1.CapacityTypeSpot, s.spot))
		}
		offs = append(offs, s.reserved...)
		it, err := catalog.NewInstanceType(s.name, "test-1", shape, offs)
		if err != nil {
			t.Fatal(err)
		}
		it.SpotAdvice = catalog.SpotAdvice{Known: true, Bucket: s.bucket}
		types = append(types, it)
	}
	c, err := catalog.New("test-1", []catalog.Zone{zoneA, zoneB}, types)
	if err != nil {
		t.Fatal(err)
	}
	c.Reservations = []catalog.Reservation{
		{ID: "cr-open", InstanceType: "m.small", Zone: zoneA.Name, Count: 2},
		{ID: "cr-targeted", InstanceType: "m.small", Zone: zoneB.Name, Count: 2},
		{ID: "cb-gpu", InstanceType: "g.large", Zone: zoneB.Name, Count: 2, Window: block},
	}
	return c
}

func testConfig(t testing.TB) ClassConfig {
	return ClassConfig{
		Catalog:  testCatalog(t),
		Targeted: []string{"cr-targeted"},
		Delays:   Delays{Boot: 2 * time.Second, Registration: time.Second, DevicePlugin: 3 * time.Second},
		Interruptions: Interruptions{
			RebalanceLead: 5 * time.Minute, MaintenanceNotice: 10 * time.Minute, Scale: 1,
		},
	}
}

func newTestCloud(t testing.TB, cfg ClassConfig) *Cloud {
	t.Helper()
	c := New(Options{IDSeed: 1})
	if err := c.SetClass("default", cfg); err != nil {
		t.Fatal(err)
	}
	return c
}

func reqs(rs ...scheduling.Requirement) scheduling.Requirements {
	return scheduling.NewRequirements(rs...)
}

func launch(t testing.TB, c *Cloud, at time.Time, rs ...scheduling.Requirement) Instance {
	t.Helper()
	inst, err := c.Launch(LaunchRequest{Class: "default", Requirements: reqs(rs...)}, at)
	if err != nil {
		t.Fatalf("launch %v: %v", rs, err)
	}
	return inst
}

func onDemand() scheduling.Requirement {
	return scheduling.In(apisv1.CapacityTypeLabelKey, apisv1.CapacityTypeOnDemand)
}

func capacityTypes(ts ...string) scheduling.Requirement {
	return scheduling.In(apisv1.CapacityTypeLabelKey, ts...)
}

func types(names ...string) scheduling.Requirement {
	return scheduling.In(apisv1.LabelInstanceType, names...)
}

func zones(names ...string) scheduling.Requirement { return scheduling.In(apisv1.LabelZone, names...) }

func offeringOf(i Instance) string {
	return i.Type.Name + "/" + i.Offering.Zone + "/" + i.Offering.CapacityType + "/" + i.Offering.ReservationID
}

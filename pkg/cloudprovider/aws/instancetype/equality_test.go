package instancetype

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// The endpoint serves the embedded catalog; List over it must give back exactly the
// catalog's types: the same names, labels, requirements, capacity, overhead, offerings and
// prices, built from what DescribeInstanceTypes, DescribeInstanceTypeOfferings, GetProducts
// and DescribeSpotPriceHistory say.
func TestListOverTheEndpointIsTheEmbeddedCatalog(t *testing.T) {
	for _, region := range catalog.Regions() {
		t.Run(region, func(t *testing.T) {
			cat, err := catalog.Load(region)
			if err != nil {
				t.Fatal(err)
			}
			f := newFixture(t, cat, Options{})
			got := f.list(t, f.nodeClass("default"))
			if diffs := sameTypes(got, cat.Types); len(diffs) > 0 {
				t.Fatalf("%d types listed; differences from the embedded catalog:\n%s", len(got), strings.Join(diffs, "\n"))
			}
		})
	}
}

func TestListInSomeZonesIsTheEmbeddedCatalogInThoseZones(t *testing.T) {
	f := newFixture(t, nil, Options{})
	want, err := catalog.Load("us-east-1", catalog.WithZones("us-east-1b", "us-east-1d"))
	if err != nil {
		t.Fatal(err)
	}
	got := f.list(t, f.nodeClass("two-zones", "us-east-1d", "us-east-1b"))
	if diffs := sameTypes(got, want.Types); len(diffs) > 0 {
		t.Fatalf("differences:\n%s", strings.Join(diffs, "\n"))
	}
	for _, it := range got {
		for _, o := range it.Offerings {
			if o.Zone != "us-east-1b" && o.Zone != "us-east-1d" {
				t.Fatalf("%s offered in %s", it.Name, o.Zone)
			}
		}
	}
}

// Reservations in the NodeClass's status become reserved offerings exactly as the embedded
// catalog makes them from the same reservations, capacity blocks with their end; expiring ones
// and ones in zones without a subnet are left out.
func TestReservationsAreReservedOfferingsAsTheCatalogMakesThem(t *testing.T) {
	end := epoch.Add(48 * time.Hour).Truncate(time.Second)
	rs := []catalog.Reservation{
		{ID: "cr-0a1", InstanceType: "m5.large", Zone: "us-east-1a", Count: 3},
		{ID: "cr-0b2", InstanceType: "m5.large", Zone: "us-east-1b", Count: 1},
		{ID: "cr-0c3", InstanceType: "p5e.48xlarge", Zone: "us-east-1a", Count: 2, Window: catalog.Window{End: end}},
	}
	cat, err := catalog.Load("us-east-1", catalog.WithReservations(rs...))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, cat, Options{})
	nc := f.nodeClass("reserved")
	status := func(r catalog.Reservation) awsv1.CapacityReservation {
		x := awsv1.CapacityReservation{ID: r.ID, InstanceType: r.InstanceType, AvailabilityZone: r.Zone, InstanceMatchCriteria: "open", OwnerID: "111122223333", ReservationType: awsv1.CapacityReservationTypeDefault, State: awsv1.CapacityReservationStateActive}
		if !r.Window.End.IsZero() {
			x.ReservationType, x.EndTime = awsv1.CapacityReservationTypeCapacityBlock, &metav1.Time{Time: r.Window.End}
		}
		return x
	}
	for _, r := range rs {
		nc.Status.CapacityReservations = append(nc.Status.CapacityReservations, status(r))
	}
	got := f.list(t, nc)
	if diffs := sameTypes(got, cat.Types); len(diffs) > 0 {
		t.Fatalf("differences:\n%s", strings.Join(diffs, "\n"))
	}
	p5e := find(t, got, "p5e.48xlarge")
	if len(p5e.Offerings) != 1 || p5e.Offerings[0].ReservationCapacity != 2 || !p5e.Offerings[0].Window.End.Equal(end) {
		t.Fatalf("capacity block offering %+v", p5e.Offerings)
	}
	// With EC2 down past the reservation TTL, the last free capacity stays and the call is
	// not repeated on every List.
	f.Down()
	f.clock.Step(DefaultReservationTTL)
	got = f.list(t, nc)
	if diffs := sameTypes(got, cat.Types); len(diffs) > 0 {
		t.Fatalf("with EC2 down:\n%s", strings.Join(diffs, "\n"))
	}
	before := f.Calls()
	f.list(t, nc)
	if n := f.Calls() - before; n != 0 {
		t.Fatalf("%d calls on the next List while EC2 is down", n)
	}
	f.Up()
	f.clock.Step(DefaultTTL)
	// Expiring, and outside the subnets' zones: no offering.
	nc.Status.CapacityReservations[2].State = awsv1.CapacityReservationStateExpiring
	nc.Status.Subnets = nc.Status.Subnets[:1] // us-east-1a only
	got = f.list(t, nc)
	m5 := find(t, got, "m5.large")
	reserved := 0
	for _, o := range m5.Offerings {
		if o.ReservationID != "" {
			reserved++
			if o.ReservationID != "cr-0a1" {
				t.Errorf("reservation %s offered without a subnet in its zone", o.ReservationID)
			}
		}
	}
	if reserved != 1 || len(find(t, got, "p5e.48xlarge").Offerings) != 0 {
		t.Fatalf("m5.large reserved offerings %d, p5e.48xlarge offerings %v", reserved, find(t, got, "p5e.48xlarge").Offerings)
	}
}

// Offline (tenon plan), an EC2NodeClass without status gets the embedded catalog's types in
// every zone, and its kubelet settings apply.
func TestEmbeddedIsTheCatalogWithTheNodeClassSettings(t *testing.T) {
	want, err := catalog.Load("us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	nc := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "offline"}}
	nc.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}}
	got, err := Embedded("us-east-1", nc)
	if err != nil {
		t.Fatal(err)
	}
	if diffs := sameTypes(got, want.Types); len(diffs) > 0 {
		t.Fatalf("differences:\n%s", strings.Join(diffs, "\n"))
	}
	nc.Spec.Kubelet = &awsv1.KubeletConfiguration{MaxPods: i32(20)}
	nc.Status.Subnets = []awsv1.Subnet{{ID: "subnet-1", Zone: "us-east-1c"}}
	got, err = Embedded("us-east-1", nc)
	if err != nil {
		t.Fatal(err)
	}
	m5 := find(t, got, "m5.large")
	if m5.Capacity[scheduling.Pods] != 20 {
		t.Fatalf("m5.large pods %d, want maxPods 20", m5.Capacity[scheduling.Pods])
	}
	for _, o := range m5.Offerings {
		if o.Zone != "us-east-1c" || o.ZoneID != "use1-az3" {
			t.Fatalf("offering in %s (%s), want us-east-1c (use1-az3) only", o.Zone, o.ZoneID)
		}
	}
}

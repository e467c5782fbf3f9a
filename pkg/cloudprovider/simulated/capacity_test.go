package simulated_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated"
)

func testCapacityPool(t *testing.T, e *env) {
	ctx := context.Background()
	p, _ := e.provider(t, nil)
	spec := fastSpec()
	spec.Zones = []string{"us-east-1a"}
	spec.CapacityPools = []simv1alpha1.CapacityPool{{InstanceType: "m5.large", CapacityType: "on-demand", Capacity: 1}}
	e.nodeClass(t, "pool", spec)
	onDemand := req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand)
	m5large := req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large")

	first, err := p.Create(ctx, e.claim(t, "pool-1", "pool", m5large, onDemand))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Create(ctx, e.claim(t, "pool-2", "pool", m5large, onDemand))
	var ice *cloudprovider.InsufficientCapacityError
	if !errors.As(err, &ice) || fmt.Sprint(ice.Offerings) != "[m5.large/us-east-1a/on-demand]" {
		t.Fatalf("second launch into a pool of 1: %v", err)
	}
	if o := offeringOf(t, p, nodePool("pool"), "m5.large", apisv1.CapacityTypeOnDemand, ""); o.Available {
		t.Error("GetInstanceTypes shows the full pool's offering available")
	}
	if o := offeringOf(t, p, nodePool("pool"), "m5.large", apisv1.CapacityTypeSpot, ""); !o.Available {
		t.Error("GetInstanceTypes shows the spot offering, outside the pool, unavailable")
	}
	either := req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large", "m5.xlarge")
	third, err := p.Create(ctx, e.claim(t, "pool-3", "pool", either, onDemand))
	if err != nil {
		t.Fatal(err)
	}
	if typ := third.Labels[apisv1.LabelInstanceType]; typ != "m5.xlarge" {
		t.Errorf("the claim allowing another type launched %s", typ)
	}
	if err := p.Delete(ctx, first); err != nil {
		t.Fatal(err)
	}
	if o := offeringOf(t, p, nodePool("pool"), "m5.large", apisv1.CapacityTypeOnDemand, ""); !o.Available {
		t.Error("after the pool's instance terminated its offering is still unavailable")
	}
	if err := p.Delete(ctx, third); err != nil {
		t.Fatal(err)
	}
}

func testTargetedReservation(t *testing.T, e *env) {
	ctx := context.Background()
	p, _ := e.provider(t, nil)
	spec := fastSpec()
	spec.Zones = []string{"us-east-1a"}
	spec.Reservations = []simv1alpha1.Reservation{{ID: "cr-0abc", InstanceType: "m5.large", Zone: "us-east-1a", Count: 1, Type: simv1alpha1.ReservationTargeted}}
	e.nodeClass(t, "targeted", spec)
	m5large := req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large")
	reservedOrOD := req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeReserved, apisv1.CapacityTypeOnDemand)
	naming := req(apisv1.LabelCapacityReservationID, corev1.NodeSelectorOpIn, "cr-0abc")

	plain, err := p.Create(ctx, e.claim(t, "targeted-1", "targeted", m5large, reservedOrOD))
	if err != nil {
		t.Fatal(err)
	}
	if ct, res := plain.Labels[apisv1.CapacityTypeLabelKey], plain.Labels[apisv1.LabelCapacityReservationID]; ct != apisv1.CapacityTypeOnDemand || res != "" {
		t.Errorf("a claim not naming the reservation got %s %q", ct, res)
	}
	if o := offeringOf(t, p, nodePool("targeted"), "m5.large", apisv1.CapacityTypeReserved, "cr-0abc"); o.ReservationID != "" {
		t.Error("GetInstanceTypes for a NodePool not naming the targeted reservation offers it")
	}
	np := nodePool("targeted", naming)
	if o := offeringOf(t, p, np, "m5.large", apisv1.CapacityTypeReserved, "cr-0abc"); !o.Available || o.ReservationCapacity != 1 {
		t.Errorf("GetInstanceTypes for a NodePool naming it: %+v", o)
	}
	named, err := p.Create(ctx, e.claim(t, "targeted-2", "targeted", m5large, reservedOrOD, naming))
	if err != nil {
		t.Fatal(err)
	}
	if ct, res := named.Labels[apisv1.CapacityTypeLabelKey], named.Labels[apisv1.LabelCapacityReservationID]; ct != apisv1.CapacityTypeReserved || res != "cr-0abc" {
		t.Errorf("a claim naming the reservation got %s %q", ct, res)
	}
	if o := offeringOf(t, p, np, "m5.large", apisv1.CapacityTypeReserved, "cr-0abc"); o.Available || o.ReservationCapacity != 0 {
		t.Errorf("the used reservation shows %+v", o)
	}
	_, err = p.Create(ctx, e.claim(t, "targeted-3", "targeted", m5large, naming))
	if !cloudprovider.IsInsufficientCapacity(err) {
		t.Errorf("a second claim into a reservation of 1: %v", err)
	}
	for _, c := range []*apisv1.NodeClaim{plain, named} {
		if err := p.Delete(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
}

// offeringOf finds an offering in GetInstanceTypes(np); the zero Offering when absent.
func offeringOf(t *testing.T, p *simulated.Provider, np *apisv1.NodePool, typ, capacityType, reservation string) catalog.Offering {
	t.Helper()
	types, err := p.GetInstanceTypes(context.Background(), np)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range types {
		if it.Name != typ {
			continue
		}
		for _, o := range it.Offerings {
			if o.CapacityType == capacityType && o.ReservationID == reservation {
				return o
			}
		}
	}
	return catalog.Offering{}
}

// Create launches around the offerings tenon's unavailable-offerings cache holds, and reports
// insufficient capacity when they are all it could use.
func testUnavailableOfferings(t *testing.T, e *env) {
	ctx := context.Background()
	unavailable := cloudprovider.NewUnavailableOfferings(nil)
	p, err := simulated.New(simulated.Options{Client: e.client, Unavailable: unavailable})
	if err != nil {
		t.Fatal(err)
	}
	spec := fastSpec()
	spec.Zones = []string{"us-east-1a", "us-east-1b"}
	e.nodeClass(t, "avoid", spec)
	spot := req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeSpot)
	m5large := req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large")

	first, err := p.Create(ctx, e.claim(t, "avoid-1", "avoid", m5large, spot))
	if err != nil {
		t.Fatal(err)
	}
	zone := first.Labels[apisv1.LabelZone]
	unavailable.MarkUnavailable(cloudprovider.Offering{InstanceType: "m5.large", Zone: zone, CapacityType: apisv1.CapacityTypeSpot}, "test", time.Hour)
	second, err := p.Create(ctx, e.claim(t, "avoid-2", "avoid", m5large, spot))
	if err != nil {
		t.Fatal(err)
	}
	if z := second.Labels[apisv1.LabelZone]; z == zone {
		t.Errorf("launched through m5.large/%s/spot, which is marked unavailable", z)
	}
	unavailable.MarkUnavailable(cloudprovider.Offering{InstanceType: "m5.large", Zone: second.Labels[apisv1.LabelZone], CapacityType: apisv1.CapacityTypeSpot}, "test", time.Hour)
	_, err = p.Create(ctx, e.claim(t, "avoid-3", "avoid", m5large, spot))
	var ice *cloudprovider.InsufficientCapacityError
	if !errors.As(err, &ice) || len(ice.Offerings) != 2 {
		t.Errorf("with both spot offerings marked unavailable: %v, want insufficient capacity naming both", err)
	}
	for _, c := range []*apisv1.NodeClaim{first, second} {
		if err := p.Delete(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
}

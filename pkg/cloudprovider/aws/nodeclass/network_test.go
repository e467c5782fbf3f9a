package nodeclass

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
)

// The placement group a class names must exist and be available; without a selector the
// condition is True.
func TestPlacementGroupMustExistAndBeAvailable(t *testing.T) {
	e := newEndpoint(t, awsapi.Options{})
	for _, pg := range []awsapi.PlacementGroup{{Name: "training"}, {Name: "building", State: "pending"}} {
		if err := e.s.AddPlacementGroup(pg); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		sel    *awsv1.PlacementGroupSelector
		status string
		msg    string
	}{
		{"none", nil, "True", ""},
		{"by name", &awsv1.PlacementGroupSelector{Name: ptr.To("training")}, "True", ""},
		{"missing name", &awsv1.PlacementGroupSelector{Name: ptr.To("nope")}, "False", `placement group "nope" not found`},
		{"missing ID", &awsv1.PlacementGroupSelector{ID: ptr.To("pg-0123456789abcdef0")}, "False", `placement group "pg-0123456789abcdef0" not found`},
		{"not available", &awsv1.PlacementGroupSelector{Name: ptr.To("building")}, "False", "not available"},
	} {
		nc := class("c", alias("al2023@latest"))
		nc.Spec.PlacementGroupSelector = tc.sel
		e.resolve(t, "1.37", nc)
		c := condition(nc, awsv1.ConditionTypePlacementGroupReady)
		if string(c.Status) != tc.status || !strings.Contains(c.Message, tc.msg) {
			t.Errorf("%s: %s %s %q, want %s %q", tc.name, c.Status, c.Reason, c.Message, tc.status, tc.msg)
		}
		if ready := condition(nc, awsv1.ConditionTypeReady); string(ready.Status) != tc.status {
			t.Errorf("%s: Ready %s, want %s", tc.name, ready.Status, tc.status)
		}
	}
}

// Subnets are ordered by free addresses, most first, then by ID.
func TestSubnetsAreOrderedByFreeAddresses(t *testing.T) {
	cat := mustCatalog(t)
	net := awsapi.DefaultNetwork(cluster, cat.Zones[:3])
	net.Subnets[0].CIDR = "10.0.0.0/24"  // 251 free
	net.Subnets[1].CIDR = "10.0.32.0/20" // 4091 free
	net.Subnets[2].CIDR = "10.0.64.0/22" // 1019 free
	e := newEndpoint(t, awsapi.Options{Catalog: cat, Network: net})
	nc := class("c", alias("al2023@latest"))
	e.resolve(t, "1.37", nc)
	var got []string
	for _, s := range nc.Status.Subnets {
		got = append(got, s.ID)
	}
	want := []string{net.Subnets[1].ID, net.Subnets[2].ID, net.Subnets[0].ID}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("subnets %v, want %v (by free addresses)", got, want)
	}
}

// Capacity reservation terms select by ID, by tags with the owner, and by match criteria;
// an ID that is gone selects nothing and the condition stays True.
func TestCapacityReservationTerms(t *testing.T) {
	cat, err := catalog.Load("us-east-1", catalog.WithReservations(
		catalog.Reservation{ID: "cr-0000000000000c001", InstanceType: "m5.large", Zone: "us-east-1a", Count: 2},
		catalog.Reservation{ID: "cr-0000000000000c002", InstanceType: "c5.large", Zone: "us-east-1b", Count: 1},
	))
	if err != nil {
		t.Fatal(err)
	}
	e := newEndpoint(t, awsapi.Options{Catalog: cat, Targeted: []string{"cr-0000000000000c002"},
		ReservationTags: map[string]map[string]string{"cr-0000000000000c001": {"team": "ml"}, "cr-0000000000000c002": {"team": "web"}}})
	for _, tc := range []struct {
		name  string
		terms []awsv1.CapacityReservationSelectorTerm
		want  string
	}{
		{"id", []awsv1.CapacityReservationSelectorTerm{{ID: "cr-0000000000000c002"}}, "cr-0000000000000c002"},
		{"tags and owner", []awsv1.CapacityReservationSelectorTerm{{Tags: map[string]string{"team": "*"}, OwnerID: awsapi.DefaultAccount}}, "cr-0000000000000c001,cr-0000000000000c002"},
		{"another owner", []awsv1.CapacityReservationSelectorTerm{{Tags: map[string]string{"team": "*"}, OwnerID: "999988887777"}}, ""},
		{"targeted", []awsv1.CapacityReservationSelectorTerm{{InstanceMatchCriteria: "targeted"}}, "cr-0000000000000c002"},
		{"gone", []awsv1.CapacityReservationSelectorTerm{{ID: "cr-00000000000000bad"}}, ""},
	} {
		nc := class("c", alias("al2023@latest"))
		nc.Spec.CapacityReservationSelectorTerms = tc.terms
		e.resolve(t, "1.37", nc)
		var got []string
		for _, cr := range nc.Status.CapacityReservations {
			got = append(got, cr.ID)
		}
		if strings.Join(got, ",") != tc.want {
			t.Errorf("%s: reservations %v, want %s", tc.name, got, tc.want)
		}
		if c := condition(nc, awsv1.ConditionTypeCapacityReservationsReady); c.Status != "True" {
			t.Errorf("%s: CapacityReservationsReady %s %q", tc.name, c.Status, c.Message)
		}
	}
}

// Kubelet values the schema cannot check fail validation with every bad value named, and the
// class is not Ready; good values pass.
func TestKubeletValuesTheKubeletWouldRefuseFailValidation(t *testing.T) {
	e := newEndpoint(t, awsapi.Options{})
	nc := class("c", alias("al2023@latest"))
	nc.Spec.Kubelet = &awsv1.KubeletConfiguration{
		SystemReserved: map[string]string{"cpu": "100m", "memory": "lots", "pid": "1.5"},
		KubeReserved:   map[string]string{"ephemeral-storage": "1Gi"},
		EvictionHard:   map[string]string{"memory.available": "5%", "nodefs.available": "150%"},
		EvictionSoft:   map[string]string{"memory.available": "500Mi"},
	}
	e.resolve(t, "1.37", nc)
	c := condition(nc, awsv1.ConditionTypeValidationSucceeded)
	for _, want := range []string{`systemReserved[memory]: "lots"`, `systemReserved[pid]: "1.5"`, `evictionHard[nodefs.available]: "150%"`} {
		if c.Status != "False" || c.Reason != ReasonInvalidKubeletConfiguration || !strings.Contains(c.Message, want) {
			t.Errorf("ValidationSucceeded %s %s %q, want False naming %s", c.Status, c.Reason, c.Message, want)
		}
	}
	if strings.Contains(c.Message, "cpu") || strings.Contains(c.Message, "ephemeral-storage") || strings.Contains(c.Message, "500Mi") {
		t.Errorf("good values named: %q", c.Message)
	}
	if ready := condition(nc, awsv1.ConditionTypeReady); ready.Status != "False" || !strings.Contains(ready.Message, "ValidationSucceeded") {
		t.Errorf("Ready %s %q", ready.Status, ready.Message)
	}
	nc.Spec.Kubelet.SystemReserved = map[string]string{"memory": "1Gi", "pid": "100"}
	nc.Spec.Kubelet.EvictionHard = map[string]string{"nodefs.available": "10%"}
	e.resolve(t, "1.37", nc)
	if c := condition(nc, awsv1.ConditionTypeValidationSucceeded); c.Status != "True" {
		t.Errorf("fixed kubelet: %s %q", c.Status, c.Message)
	}
}

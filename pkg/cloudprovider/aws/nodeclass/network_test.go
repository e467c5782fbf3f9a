package nodeclass

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
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

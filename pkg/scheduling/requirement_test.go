package scheduling

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func req(t *testing.T, key string, op corev1.NodeSelectorOperator, values ...string) Requirement {
	t.Helper()
	r, err := NewRequirement(key, op, values...)
	if err != nil {
		t.Fatalf("NewRequirement(%s %s %v): %v", key, op, values, err)
	}
	return r
}

func TestNewRequirementErrors(t *testing.T) {
	for _, tc := range []struct {
		op     corev1.NodeSelectorOperator
		values []string
	}{
		{corev1.NodeSelectorOpIn, nil},
		{corev1.NodeSelectorOpExists, []string{"a"}},
		{corev1.NodeSelectorOpDoesNotExist, []string{"a"}},
		{corev1.NodeSelectorOpGt, nil},
		{corev1.NodeSelectorOpGt, []string{"1", "2"}},
		{corev1.NodeSelectorOpLt, []string{"x"}},
		{OpGte, []string{"1.5"}},
		{"Near", []string{"1"}},
	} {
		if _, err := NewRequirement("k", tc.op, tc.values...); err == nil {
			t.Errorf("NewRequirement(k %s %v) succeeded, want an error", tc.op, tc.values)
		}
	}
}

// TestRequirementMatches is the operator table: which label states each operator admits.
func TestRequirementMatches(t *testing.T) {
	type state struct {
		v       string
		present bool
	}
	absent := state{}
	val := func(v string) state { return state{v, true} }
	for _, tc := range []struct {
		name string
		r    Requirement
		yes  []state
		no   []state
	}{
		{"In", req(t, "k", corev1.NodeSelectorOpIn, "a", "b"), []state{val("a"), val("b")}, []state{val("c"), absent}},
		{"NotIn", req(t, "k", corev1.NodeSelectorOpNotIn, "a"), []state{val("b"), absent}, []state{val("a")}},
		{"Exists", req(t, "k", corev1.NodeSelectorOpExists), []state{val("a"), val("")}, []state{absent}},
		{"DoesNotExist", req(t, "k", corev1.NodeSelectorOpDoesNotExist), []state{absent}, []state{val("a")}},
		{"Gt", req(t, "k", corev1.NodeSelectorOpGt, "4"), []state{val("5"), val("05"), val("100")}, []state{val("4"), val("x"), absent}},
		{"Gte", req(t, "k", OpGte, "4"), []state{val("4"), val("5")}, []state{val("3"), absent}},
		{"Lt", req(t, "k", corev1.NodeSelectorOpLt, "4"), []state{val("3"), val("0")}, []state{val("4"), val("-1"), val("a"), absent}},
		{"Lte", req(t, "k", OpLte, "4"), []state{val("4")}, []state{val("5"), absent}},
		{"Lt 0 allows nothing", req(t, "k", corev1.NodeSelectorOpLt, "0"), nil, []state{val("0"), val("-1"), absent}},
		{"Unconstrained", Unconstrained("k"), []state{val("a"), absent}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, s := range tc.yes {
				if !tc.r.Matches(s.v, s.present) {
					t.Errorf("%s should admit %+v", tc.r, s)
				}
			}
			for _, s := range tc.no {
				if tc.r.Matches(s.v, s.present) {
					t.Errorf("%s should not admit %+v", tc.r, s)
				}
			}
		})
	}
}

func TestRequirementIntersect(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b Requirement
		want Requirement
	}{
		{"In∩In", In("k", "a", "b", "c"), In("k", "b", "c", "d"), In("k", "b", "c")},
		{"In∩NotIn", In("k", "a", "b"), NotIn("k", "a"), In("k", "b")},
		{"NotIn∩NotIn keeps absence", NotIn("k", "a"), NotIn("k", "b"), NotIn("k", "a", "b")},
		{"NotIn∩Exists", NotIn("k", "a"), Exists("k"), req(t, "k", corev1.NodeSelectorOpNotIn, "a").Intersect(Exists("k"))},
		{"In∩DoesNotExist is empty", In("k", "a"), DoesNotExist("k"), emptyRequirement("k")},
		{"NotIn∩DoesNotExist is absent", NotIn("k", "a"), DoesNotExist("k"), DoesNotExist("k")},
		{"Gt∩In filters", req(t, "k", corev1.NodeSelectorOpGt, "2"), In("k", "1", "3", "x", "10"), In("k", "10", "3")},
		{"Gt∩Lt crossing is empty", req(t, "k", corev1.NodeSelectorOpGt, "5"), req(t, "k", corev1.NodeSelectorOpLt, "5"), emptyRequirement("k")},
		{"Gte∩Lte same point", req(t, "k", OpGte, "5"), req(t, "k", OpLte, "5"), Requirement{Key: "k", complement: true, hasMin: true, min: 5, hasMax: true, max: 5}},
		{"Gt∩NotIn drops excluded outside bounds", req(t, "k", corev1.NodeSelectorOpGt, "5"), NotIn("k", "1", "7", "x"), Requirement{Key: "k", complement: true, hasMin: true, min: 6, values: []string{"7"}}},
		{"minValues takes the larger", Requirement{Key: "k", complement: true, MinValues: 2}, Requirement{Key: "k", complement: true, MinValues: 3}, Requirement{Key: "k", complement: true, MinValues: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.a.Intersect(tc.b)
			if !got.Equal(tc.want) {
				t.Errorf("%s ∩ %s = %s (%#v), want %s (%#v)", tc.a, tc.b, got, got, tc.want, tc.want)
			}
			if back := tc.b.Intersect(tc.a); !back.Equal(got) {
				t.Errorf("not commutative: %s vs %s", got, back)
			}
		})
	}
}

func TestRequirementAnyAndLabels(t *testing.T) {
	for _, tc := range []struct {
		r    Requirement
		want string
	}{
		{In("k", "b", "a"), "a"},
		{DoesNotExist("k"), ""},
		{req(t, "k", corev1.NodeSelectorOpGt, "3").Intersect(NotIn("k", "4", "5")), "6"},
		{Exists("k").Intersect(NotIn("k", "tenon-0")), "tenon-1"},
		{req(t, "k", corev1.NodeSelectorOpGt, "5").Intersect(req(t, "k", corev1.NodeSelectorOpLt, "5")), ""},
	} {
		got := tc.r.Any()
		if got != tc.want {
			t.Errorf("%s.Any() = %q, want %q", tc.r, got, tc.want)
		}
		if got != "" && !tc.r.Has(got) {
			t.Errorf("%s.Any() = %q is not allowed by it", tc.r, got)
		}
	}
}

func TestRequirementNodeSelectorRoundTrip(t *testing.T) {
	for _, r := range []Requirement{
		In("k", "a", "b"), NotIn("k", "a"), Exists("k"), DoesNotExist("k"),
		req(t, "k", corev1.NodeSelectorOpGt, "3"), req(t, "k", OpLte, "9").Intersect(NotIn("k", "4")),
		NotIn("k", "a").Intersect(Exists("k")), emptyRequirement("k"),
	} {
		back, err := FromNodeSelectorRequirements(r.NodeSelectorRequirements()...)
		if err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		got, _ := back.Get("k")
		if !got.Equal(r) {
			t.Errorf("round trip of %s gave %s", r, got)
		}
	}
}

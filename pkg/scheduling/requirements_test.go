package scheduling

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

func TestCompatible(t *testing.T) {
	zoneA := In(apisv1.LabelZone, "us-east-1a")
	for _, tc := range []struct {
		name      string
		node, pod Requirements
		undefined Undefined
		wantKey   string // "" means compatible
		undef     bool
	}{
		{"same value", NewRequirements(zoneA), NewRequirements(zoneA), nil, "", false},
		{"disjoint values", NewRequirements(zoneA), NewRequirements(In(apisv1.LabelZone, "us-east-1b")), nil, apisv1.LabelZone, false},
		{"pod requires an undefined custom label", Requirements{}, NewRequirements(In("team", "a")), nil, "team", true},
		{"pod excludes an undefined custom label", Requirements{}, NewRequirements(NotIn("team", "a")), nil, "", false},
		{"pod DoesNotExist on an undefined label", Requirements{}, NewRequirements(DoesNotExist("team")), nil, "", false},
		{"undefined well-known label is free", Requirements{}, NewRequirements(In(apisv1.LabelInstanceFamily, "g5")), AllowUndefinedWellKnown, "", false},
		{"undefined well-known label, pod asks nothing possible", Requirements{}, NewRequirements(In(apisv1.LabelZone, "a").Intersect(In(apisv1.LabelZone, "b"))), AllowUndefinedWellKnown, apisv1.LabelZone, false},
		{"node NotIn vs pod NotIn: both absent", NewRequirements(NotIn("k", "a")), NewRequirements(NotIn("k", "b")), nil, "", false},
		{"node DoesNotExist vs pod Exists", NewRequirements(DoesNotExist("k")), NewRequirements(Exists("k")), nil, "k", false},
		{"node empty requirement fails alone", NewRequirements(In("k", "a").Intersect(In("k", "b"))), Requirements{}, nil, "k", false},
		{"a single integer left by bounds", NewRequirements(MustRequirement("k", OpGte, "5").Intersect(MustRequirement("k", OpLte, "5"))), NewRequirements(Exists("k")), nil, "", false},
		{"integers", NewRequirements(In(apisv1.LabelInstanceCPU, "4", "8", "16")), NewRequirements(MustRequirement(apisv1.LabelInstanceCPU, corev1.NodeSelectorOpGt, "8")), nil, "", false},
		{"integers, none above", NewRequirements(In(apisv1.LabelInstanceCPU, "4", "8")), NewRequirements(MustRequirement(apisv1.LabelInstanceCPU, corev1.NodeSelectorOpGt, "8")), nil, apisv1.LabelInstanceCPU, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Compatible(tc.node, tc.pod, tc.undefined)
			if tc.wantKey == "" {
				if got != nil {
					t.Fatalf("want compatible, got %v", got)
				}
				return
			}
			if got == nil {
				t.Fatalf("want incompatible on %s, got compatible", tc.wantKey)
			}
			if got.Key != tc.wantKey || got.Undefined != tc.undef {
				t.Errorf("got %+v, want key %s undefined=%v", got, tc.wantKey, tc.undef)
			}
			var err error = got
			var inc *Incompatibility
			if !errors.As(err, &inc) || err.Error() == "" {
				t.Errorf("Incompatibility must be an error with a message")
			}
		})
	}
}

func TestRequirementsParsing(t *testing.T) {
	reqs, err := FromNodeSelectorRequirements(
		corev1.NodeSelectorRequirement{Key: "failure-domain.beta.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}},
		corev1.NodeSelectorRequirement{Key: apisv1.LabelZone, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"b"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := reqs.Get(apisv1.LabelZone); !got.Equal(In(apisv1.LabelZone, "a")) {
		t.Errorf("aliases must merge into the canonical key, got %s", reqs)
	}
	if _, err := FromNodeSelectorRequirements(corev1.NodeSelectorRequirement{Key: "k", Operator: "Bogus"}); err == nil {
		t.Error("unknown operator must fail")
	}
	if _, ok, err := FromNodeSelectorTerm(corev1.NodeSelectorTerm{}); ok || err != nil {
		t.Errorf("an empty term matches nothing: ok=%v err=%v", ok, err)
	}
	r, ok, err := FromNodeSelectorTerm(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}}}})
	if !ok || err != nil || r.Matches(map[string]string{FieldNodeName: "n1"}) != nil {
		t.Errorf("matchFields on metadata.name: ok=%v err=%v reqs=%s", ok, err, r)
	}
	if _, _, err := FromNodeSelectorTerm(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{Key: "spec.x", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}}}}); err == nil {
		t.Error("matchFields on another field must fail")
	}
}

func TestRequirementsLabels(t *testing.T) {
	reqs := NewRequirements(
		In("team", "b", "a"),
		Exists("dedicated"),
		NotIn("spot-ok", "no"),
		In(apisv1.LabelZone, "us-east-1a"),
		In(apisv1.NodePoolLabelKey, "default"),
		In("gpu.node.kubernetes.io/class", "true"),
	)
	got := reqs.Labels()
	want := map[string]string{"team": "a", "dedicated": "tenon-0", "gpu.node.kubernetes.io/class": "true"}
	if len(got) != len(want) {
		t.Fatalf("Labels() = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Labels()[%s] = %q, want %q", k, got[k], v)
		}
	}
	if inc := reqs.Without(apisv1.LabelZone).Without(apisv1.NodePoolLabelKey).Matches(got); inc != nil {
		t.Errorf("the labels must satisfy the requirements they came from: %v", inc)
	}
}

func TestPodNodeRequirements(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		NodeSelector: map[string]string{"beta.kubernetes.io/arch": "amd64"},
		Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
				{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: apisv1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}},
				{},
				{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: apisv1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"b"}}}},
			}},
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
				{Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "x", Operator: corev1.NodeSelectorOpExists}}}},
				{Weight: 50, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "y", Operator: corev1.NodeSelectorOpExists}}}},
			},
		}},
	}}
	alts, err := PodNodeRequirements(pod)
	if err != nil {
		t.Fatal(err)
	}
	if len(alts) != 2 {
		t.Fatalf("want 2 alternatives (the empty term matches nothing), got %d", len(alts))
	}
	for i, zone := range []string{"a", "b"} {
		if got, _ := alts[i].Get(apisv1.LabelZone); !got.Equal(In(apisv1.LabelZone, zone)) {
			t.Errorf("alternative %d zone = %s", i, got)
		}
		if got, _ := alts[i].Get(apisv1.LabelArch); !got.Equal(In(apisv1.LabelArch, "amd64")) {
			t.Errorf("alternative %d arch = %s (the node selector is in every alternative)", i, got)
		}
	}
	prefs, err := PodPreferredNodeRequirements(pod)
	if err != nil || len(prefs) != 2 || prefs[0].Weight != 50 {
		t.Errorf("preferences must come heaviest first: %+v %v", prefs, err)
	}
}

package disruption

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// A drifted node whose pod fits only one of the pool's three instance types, under
// `instance-type In [m5.large, m5.xlarge, m5.2xlarge] minValues 3`: with Strict, as the
// provisioner would refuse the pod a new claim, drift must not plan one (the node stays, its
// pod would fit nowhere); with BestEffort, as the provisioner would launch a relaxed claim, drift
// replaces the node with one.
func TestDriftFollowsTheMinValuesPolicy(t *testing.T) {
	for _, tc := range []struct {
		policy solver.MinValuesPolicy
		want   bool // a drift command
	}{
		{"", false},
		{solver.MinValuesStrict, false},
		{solver.MinValuesBestEffort, true},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			w := newFixture(t)
			three := 3
			types := req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large", "m5.xlarge", "m5.2xlarge")
			types.MinValues = &three
			w.pool("mv", append(families("m5"), onDemandOnly(), types))
			n := w.node("mv", "m5.2xlarge", "us-east-1a", "on-demand", pod("6", "20Gi"))
			n.Drifted = "NodePoolDrift"
			d := decide(t, w.snapshot(), Options{MinValuesPolicy: tc.policy})
			got := slices.ContainsFunc(d.Commands, func(c Command) bool { return slices.Contains(c.Candidates, n.Name) })
			if got != tc.want {
				t.Fatalf("policy %q: drift command %v, want %v (commands %+v, skips %+v)", tc.policy, got, tc.want, d.Commands, d.Skips)
			}
			if !tc.want {
				if r := skipOf(d, n.Name); r != SkipUnschedulable {
					t.Fatalf("policy %q: skip %q, want %q", tc.policy, r, SkipUnschedulable)
				}
				return
			}
			for _, c := range d.Commands {
				if len(c.Replacements) != 1 || !c.Replacements[0].MinValuesRelaxed {
					t.Fatalf("want one replacement that records its relaxed minValues, got %+v", c.Replacements)
				}
			}
		})
	}
}

// A drifted node holds two pods that prefer not to share a node (preferred pod anti-affinity
// on the hostname). With Respect (the default) the simulation keeps them apart, as the
// provisioner would: two replacements. With Ignore, as the provisioner would, one replacement
// holds both.
func TestDriftFollowsThePreferencePolicy(t *testing.T) {
	for _, tc := range []struct {
		policy       solver.PreferencePolicy
		replacements int
	}{
		{"", 2},
		{solver.PreferenceRespect, 2},
		{solver.PreferenceIgnore, 1},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			w := newFixture(t)
			w.pool("general", append(families("m5"), onDemandOnly()))
			apart := func() *corev1.Pod {
				p := pod("1", "2Gi", "app", "apart")
				p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
					PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{
						TopologyKey:   corev1.LabelHostname,
						LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "apart"}},
					}}},
				}}
				return p
			}
			n := w.node("general", "m5.xlarge", "us-east-1a", "on-demand", apart(), apart())
			n.Drifted = "NodePoolDrift"
			d := decide(t, w.snapshot(), Options{PreferencePolicy: tc.policy})
			var got []Command
			for _, c := range d.Commands {
				if slices.Contains(c.Candidates, n.Name) {
					got = append(got, c)
				}
			}
			if len(got) != 1 {
				t.Fatalf("policy %q: want one drift command, got %+v (skips %+v)", tc.policy, d.Commands, d.Skips)
			}
			if r := len(got[0].Replacements); r != tc.replacements {
				t.Fatalf("policy %q: %d replacements, want %d", tc.policy, r, tc.replacements)
			}
		})
	}
}

package disruption

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

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

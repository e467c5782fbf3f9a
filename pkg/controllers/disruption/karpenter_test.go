package disruption

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/disruption"
	"github.com/tenon-sh/tenon/pkg/solver"
)

func TestCommandLabelsAreKarpenters(t *testing.T) {
	for _, tc := range []struct {
		cmd                 disruption.Command
		reason, consolidate string
	}{
		{disruption.Command{Method: disruption.MethodEmptiness, Reason: apisv1.DisruptionReasonEmpty, Candidates: []string{"a", "b"}}, "empty", "empty"},
		{disruption.Command{Method: disruption.MethodConsolidation, Reason: apisv1.DisruptionReasonUnderutilized, Candidates: []string{"a"}}, "underutilized", "single"},
		{disruption.Command{Method: disruption.MethodConsolidation, Reason: apisv1.DisruptionReasonUnderutilized, Candidates: []string{"a", "b"}}, "underutilized", "multi"},
		{disruption.Command{Method: disruption.MethodDrift, Reason: apisv1.DisruptionReasonDrifted, Candidates: []string{"a"}}, "drifted", ""},
		{disruption.Command{Method: disruption.MethodExpiration, Candidates: []string{"a"}}, "expired", ""},
	} {
		if got := reasonLabel(tc.cmd); got != tc.reason {
			t.Errorf("%s: reason %q, want %q", tc.cmd.Method, got, tc.reason)
		}
		if got := consolidationType(tc.cmd); got != tc.consolidate {
			t.Errorf("%s with %d candidates: consolidation_type %q, want %q", tc.cmd.Method, len(tc.cmd.Candidates), got, tc.consolidate)
		}
	}
	c := decisionsTotal.WithLabelValues("replace", "underutilized", "single")
	before := testutil.ToFloat64(c)
	recordDecided(disruption.Command{Method: disruption.MethodConsolidation, Action: disruption.ActionReplace, Reason: apisv1.DisruptionReasonUnderutilized, Candidates: []string{"a"}})
	if got := testutil.ToFloat64(c); got != before+1 {
		t.Errorf("karpenter_voluntary_disruption_decisions_total{replace,underutilized,single} went %v → %v", before, got)
	}
}

func TestPassStateGauges(t *testing.T) {
	now := time.Unix(100000, 0)
	pool := &apisv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "gauges"}}
	pool.Spec.Disruption.ConsolidationPolicy = apisv1.ConsolidationPolicyWhenEmptyOrUnderutilized
	pool.Spec.Disruption.ConsolidateAfter = apisv1.NewNillableDuration(time.Minute)
	pool.Spec.Disruption.Budgets = []apisv1.Budget{{Nodes: "50%"}, {Nodes: "0", Reasons: []apisv1.DisruptionReason{apisv1.DisruptionReasonDrifted}}}
	old := now.Add(-time.Hour)
	busy := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "default"}, Spec: corev1.PodSpec{NodeName: "full"}}
	s := &disruption.Snapshot{
		Now:       now,
		NodePools: map[string]*apisv1.NodePool{"gauges": pool},
		Solver:    &solver.Snapshot{Nodes: []solver.Node{{Name: "empty"}, {Name: "full", Pods: []*corev1.Pod{busy}}, {Name: "drifted"}, {Name: "young"}}},
		Nodes: []disruption.Node{
			{Name: "empty", NodePool: "gauges", CapacityType: "spot", Price: 0.1, CreatedAt: old, Initialized: true},
			{Name: "full", NodePool: "gauges", CapacityType: "on-demand", Price: 0.5, CreatedAt: old, Initialized: true},
			{Name: "drifted", NodePool: "gauges", CapacityType: "on-demand", Price: 0.25, CreatedAt: old, Initialized: true, Drifted: "NodePoolDrifted", DoNotDisrupt: false},
			{Name: "young", NodePool: "gauges", CapacityType: "spot", Price: 0.2, CreatedAt: now, Initialized: true},
		},
	}
	recordPassState(s, 3*time.Millisecond)
	for reason, want := range map[string]float64{"empty": 2, "underutilized": 3, "drifted": 1} {
		if got := testutil.ToFloat64(eligibleNodes.WithLabelValues(reason)); got != want {
			t.Errorf("karpenter_voluntary_disruption_eligible_nodes{reason=%s} = %v, want %v", reason, got, want)
		}
	}
	for reason, want := range map[apisv1.DisruptionReason]float64{apisv1.DisruptionReasonEmpty: 2, apisv1.DisruptionReasonUnderutilized: 2, apisv1.DisruptionReasonDrifted: 0} {
		if got := testutil.ToFloat64(allowedDisruptions.WithLabelValues("gauges", string(reason))); got != want {
			t.Errorf("karpenter_nodepools_allowed_disruptions{gauges,%s} = %v, want %v", reason, got, want)
		}
	}
	if got := testutil.ToFloat64(nodesPrice.WithLabelValues("gauges", "on-demand")); got != 0.75 {
		t.Errorf("tenon_nodes_price_dollars_per_hour{gauges,on-demand} = %v, want 0.75", got)
	}
	if got := testutil.ToFloat64(nodesPrice.WithLabelValues("gauges", "spot")); got < 0.2999 || got > 0.3001 {
		t.Errorf("tenon_nodes_price_dollars_per_hour{gauges,spot} = %v, want 0.3", got)
	}
	if n := testutil.CollectAndCount(evaluationDuration, "karpenter_voluntary_disruption_decision_evaluation_duration_seconds"); n != 1 {
		t.Errorf("evaluation duration has %d series, want the pass's one", n)
	}
}

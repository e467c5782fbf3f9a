package metrics

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenon-sh/tenon/internal/version"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

func TestBuildInfoCarriesVersionAndCommit(t *testing.T) {
	v := version.Get()
	if got := testutil.ToFloat64(BuildInfo.WithLabelValues(v.Version, runtime.Version(), runtime.GOARCH, v.Commit)); got != 1 {
		t.Fatalf("karpenter_build_info{version=%q,commit=%q} = %v, want 1", v.Version, v.Commit, got)
	}
	if n := testutil.CollectAndCount(BuildInfo); n != 1 {
		t.Fatalf("karpenter_build_info has %d series, want 1", n)
	}
}

func TestNamesListsEveryRegisteredMetric(t *testing.T) {
	names := Names()
	for _, want := range []string{"karpenter_nodeclaims_created_total", "karpenter_nodeclaims_disrupted_total", "karpenter_nodes_created_total",
		"karpenter_nodes_terminated_total", "karpenter_nodeclaims_terminated_total", "karpenter_build_info", "karpenter_pods_disruption_initiated_total"} {
		if !slices.Contains(names, want) {
			t.Errorf("Names() lacks %s: %v", want, names)
		}
	}
	extra := prometheus.NewCounter(prometheus.CounterOpts{Name: "tenon_test_names_total", Help: "test"})
	MustRegister(extra)
	if !slices.Contains(Names(), "tenon_test_names_total") {
		t.Error("a metric registered through MustRegister is missing from Names()")
	}
}

func TestDisruptedCountsClaimAndPods(t *testing.T) {
	claim := &apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
		apisv1.NodePoolLabelKey: "np-disrupted", apisv1.CapacityTypeLabelKey: apisv1.CapacityTypeSpot}}}
	claim.Spec.TerminationGracePeriod = &metav1.Duration{Duration: time.Hour}
	Disrupted(claim, "underutilized", "when_empty_or_underutilized", 3)
	l := prometheus.Labels{ReasonLabel: "underutilized", NodePoolLabel: "np-disrupted", CapacityTypeLabel: apisv1.CapacityTypeSpot,
		ConsolidationPolicyLabel: "when_empty_or_underutilized", TerminationModeLabel: TerminationModeEventual}
	if got := testutil.ToFloat64(NodeClaimsDisrupted.With(l)); got != 1 {
		t.Errorf("karpenter_nodeclaims_disrupted_total%v = %v, want 1", l, got)
	}
	if got := testutil.ToFloat64(PodsDisruptionInitiated.With(l)); got != 3 {
		t.Errorf("karpenter_pods_disruption_initiated_total%v = %v, want 3", l, got)
	}
}

func TestTerminationModeFollowsGracePeriod(t *testing.T) {
	for _, tc := range []struct {
		grace *metav1.Duration
		want  string
	}{
		{nil, TerminationModeGraceful},
		{&metav1.Duration{}, TerminationModeForceful},
		{&metav1.Duration{Duration: time.Minute}, TerminationModeEventual},
	} {
		c := &apisv1.NodeClaim{}
		c.Spec.TerminationGracePeriod = tc.grace
		if got := TerminationMode(c); got != tc.want {
			t.Errorf("TerminationMode(grace %v) = %s, want %s", tc.grace, got, tc.want)
		}
	}
}

func TestSnakeCaseOfAPIValues(t *testing.T) {
	for in, want := range map[string]string{
		"WhenEmptyOrUnderutilized": "when_empty_or_underutilized", "Underutilized": "underutilized",
		"Drifted": "drifted", "SpotInterruption": "spot_interruption", "": "",
	} {
		if got := SnakeCase(in); got != want {
			t.Errorf("SnakeCase(%q) = %q, want %q", in, got, want)
		}
	}
	if got := ResourceType("ephemeral-storage"); got != "ephemeral_storage" {
		t.Errorf("ResourceType(ephemeral-storage) = %q", got)
	}
}

func TestDescribedGivesTypeAndLabels(t *testing.T) {
	want := map[string]Metric{
		"karpenter_nodeclaims_created_total": {Type: "counter", Labels: []string{"min_values_relaxed", "nodepool", "reason"}},
		"karpenter_build_info":               {Type: "gauge", Labels: []string{"commit", "goarch", "goversion", "version"}},
	}
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "tenon_test_described_seconds", Help: "test"})
	MustRegister(h)
	want["tenon_test_described_seconds"] = Metric{Type: "histogram"}
	got := map[string]Metric{}
	for _, m := range Described() {
		got[m.Name] = m
	}
	for name, w := range want {
		g := got[name]
		if g.Type != w.Type || !slices.Equal(g.Labels, w.Labels) {
			t.Errorf("%s: described as %s %v, want %s %v", name, g.Type, g.Labels, w.Type, w.Labels)
		}
	}
}

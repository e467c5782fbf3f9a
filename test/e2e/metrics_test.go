package e2e

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// sample sums, over the series of a metric whose labels include match, the values of counters
// and gauges and the observation counts of histograms and summaries; n is how many series
// matched.
func sample(t *testing.T, name string, match map[string]string) (v float64, n int) {
	t.Helper()
	mfs, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			ok := true
			for k, want := range match {
				ok = ok && l[k] == want
			}
			if !ok {
				continue
			}
			n++
			switch {
			case m.Counter != nil:
				v += m.GetCounter().GetValue()
			case m.Gauge != nil:
				v += m.GetGauge().GetValue()
			case m.Histogram != nil:
				v += float64(m.GetHistogram().GetSampleCount())
			case m.Summary != nil:
				v += float64(m.GetSummary().GetSampleCount())
			}
		}
	}
	return v, n
}

type probe struct {
	name  string
	match map[string]string
}

func (p probe) String() string { return fmt.Sprintf("%s%v", p.name, p.match) }

// A Karpenter user's metrics move with what happens on the cluster: provisioning two nodes for
// two spread pods counts their NodeClaims, Nodes and provider calls and publishes their state;
// scaling to zero counts the emptiness decision, the disruptions and the terminations.
func TestKarpenterMetricsFollowProvisioningAndDisruption(t *testing.T) {
	opts := disruptionOptions()
	opts.Metrics.Interval = 200 * time.Millisecond
	opts.Provisioning.Bound = true
	pool := "metrics"
	on := map[string]string{"nodepool": pool}
	counters := []probe{
		{"karpenter_nodeclaims_created_total", map[string]string{"nodepool": pool, "reason": "provisioned", "min_values_relaxed": "false"}},
		{"karpenter_nodes_created_total", on},
		{"karpenter_cloudprovider_duration_seconds", map[string]string{"method": "Create", "controller": "nodeclaim.lifecycle", "provider": "simulated"}},
		{"karpenter_cloudprovider_duration_seconds", map[string]string{"method": "GetInstanceTypes", "controller": "provisioner"}},
		{"karpenter_scheduler_scheduling_duration_seconds", map[string]string{"controller": "provisioner"}},
		{"karpenter_provisioner_scheduling_duration_seconds", map[string]string{"controller": "provisioner"}},
		{"karpenter_pods_startup_duration_seconds", nil},
		{"tenon_provisioning_planned_price_dollars_per_hour_total", nil},
		{"tenon_provisioning_lower_bound_dollars_per_hour_total", nil},
		{"karpenter_voluntary_disruption_decision_evaluation_duration_seconds", map[string]string{"reason": "all"}},
	}
	before := map[string]float64{}
	for _, p := range counters {
		before[p.String()], _ = sample(t, p.name, p.match)
	}
	e := start(t, opts)
	np := nodePool(pool, "default", []string{"m5"}, budgets(apisv1.Budget{Nodes: "100%"}))
	np.Spec.Limits = apisv1.Limits{corev1.ResourceCPU: resource.MustParse("1000")}
	e.create(nodeClass("default"), np, deployment("mspread", 2, "1", "1Gi", inPool(pool), spreadByHost("mspread")))
	pods := e.podsRunning("mspread", 2, 90*time.Second)

	e.eventually(30*time.Second, "the provisioning metrics moved", func() (bool, string) {
		for _, p := range counters {
			if v, _ := sample(t, p.name, p.match); v <= before[p.String()] {
				return false, fmt.Sprintf("%s still %v", p, v)
			}
		}
		if v, _ := sample(t, "karpenter_nodeclaims_created_total", counters[0].match); v != before[counters[0].String()]+2 {
			return false, fmt.Sprintf("karpenter_nodeclaims_created_total rose by %v, want 2", v-before[counters[0].String()])
		}
		return true, ""
	})
	e.eventually(30*time.Second, "the cluster-state gauges published", func() (bool, string) {
		for _, g := range []struct {
			p    probe
			want func(v float64, n int) bool
		}{
			{probe{"karpenter_cluster_state_synced", nil}, func(v float64, n int) bool { return v == 1 }},
			{probe{"karpenter_nodes_allocatable", map[string]string{"nodepool": pool, "resource_type": "cpu", "managed": "true"}}, func(v float64, n int) bool { return n == 2 && v > 2 }},
			{probe{"karpenter_pods_state", map[string]string{"name": pods[0].Name, "nodepool": pool, "ready": "true", "phase": "Running", "managed": "true", "scheduled": "true"}}, func(v float64, n int) bool { return n == 1 && v == 1 }},
			{probe{"karpenter_nodepools_usage", map[string]string{"nodepool": pool, "resource_type": "cpu"}}, func(v float64, n int) bool { return v >= 2 }},
			{probe{"karpenter_nodepools_limit", map[string]string{"nodepool": pool, "resource_type": "cpu"}}, func(v float64, n int) bool { return v == 1000 }},
			{probe{"karpenter_nodepools_allowed_disruptions", map[string]string{"nodepool": pool, "reason": "Underutilized"}}, func(v float64, n int) bool { return v == 2 }},
			{probe{"karpenter_voluntary_disruption_eligible_nodes", map[string]string{"reason": "underutilized"}}, func(v float64, n int) bool { return v >= 2 }},
			{probe{"tenon_nodes_price_dollars_per_hour", map[string]string{"nodepool": pool, "capacity_type": "on-demand"}}, func(v float64, n int) bool { return v > 0 }},
		} {
			if v, n := sample(t, g.p.name, g.p.match); !g.want(v, n) {
				return false, fmt.Sprintf("%s = %v over %d series", g.p, v, n)
			}
		}
		return true, ""
	})

	gone := []probe{
		{"karpenter_voluntary_disruption_decisions_total", map[string]string{"decision": "delete", "reason": "empty", "consolidation_type": "empty"}},
		{"karpenter_nodeclaims_disrupted_total", map[string]string{"nodepool": pool, "reason": "empty", "capacity_type": "on-demand", "consolidation_policy": "when_empty_or_underutilized", "termination_mode": "graceful"}},
		{"karpenter_nodeclaims_terminated_total", map[string]string{"nodepool": pool, "capacity_type": "on-demand"}},
		{"karpenter_nodes_terminated_total", on},
		{"karpenter_nodeclaims_termination_duration_seconds", on},
		{"karpenter_cloudprovider_duration_seconds", map[string]string{"method": "Delete", "controller": "nodeclaim.termination"}},
	}
	for _, p := range gone {
		before[p.String()], _ = sample(t, p.name, p.match)
	}
	e.scale("mspread", 0)
	e.eventually(90*time.Second, "both empty nodes disrupted and terminated", func() (bool, string) {
		if n := len(e.poolClaims(pool)); n != 0 {
			return false, fmt.Sprintf("%d claims left", n)
		}
		for _, p := range gone[1:4] {
			if v, _ := sample(t, p.name, p.match); v != before[p.String()]+2 {
				return false, fmt.Sprintf("%s rose by %v, want 2", p, v-before[p.String()])
			}
		}
		for _, p := range []probe{gone[0], gone[4], gone[5]} {
			if v, _ := sample(t, p.name, p.match); v <= before[p.String()] {
				return false, fmt.Sprintf("%s did not move", p)
			}
		}
		return true, ""
	})
	e.eventually(10*time.Second, "the gone nodes' and pods' series deleted", func() (bool, string) {
		if _, n := sample(t, "karpenter_nodes_allocatable", on); n != 0 {
			return false, fmt.Sprintf("%d allocatable series of the pool left", n)
		}
		if _, n := sample(t, "karpenter_pods_state", map[string]string{"name": pods[0].Name}); n != 0 {
			return false, "the deleted pod's state series is still there"
		}
		return true, ""
	})
}

package disruption

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/disruption"
	"github.com/tenon-sh/tenon/pkg/metrics"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// Label names and values of Karpenter's voluntary-disruption metrics.
const (
	decisionLabel          = "decision"
	consolidationTypeLabel = "consolidation_type"
	// passReason labels the evaluation-duration series of a whole pass: tenon evaluates every
	// method (emptiness, drift, expiration, consolidation) in one pass, where Karpenter times
	// each method on its own.
	passReason = "all"
)

// The metrics of the disruption loop that Karpenter has too, under Karpenter's names.
var (
	decisionsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karpenter_voluntary_disruption_decisions_total",
		Help: "Disruption commands a pass decided and queued, by decision (delete, replace), reason (empty, drifted, expired, underutilized) and consolidation type (empty, single, multi; empty for drift and expiration).",
	}, []string{decisionLabel, metrics.ReasonLabel, consolidationTypeLabel})
	eligibleNodes = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "karpenter_voluntary_disruption_eligible_nodes",
		Help: "Nodes the last pass could disrupt for a reason (empty, underutilized, drifted), before budgets: initialized, not being deleted, not nominated, not do-not-disrupt.",
	}, []string{metrics.ReasonLabel})
	evaluationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "karpenter_voluntary_disruption_decision_evaluation_duration_seconds",
		Help:    "Time of one disruption decision (snapshot and every method); tenon decides all methods in one pass, labeled reason=\"all\", consolidation_type=\"all\".",
		Buckets: metrics.DurationBuckets(),
	}, []string{metrics.ReasonLabel, consolidationTypeLabel})
	allowedDisruptions = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "karpenter_nodepools_allowed_disruptions",
		Help: "Nodes of a NodePool that may be disrupting at once for a reason (Empty, Drifted, Underutilized), by its active budgets, at the last pass.",
	}, []string{metrics.NodePoolLabel, metrics.ReasonLabel})
	// nodesPrice is tenon's: what the managed nodes cost, by nodepool and capacity type.
	nodesPrice = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tenon_nodes_price_dollars_per_hour",
		Help: "Price per hour of the nodes tenon manages (at their offering's current price), by nodepool and capacity type, at the last disruption pass.",
	}, []string{metrics.NodePoolLabel, metrics.CapacityTypeLabel})
)

func init() {
	metrics.MustRegister(decisionsTotal, eligibleNodes, evaluationDuration, allowedDisruptions, nodesPrice)
}

// budgetReasons are the reasons NodePool budgets are kept for.
var budgetReasons = []apisv1.DisruptionReason{apisv1.DisruptionReasonEmpty, apisv1.DisruptionReasonDrifted, apisv1.DisruptionReasonUnderutilized}

// reasonLabel is a command's reason label value: its budget reason in snake case, "expired"
// for expiration.
func reasonLabel(cmd disruption.Command) string {
	if cmd.Reason == "" {
		return metrics.ReasonExpired
	}
	return metrics.SnakeCase(string(cmd.Reason))
}

// consolidationType is Karpenter's consolidation_type of a command: "empty" for emptiness,
// "single" or "multi" for consolidation by its candidates, "" otherwise.
func consolidationType(cmd disruption.Command) string {
	switch cmd.Method {
	case disruption.MethodEmptiness:
		return "empty"
	case disruption.MethodConsolidation:
		if len(cmd.Candidates) > 1 {
			return "multi"
		}
		return "single"
	}
	return ""
}

// recordDecided counts a command the pass queued.
func recordDecided(cmd disruption.Command) {
	decisionsTotal.WithLabelValues(strings.ToLower(string(cmd.Action)), reasonLabel(cmd), consolidationType(cmd)).Inc()
}

// recordPassState sets the gauges that describe the cluster as the pass saw it and times the
// decision.
func recordPassState(s *disruption.Snapshot, took time.Duration) {
	evaluationDuration.WithLabelValues(passReason, passReason).Observe(took.Seconds())
	pods := map[string][]*corev1.Pod{}
	for i := range s.Solver.Nodes {
		pods[s.Solver.Nodes[i].Name] = s.Solver.Nodes[i].Pods
	}
	eligible := map[string]int{}
	total := map[string]int{}
	price := map[[2]string]float64{}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		total[n.NodePool]++
		price[[2]string{n.NodePool, n.CapacityType}] += n.Price
		pool := s.NodePools[n.NodePool]
		if pool == nil || !n.Initialized || n.Deleting || n.Nominated || n.DoNotDisrupt {
			continue
		}
		if n.Drifted != "" {
			eligible["drifted"]++
		}
		if at, ok := disruption.ConsolidatableAt(pool, n); !ok || s.Now.Before(at) {
			continue
		}
		if pool.Spec.Disruption.ConsolidationPolicy == apisv1.ConsolidationPolicyWhenEmptyOrUnderutilized {
			eligible["underutilized"]++
		}
		if empty(pods[n.Name]) {
			eligible["empty"]++
		}
	}
	for _, r := range []string{"empty", "underutilized", "drifted"} {
		eligibleNodes.WithLabelValues(r).Set(float64(eligible[r]))
	}
	allowedDisruptions.Reset()
	for name, np := range s.NodePools {
		for _, r := range budgetReasons {
			allowedDisruptions.WithLabelValues(name, string(r)).Set(float64(np.AllowedDisruptions(s.Now, total[name], r)))
		}
	}
	nodesPrice.Reset()
	for k, v := range price {
		nodesPrice.WithLabelValues(k[0], k[1]).Set(v)
	}
}

// empty reports whether none of pods would need a new home were the node removed.
func empty(pods []*corev1.Pod) bool {
	for _, p := range pods {
		if solver.Reschedulable(p) {
			return false
		}
	}
	return true
}

// recordDisrupted counts a candidate whose NodeClaim the command deleted, with its pods.
func recordDisrupted(ex *execution, node string, claim *apisv1.NodeClaim) {
	policy := ""
	if consolidationType(ex.cmd) != "" {
		if np := ex.view.Snapshot.NodePools[claim.Labels[apisv1.NodePoolLabelKey]]; np != nil {
			policy = metrics.SnakeCase(string(np.Spec.Disruption.ConsolidationPolicy))
		}
	}
	pods := 0
	for _, p := range ex.cmd.Pods {
		if p.Spec.NodeName == node {
			pods++
		}
	}
	metrics.Disrupted(claim, reasonLabel(ex.cmd), policy, pods)
}

// minValuesRelaxed is the min_values_relaxed label of a new claim.
func minValuesRelaxed(nc *apisv1.NodeClaim) string {
	if v := nc.Annotations[apisv1.NodeClaimMinValuesRelaxedAnnotationKey]; v != "" {
		return v
	}
	return "false"
}

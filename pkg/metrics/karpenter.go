package metrics

import (
	"runtime"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenon-sh/tenon/internal/version"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// Label names, as Karpenter spells them.
const (
	NodePoolLabel            = "nodepool"
	ReasonLabel              = "reason"
	ResourceTypeLabel        = "resource_type"
	CapacityTypeLabel        = "capacity_type"
	ZoneLabel                = "zone"
	InstanceTypeLabel        = "instance_type"
	MinValuesRelaxedLabel    = "min_values_relaxed"
	ConsolidationPolicyLabel = "consolidation_policy"
	TerminationModeLabel     = "termination_mode"
	ControllerLabel          = "controller"
)

// Values of the reason label of NodeClaimsCreated and NodeClaimsDisrupted that are not a
// disruption reason of the NodePool API.
const (
	ReasonProvisioned          = "provisioned"
	ReasonExpired              = "expired"
	ReasonInsufficientCapacity = "insufficient_capacity"
	ReasonNodeClassNotReady    = "nodeclass_not_ready"
	ReasonLaunchTimeout        = "launch_timeout"
	ReasonRegistrationTimeout  = "registration_timeout"
	ReasonGarbageCollected     = "garbage_collected"
	// ReasonNodeDeleted is tenon's: the claim's Node was deleted by someone else, so the claim
	// and its instance go too.
	ReasonNodeDeleted = "node_deleted"
	// ReasonGangIncomplete is tenon's: the claim was bought for a gang (PodGroup) that did not
	// get minCount pods running within the gang deadline, and was released.
	ReasonGangIncomplete = "gang_incomplete"
)

// Values of the termination_mode label.
const (
	TerminationModeGraceful = "graceful"
	TerminationModeEventual = "eventual"
	TerminationModeForceful = "forceful"
)

// DurationBuckets are the buckets of Karpenter's duration histograms: controller-runtime's
// reconcile buckets, extended to ten minutes. Each call returns a new slice.
func DurationBuckets() []float64 {
	return []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
		1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60, 120, 150, 300, 450, 600}
}

// SummaryObjectives are the quantiles of Karpenter's summaries (0, 0.5, 0.9, 0.99, 1), each
// within 0.01.
func SummaryObjectives() map[float64]float64 {
	return map[float64]float64{0: 0.01, 0.5: 0.01, 0.9: 0.01, 0.99: 0.01, 1: 0.01}
}

// The metrics several controllers count, under Karpenter's names and labels.
var (
	NodeClaimsCreated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karpenter_nodeclaims_created_total",
		Help: "NodeClaims created, by reason (provisioned, or the disruption reason of the command that replaced nodes), nodepool, and whether minValues was relaxed for it.",
	}, []string{ReasonLabel, NodePoolLabel, MinValuesRelaxedLabel})
	NodeClaimsTerminated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karpenter_nodeclaims_terminated_total",
		Help: "NodeClaims whose termination finished (instance and Node gone), by nodepool, capacity type and zone.",
	}, []string{NodePoolLabel, CapacityTypeLabel, ZoneLabel})
	NodeClaimsDisrupted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karpenter_nodeclaims_disrupted_total",
		Help: "NodeClaims tenon deleted, by reason, nodepool, capacity type, consolidation policy (consolidation only) and termination mode.",
	}, []string{ReasonLabel, NodePoolLabel, CapacityTypeLabel, ConsolidationPolicyLabel, TerminationModeLabel})
	PodsDisruptionInitiated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karpenter_pods_disruption_initiated_total",
		Help: "Reschedulable pods (not DaemonSet or mirror pods) on NodeClaims tenon disrupted, with the labels of karpenter_nodeclaims_disrupted_total.",
	}, []string{ReasonLabel, NodePoolLabel, CapacityTypeLabel, ConsolidationPolicyLabel, TerminationModeLabel})
	NodesCreated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karpenter_nodes_created_total",
		Help: "Nodes that registered for a NodeClaim, by nodepool and zone.",
	}, []string{NodePoolLabel, ZoneLabel})
	NodesTerminated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karpenter_nodes_terminated_total",
		Help: "Nodes tenon deleted at the end of their NodeClaim's termination, by nodepool and zone.",
	}, []string{NodePoolLabel, ZoneLabel})
	BuildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "karpenter_build_info",
		Help: "Always 1, labeled by the version, Go version, architecture and commit tenon was built from.",
	}, []string{"version", "goversion", "goarch", "commit"})
)

func init() {
	MustRegister(NodeClaimsCreated, NodeClaimsTerminated, NodeClaimsDisrupted, PodsDisruptionInitiated,
		NodesCreated, NodesTerminated, BuildInfo)
	v := version.Get()
	BuildInfo.WithLabelValues(v.Version, runtime.Version(), runtime.GOARCH, v.Commit).Set(1)
}

// TerminationMode is the termination_mode label of a claim: graceful without a
// terminationGracePeriod, forceful with one of zero or less, eventual otherwise.
func TerminationMode(claim *apisv1.NodeClaim) string {
	switch {
	case claim == nil || claim.Spec.TerminationGracePeriod == nil:
		return TerminationModeGraceful
	case claim.Spec.TerminationGracePeriod.Duration <= 0:
		return TerminationModeForceful
	}
	return TerminationModeEventual
}

// Disrupted counts one disruption of claim (with its reschedulable pods) under reason;
// policy is the nodepool's consolidation policy for consolidation, "" otherwise.
func Disrupted(claim *apisv1.NodeClaim, reason, policy string, pods int) {
	l := prometheus.Labels{
		ReasonLabel:              reason,
		NodePoolLabel:            claim.Labels[apisv1.NodePoolLabelKey],
		CapacityTypeLabel:        claim.Labels[apisv1.CapacityTypeLabelKey],
		ConsolidationPolicyLabel: policy,
		TerminationModeLabel:     TerminationMode(claim),
	}
	NodeClaimsDisrupted.With(l).Inc()
	PodsDisruptionInitiated.With(l).Add(float64(pods))
}

// SnakeCase turns a CamelCase API value (a disruption reason, a consolidation policy) into the
// label value Karpenter uses: "WhenEmptyOrUnderutilized" → "when_empty_or_underutilized".
func SnakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ResourceType is a resource name as a resource_type label value: lower case, dashes as
// underscores.
func ResourceType(name string) string {
	return strings.ReplaceAll(strings.ToLower(name), "-", "_")
}

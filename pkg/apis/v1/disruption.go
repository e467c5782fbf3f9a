package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Disruption controls how tenon may remove a NodePool's nodes.
type Disruption struct {
	// ConsolidateAfter is how long a node must have gone without a pod starting or stopping on
	// it before consolidation may consider it, or Never. Ignored by static NodePools.
	// Left out, it is 0s, as in Karpenter.
	// +kubebuilder:default:="0s"
	// +optional
	ConsolidateAfter NillableDuration `json:"consolidateAfter"`
	// ConsolidationPolicy chooses which nodes consolidation may remove or replace.
	// Ignored by static NodePools.
	// +kubebuilder:default:="WhenEmptyOrUnderutilized"
	// +optional
	ConsolidationPolicy ConsolidationPolicy `json:"consolidationPolicy,omitempty"`
	// Budgets cap how many of the NodePool's nodes may be disrupted at once. When several are
	// active, the most restrictive one wins.
	// +kubebuilder:default:={{nodes: "10%"}}
	// +kubebuilder:validation:MaxItems=50
	// +listType=atomic
	// +optional
	Budgets []Budget `json:"budgets,omitempty"`
}

// ConsolidationPolicy chooses which nodes consolidation may remove or replace.
// +kubebuilder:validation:Enum=WhenEmpty;WhenEmptyOrUnderutilized;Balanced
type ConsolidationPolicy string

const (
	// ConsolidationPolicyWhenEmpty removes only nodes without workload pods.
	ConsolidationPolicyWhenEmpty ConsolidationPolicy = "WhenEmpty"
	// ConsolidationPolicyWhenEmptyOrUnderutilized also removes or replaces nodes whose pods fit
	// elsewhere, whenever that lowers cost.
	ConsolidationPolicyWhenEmptyOrUnderutilized ConsolidationPolicy = "WhenEmptyOrUnderutilized"
	// ConsolidationPolicyBalanced consolidates underutilized nodes only when the move is worth
	// its disruption: the fraction of the NodePool's cost it saves, divided by the fraction of
	// the NodePool's disruption cost it causes, must reach 1/BalancedK.
	ConsolidationPolicyBalanced ConsolidationPolicy = "Balanced"
)

// BalancedK is the k of the Balanced policy: a move is taken when
// savingsFraction / disruptionFraction >= 1/k.
const BalancedK = 2

// DisruptionReason names a disruption method a budget can be limited to.
// +kubebuilder:validation:Enum=Underutilized;Empty;Drifted
type DisruptionReason string

const (
	DisruptionReasonUnderutilized DisruptionReason = "Underutilized"
	DisruptionReasonEmpty         DisruptionReason = "Empty"
	DisruptionReasonDrifted       DisruptionReason = "Drifted"
)

// Budget caps how many of a NodePool's nodes may be disrupted at once, always or during a
// recurring window (schedule plus duration), for all disruption reasons or only some.
//
// +kubebuilder:validation:XValidation:rule="has(self.schedule) == has(self.duration)",message="a budget's schedule and duration must be set together"
type Budget struct {
	// Reasons limits the budget to these disruption reasons; unset means all of them.
	// +kubebuilder:validation:MaxItems=50
	// +listType=set
	// +optional
	Reasons []DisruptionReason `json:"reasons,omitempty"`
	// Nodes is the most nodes that may be disrupting at once: a count ("5") or a percentage of
	// the NodePool's nodes ("10%"), rounded up.
	// +kubebuilder:validation:Pattern=`^((100|[0-9]{1,2})%|[0-9]+)$`
	// +kubebuilder:default:="10%"
	// +required
	Nodes string `json:"nodes"`
	// Schedule is a cron expression in UTC (five fields, or a macro such as @daily) at which the
	// budget's window opens. Unset means the budget is always active.
	// +kubebuilder:validation:Pattern=`^(@(annually|yearly|monthly|weekly|daily|midnight|hourly)|[0-9A-Za-z*?/,-]+(\s+[0-9A-Za-z*?/,-]+){4})$`
	// +optional
	Schedule *string `json:"schedule,omitempty"`
	// Duration is how long the window stays open after each scheduled time, in hours and
	// minutes ("1h30m").
	// +kubebuilder:validation:Pattern=`^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$`
	// +kubebuilder:validation:Type="string"
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`
}

package disruption

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tenon-sh/tenon/pkg/metrics"
)

// Results of a command, in CommandsTotal.
const (
	ResultSucceeded   = "succeeded"   // the candidates' NodeClaims were deleted
	ResultInvalidated = "invalidated" // the command no longer held when validated again
	ResultFailed      = "failed"      // a step failed; what was done was rolled back
	ResultAbandoned   = "abandoned"   // the controller stopped in the middle of it
)

// OutcomeError is the pass outcome when no decision could be made.
const OutcomeError = "Error"

// The metrics of the disruption loop, on controller-runtime's registry.
var (
	// PassDuration times passes by outcome (Acted, NoOp, Truncated, Error).
	PassDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "tenon_disruption_pass_duration_seconds", Help: "Time of one disruption pass (snapshot and decision), by outcome: Acted, NoOp, Truncated or Error.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
	}, []string{"outcome"})
	// Candidates counts, for the last pass, the nodes in its commands by method.
	Candidates = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tenon_disruption_candidates", Help: "Nodes in the commands of the last disruption pass, by method.",
	}, []string{"method"})
	// Skips counts, for the last pass, the nodes left alone by reason.
	Skips = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tenon_disruption_skips", Help: "Nodes the last disruption pass left alone, by reason.",
	}, []string{"reason"})
	// CommandsTotal counts commands by method, action and result.
	CommandsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tenon_disruption_commands_total", Help: "Disruption commands by method, action (Delete, Replace) and result (succeeded, invalidated, failed, abandoned).",
	}, []string{"method", "action", "result"})
	// SavingsTotal sums the $/h that succeeded commands saved, by the capacity type of the
	// nodes removed and of what replaced them ("none" for a deletion; "mixed" when several).
	SavingsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tenon_disruption_realized_savings_dollars_per_hour_total", Help: "Price per hour removed by succeeded disruption commands, net of what their replacements launched at, by capacity-type transition (from, to).",
	}, []string{"from", "to"})
)

func init() {
	metrics.MustRegister(PassDuration, Candidates, Skips, CommandsTotal, SavingsTotal)
}

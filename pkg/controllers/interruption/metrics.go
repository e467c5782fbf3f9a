package interruption

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tenon-sh/tenon/pkg/metrics"

	"github.com/tenon-sh/tenon/pkg/cloudprovider"
)

// Actions: what was done about a message (the action label of Actions).
const (
	// ActionDrain: the node was tainted and marked, and its NodeClaim deleted.
	ActionDrain = "drain"
	// ActionNone: recorded only (a rebalance recommendation by default).
	ActionNone = "none"
	// ActionUnmanaged: no NodeClaim has the instance; acknowledged and dropped.
	ActionUnmanaged = "unmanaged"
	// ActionInvalid: the message names no instance or has an unknown kind; acknowledged and
	// dropped.
	ActionInvalid = "invalid"
)

// The metrics, described in the package documentation.
var (
	Received = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tenon_interruption_messages_received_total", Help: "Interruption messages received, each counted once, by kind.",
	}, []string{"kind"})
	Actions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tenon_interruption_actions_total", Help: "Interruption messages acted on and acknowledged, by kind and action (drain, none, unmanaged, invalid).",
	}, []string{"kind", "action"})
	Latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "tenon_interruption_message_latency_seconds", Help: "Time from an interruption notice to tenon's action on it, by kind.",
		Buckets: prometheus.ExponentialBuckets(0.05, 2, 14),
	}, []string{"kind"})
	Failures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tenon_interruption_failures_total", Help: "Attempts to handle an interruption message that failed (the message is delivered again), by kind.",
	}, []string{"kind"})
	ReceiveErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tenon_interruption_receive_errors_total", Help: "Receives from the interruption queue that failed.",
	})
)

func init() { metrics.MustRegister(Received, Actions, Latency, Failures, ReceiveErrors) }

// kindLabel is a message's kind as a label value: one of the known kinds, else "unknown", so
// that a provider sending odd kinds cannot grow the label set without bound.
func kindLabel(k cloudprovider.InterruptionKind) string {
	if known(k) {
		return string(k)
	}
	return "unknown"
}

func known(k cloudprovider.InterruptionKind) bool {
	switch k {
	case cloudprovider.SpotInterruption, cloudprovider.RebalanceRecommendation, cloudprovider.ScheduledMaintenance, cloudprovider.InstanceStopped:
		return true
	}
	return false
}

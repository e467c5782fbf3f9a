package interruption

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenon-sh/tenon/pkg/metrics"
)

// Reasons a message is deleted without being delivered (the reason label of Dropped).
const (
	DropMalformed     = "malformed"
	DropNotActionable = "not_actionable"
	DropForeign       = "foreign"
)

// The metrics, described in the package documentation.
var (
	Received = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karpenter_interruption_received_messages_total",
		Help: "Messages received from the interruption queue, each counted once, by message type.",
	}, []string{"message_type"})
	Deleted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "karpenter_interruption_deleted_messages_total",
		Help: "Messages deleted from the interruption queue.",
	})
	QueueDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "karpenter_interruption_message_queue_duration_seconds",
		Help:    "Time from an interruption event to its message being deleted from the queue once handled.",
		Buckets: []float64{0.1, 0.25, 0.5, 1, 2, 3, 5, 7.5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 300, 600},
	})
	Dropped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tenon_interruption_dropped_messages_total",
		Help: "Messages deleted from the interruption queue without being delivered, by reason (malformed, not_actionable, foreign).",
	}, []string{"reason"})
)

func init() { metrics.MustRegister(Received, Deleted, QueueDuration, Dropped) }

package provisioning

import (
	"github.com/prometheus/client_golang/prometheus"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/metrics"
)

// controllerLabel is the controller label value of the scheduler metrics for the provisioning
// loop, as Karpenter's provisioner names itself.
const controllerLabel = "provisioner"

var (
	// schedulingDuration times a batch's plan, from reading the mirror to the plan, under
	// Karpenter's name and buckets.
	schedulingDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "karpenter_scheduler_scheduling_duration_seconds", Help: "Time to plan one batch of pending pods (the scheduling simulation), by controller.",
		Buckets: metrics.DurationBuckets(),
	}, []string{metrics.ControllerLabel})
	// legacySchedulingDuration is the same observation under the name Karpenter used before
	// v1.0 (dashboards built for v0.3x query it).
	legacySchedulingDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "karpenter_provisioner_scheduling_duration_seconds", Help: "Time to plan one batch of pending pods, by controller; the name Karpenter used before v1.0 for karpenter_scheduler_scheduling_duration_seconds.",
		Buckets: metrics.DurationBuckets(),
	}, []string{metrics.ControllerLabel})
	unschedulablePods = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "karpenter_scheduler_unschedulable_pods_count", Help: "Pods the last batch could not place anywhere, by controller.",
	}, []string{metrics.ControllerLabel})
	batchPods = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "tenon_provisioning_batch_pods", Help: "Pods planned per batch.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 18),
	})
	// plannedPrice and lowerBound add up, over the batches whose lower bound was computed
	// (--lower-bound), the price of the new capacity planned and the proven least price any
	// plan could have had: their ratio says how far from optimal the plans were.
	plannedPrice = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tenon_provisioning_planned_price_dollars_per_hour_total", Help: "Price per hour of the new NodeClaims planned, summed over the batches whose lower bound was computed.",
	})
	lowerBound = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tenon_provisioning_lower_bound_dollars_per_hour_total", Help: "Proven lower bound on the price per hour of new capacity for each batch's pods, summed over the batches whose lower bound was computed.",
	})
)

func init() {
	metrics.MustRegister(schedulingDuration, legacySchedulingDuration, unschedulablePods, batchPods, plannedPrice, lowerBound)
}

// claimCreated counts a NodeClaim the provisioner created.
func claimCreated(nc *apisv1.NodeClaim) {
	relaxed := nc.Annotations[apisv1.NodeClaimMinValuesRelaxedAnnotationKey]
	if relaxed == "" {
		relaxed = "false"
	}
	metrics.NodeClaimsCreated.WithLabelValues(metrics.ReasonProvisioned, nc.Labels[apisv1.NodePoolLabelKey], relaxed).Inc()
}

package provisioning

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	solveDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "tenon_provisioning_solve_duration_seconds", Help: "Time to plan one batch of pending pods, from reading the mirror to the plan.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
	})
	batchPods = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "tenon_provisioning_batch_pods", Help: "Pods planned per batch.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 18),
	})
	nodeClaimsCreated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tenon_provisioning_nodeclaims_created_total", Help: "NodeClaims the provisioner created, by nodepool.",
	}, []string{"nodepool"})
	unschedulablePods = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "tenon_provisioning_unschedulable_pods", Help: "Pods the last batch could not place anywhere.",
	})
)

func init() {
	metrics.Registry.MustRegister(solveDuration, batchPods, nodeClaimsCreated, unschedulablePods)
}

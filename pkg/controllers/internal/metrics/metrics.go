package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/metrics"
)

// Reasons of LaunchFailures.
const (
	ReasonInsufficientCapacity = "insufficient_capacity"
	ReasonNodeClassNotReady    = "nodeclass_not_ready"
	ReasonError                = "error"
)

// Results of Evictions.
const (
	EvictionEvicted = "evicted"
	EvictionBlocked = "blocked"
	EvictionError   = "error"
)

// durationBuckets span 100 ms to about 27 minutes.
var durationBuckets = prometheus.ExponentialBuckets(0.1, 2, 15)

// The metrics, described in the package documentation. Controllers increment them only once
// what they count has been written to the API server.
var (
	Launched = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tenon_nodeclaims_launched_total", Help: "NodeClaims whose instance the cloud provider launched, by nodepool.",
	}, []string{"nodepool"})
	LaunchFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tenon_nodeclaims_launch_failures_total", Help: "Failed launch attempts, by nodepool and reason (insufficient_capacity, nodeclass_not_ready, error).",
	}, []string{"nodepool", "reason"})
	Initialized = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tenon_nodeclaims_initialized_total", Help: "NodeClaims whose Node became initialized, by nodepool.",
	}, []string{"nodepool"})
	LaunchDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "tenon_nodeclaims_launch_duration_seconds", Help: "Time from a NodeClaim's creation to its launch, by nodepool.", Buckets: durationBuckets,
	}, []string{"nodepool"})
	RegistrationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "tenon_nodeclaims_registration_duration_seconds", Help: "Time from a NodeClaim's creation to its registration, by nodepool.", Buckets: durationBuckets,
	}, []string{"nodepool"})
	InitializationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "tenon_nodeclaims_initialization_duration_seconds", Help: "Time from a NodeClaim's creation to its initialization, by nodepool.", Buckets: durationBuckets,
	}, []string{"nodepool"})
	// TerminationDuration has Karpenter's name and buckets (1 s to about 34 minutes).
	TerminationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "karpenter_nodeclaims_termination_duration_seconds", Help: "Time from a NodeClaim's deletion to the end of its termination, by nodepool.", Buckets: prometheus.ExponentialBuckets(1, 2, 12),
	}, []string{"nodepool"})
	Evictions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tenon_termination_pod_evictions_total", Help: "Eviction requests for pods on terminating nodes, by result (evicted, blocked, error).",
	}, []string{"result"})
	PodDeletions = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tenon_termination_pod_deletions_total", Help: "Pods deleted directly because their node's terminationGracePeriod ran out.",
	})
	InstancesGarbageCollected = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tenon_garbagecollection_instances_deleted_total", Help: "Instances deleted because no NodeClaim referred to them.",
	})
)

func init() {
	metrics.MustRegister(Launched, LaunchFailures, Initialized,
		LaunchDuration, RegistrationDuration, InitializationDuration, TerminationDuration,
		Evictions, PodDeletions, InstancesGarbageCollected)
}

// NodePool returns the nodepool label value of a claim ("" when it has none).
func NodePool(claim *apisv1.NodeClaim) string { return claim.Labels[apisv1.NodePoolLabelKey] }

// Package metrics defines the Prometheus metrics of the NodeClaim controllers (lifecycle,
// termination, garbage collection), registered on controller-runtime's registry so that a
// manager's metrics endpoint serves them:
//
//	tenon_nodeclaims_launched_total{nodepool}
//	tenon_nodeclaims_launch_failures_total{nodepool,reason}
//	tenon_nodeclaims_initialized_total{nodepool}
//	tenon_nodeclaims_launch_duration_seconds{nodepool}
//	tenon_nodeclaims_registration_duration_seconds{nodepool}
//	tenon_nodeclaims_initialization_duration_seconds{nodepool}
//	karpenter_nodeclaims_termination_duration_seconds{nodepool}
//	tenon_termination_pod_evictions_total{result}
//	tenon_termination_pod_deletions_total
//	tenon_garbagecollection_instances_deleted_total
//
// The three durations to launch, register and initialize are measured from the NodeClaim's
// creation; the termination duration from its deletion timestamp. Where Karpenter has a metric of
// the same meaning, the controllers count that one instead (package pkg/metrics):
// karpenter_nodes_created_total at registration, karpenter_nodeclaims_disrupted_total when a
// controller deletes a claim (insufficient_capacity, launch_timeout, registration_timeout,
// garbage_collected, node_deleted), karpenter_nodeclaims_terminated_total and
// karpenter_nodes_terminated_total when termination ends.
package metrics

// Package metrics defines the Prometheus metrics of the NodeClaim controllers (lifecycle,
// termination, garbage collection), registered on controller-runtime's registry so that a
// manager's metrics endpoint serves them:
//
//	tenon_nodeclaims_launched_total{nodepool}
//	tenon_nodeclaims_launch_failures_total{nodepool,reason}
//	tenon_nodeclaims_registered_total{nodepool}
//	tenon_nodeclaims_initialized_total{nodepool}
//	tenon_nodeclaims_deleted_total{nodepool,reason}
//	tenon_nodeclaims_terminated_total{nodepool}
//	tenon_nodeclaims_launch_duration_seconds{nodepool}
//	tenon_nodeclaims_registration_duration_seconds{nodepool}
//	tenon_nodeclaims_initialization_duration_seconds{nodepool}
//	tenon_nodeclaims_termination_duration_seconds{nodepool}
//	tenon_termination_pod_evictions_total{result}
//	tenon_termination_pod_deletions_total
//	tenon_garbagecollection_instances_deleted_total
//
// The three durations to launch, register and initialize are measured from the NodeClaim's
// creation; the termination duration from its deletion timestamp.
package metrics

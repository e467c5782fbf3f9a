// Package operator assembles tenon's controller process: a controller-runtime manager with the
// cluster mirror, the cloud provider and every controller, leader election, Prometheus metrics
// and health probes. `tenon controller` and `tenon up` both run it.
package operator

// Package metrics holds what tenon's Prometheus metrics share: the registry every metric is
// registered on (controller-runtime's, which the manager's metrics endpoint serves), the list of
// everything tenon registered (docs/metrics.md and the Grafana dashboards are checked against
// it), and the metrics that several controllers count under Karpenter's names, with Karpenter's
// labels and label values, so that a Karpenter user's dashboards and alerts keep working.
//
// Metrics that only one controller counts are declared next to it; tenon's own (tenon_*) are
// kept for what Karpenter has no metric of (the lower bound, realized savings, skip reasons).
// docs/metrics.md lists every one.
package metrics

// Package plan runs the solver offline over manifests, as `tenon plan` does: NodePools (with a
// simulated NodeClass or the embedded catalog), workloads expanded into pods, DaemonSets, and
// optionally existing nodes with their pods; and it writes the plan as a table or as JSON with a
// stable schema (see docs/plan.md).
package plan

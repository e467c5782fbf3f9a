// Package solverinput reads what the solver looks at from the cluster mirror: the NodePools
// that may launch capacity with their instance types, the nodes and claims in flight, the
// DaemonSets and namespace labels (Source.Snapshot), and the pending backlog with each pod's
// volume topology (Source.Pending). The provisioner and the disruption loop both read the
// cluster through it, so that disruption never decides on a view the provisioner would not
// share.
package solverinput

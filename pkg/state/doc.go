// Package state is the cluster mirror: informers feed it Nodes, NodeClaims, Pods, DaemonSets,
// NodePools, Namespaces and PodDisruptionBudgets, and the controllers read solver inputs from it
// cheaply. It also holds what only tenon knows: nominations (a node or claim that won pending
// pods is protected for a while) and deletion marks (nodes the disruption loop is removing,
// whose pods are planned as if pending).
//
// One lock guards everything; writers are the informer handlers, readers take consistent views.
package state

// Package solver is tenon's scheduling simulator: given an immutable Snapshot of the cluster
// (NodePools with their instance types, existing nodes and in-flight claims, DaemonSets, and the
// pending pods), it decides where every pending pod would run — on a node that exists, on a
// claim already in flight, or on a new claim it would buy — and at what price.
//
// The solver is pure: no API server, no clock, no goroutines, no randomness. The same Snapshot
// gives the same Plan. The provisioning controller, the disruption loop, the offline simulator
// and the benchmarks all drive this one function.
//
// # Pipeline
//
//	compile   NodePools → pools (instance types as indices, offerings as zone×capacity-type
//	          masks, DaemonSet overhead per type); pods → classes of identical pods
//	          (requests, requirement alternatives, tolerations, topology terms)
//	place     classes in decreasing size: existing nodes (initialized first), then in-flight
//	          claims, then claims opened in this solve, then new claims sized by cost for what
//	          they will hold; topology spread, pod affinity and anti-affinity checked per domain
//	relax     a class that cannot be placed drops one preference at a time (preferred node
//	          affinity, preferred pod affinity and anti-affinity, ScheduleAnyway spreads)
//	finalize  every new claim launches its cheapest compatible offering; its options are the
//	          types that still hold everything on it, ordered by price, at most 600
//	bound     a proven lower bound on the price of any plan (package bound)
package solver

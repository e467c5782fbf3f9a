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
//	split     pods that share no NodePool, node, topology group or reservation are
//	          independent parts, each solved (and its plan chosen) on its own (components.go)
//	place     classes in decreasing size: existing nodes (initialized first), then in-flight
//	          claims, then claims opened in this solve, then new claims sized by cost for what
//	          they will hold; topology spread, pod affinity and anti-affinity checked per domain
//	relax     a class that cannot be placed drops one preference at a time (preferred node
//	          affinity, preferred pod affinity and anti-affinity, ScheduleAnyway spreads)
//	repair    the least utilised new claims give pods to other claims' room, or share them
//	          with a new claim, where that makes their type cheaper (repair.go)
//	finalize  every new claim launches its cheapest compatible offering; its options are the
//	          types that still hold everything on it, ordered by price, at most 600
//	bound     a proven lower bound on the price of any plan (package bound)
//
// # Budgets
//
// Two steps do work that grows faster than the pods: the guided packing's configuration LP
// (guide.go) and the lower bound's (lowerbound.go). Both merge like classes before the LP sees
// them (aggregate.go: the guide's rows demand their pods' mean shape; the bound's round requests
// down, which relaxes the problem and keeps the bound valid, and the bound adds the joint cover
// of every resource on the pods' exact requests), and both take a work budget in the bound
// package's units (bound.Work: master pivots weighted by rows², plus knapsack classes priced),
// which is a count, so the solve stays deterministic. The guide is anytime (budget.go): a first
// attempt on at most 40 rows, then, if its budget covers the expected cost, a second on a finer
// grid, and the cheapest of first-fit and the attempts wins, so first-fit is always the floor.
// Its default budget is a few times first-fit's own work, with a floor for small problems
// (Options.GuideWork overrides it); the bound has none unless Options.BoundWork is set. When a
// budget runs out the LP keeps what it has: the guide places the patterns found so far and
// first-fit the rest; the bound keeps its certificate, valid at any round, and Plan.Bound says
// it was cut short.
//
// A wall-clock limit is the driver's to give: Options.Deadline (all LPs) and
// Options.BoundDeadline (the bound's alone) are functions the LPs ask between rounds and
// pivots. The core never reads the clock itself; a solve whose deadline fires is not
// reproducible, one without a deadline is. `tenon plan --bound-budget` is such a deadline.
package solver

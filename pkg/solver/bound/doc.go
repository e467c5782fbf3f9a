// Package bound computes a proven lower bound on the cost of packing pending pods onto nodes
// that can be bought, so that the solver can report how far a plan is from optimal (cost/bound).
//
// A bound here is a proof, not an estimate: Lower never returns more than the cheapest feasible
// packing. It is deterministic (no goroutines, no clock, no map order; every limit is a count).
//
// # The problem
//
// Classes k of n_k identical pods with demand d_k (a resource vector), each usable on a list of
// types; types t with price c_t, capacity C_t and an optional limit M_t on their node count;
// groups g allowing at most P_g of their pods on one node. A packing buys nodes and gives every
// pod one. A pattern of type t is a vector a of pod counts one node of t can hold:
// Σ_k a_k d_k ≤ C_t, a_k = 0 for classes that may not use t, Σ_{k∈g} a_k ≤ P_g. We write u_{k,t}
// for the most pods of k one node of t holds alone (capacity, group cap, and n_k).
//
// # Reductions (prepare.go, reduce.go, effective.go, split.go)
//
// Each keeps the optimum or lowers it, so a bound of the reduced problem bounds the problem:
// classes with equal demand, types and group are merged; classes demanding nothing are dropped
// (one node is still needed: the cheapest usable type is a bound); types a class does not fit
// are dropped from its list; resources nobody demands are dropped; types no class may use are
// dropped; limited types equal in price, capacity and classes are merged (their limits add up);
// and a type is dropped when an unlimited type is no dearer, usable by all its classes and at
// least as large in every resource as its effective capacity: the most its classes could use of
// one of its nodes (each class within its count and what fits alone, each group within its
// cap). Every pattern of the dropped type is then one of the other, so its nodes can be replaced
// one for one. (That last reduction keeps the optimum but can raise the LPs: a type too large
// for all its pods no longer lends the LPs capacity no node could use.) Finally classes that
// share no type can never share a node: the problem splits into independent parts whose optima,
// and so whose bounds, add up.
//
// # The certificate (lagrange.go)
//
// Every LP bound is certified the same way, so that none depends on an LP solver being exact.
// Take any class prices π ≥ 0, and for each type an upper bound Ṽ_t ≥ max_a π·a over its
// patterns. Let W_t = min(M_t, Σ_{k usable on t} n_k), a bound on its non-empty nodes (each holds
// a pod). In any packing with nodes j of types t(j) and patterns a_j, Σ_j a_j = n, so for every
// α ≥ 0
//
//	cost = Σ_j c_t(j) ≥ Σ_{j non-empty} [α π·a_j − (α π·a_j − c_t(j))⁺]
//	     ≥ α π·n − Σ_t W_t (α Ṽ_t − c_t)⁺ =: g(α).
//
// g is concave and piecewise linear with breakpoints c_t/Ṽ_t, so a sweep finds its maximum
// exactly. Farley's bound π·n / max_t(Ṽ_t/c_t) is g at α = min_t c_t/Ṽ_t, so max g is at least
// as strong; unlike Farley's it handles free types (c_t = 0) and limited types (the W_t terms
// play the part of σ_t M_t in the LP dual). If g grows without bound (π·n > Σ_t W_t Ṽ_t, with a
// margin), no packing exists and the bound is +Inf. Only types whose breakpoint lies at or below
// the maximizer affect the maximum, so Ṽ_t is refined lazily, from cheap to dear, for those
// types only, until the maximum is settled (the dearest refinement, branch and bound, only for
// types whose breakpoint is at the maximizer, and within a budget of nodes per certificate).
//
// Upper bounds Ṽ_t come from LP duality for the knapsack of one node:
//
//	max π·a  s.t.  Σ_k (d_kr/C_tr) a_k ≤ 1 (r),  Σ_{k∈g} a_k ≤ P_g (g),  0 ≤ a_k ≤ u_{k,t}
//
// whose dual gives, for every y ≥ 0 and ν ≥ 0,
//
//	Ṽ_t = Σ_r y_r + Σ_g ν_g P_g + Σ_k u_{k,t} (π_k − Σ_r y_r d_kr/C_tr − ν_g(k))⁺.
//
// The duals come from a small bounded-variable revised simplex (knaplp.go, knapsimplex.go), but
// the formula holds for any non-negative y and ν, so solver error only loosens it. Cheaper valid
// bounds come first: one resource alone (min_r max_k π_k C_tr/d_kr), Σ_k u_{k,t} π_k, and the
// formula at the duals last found for the type. Branch and bound (search.go), bounded by the same
// formula on the residual capacity and by each resource's fractional knapsack within the caps,
// gives the exact whole-pod maximum when it finishes, and otherwise the largest bound among the
// subtrees it left. It leaves unexplored the subtrees whose bound beats the incumbent by less
// than 1e-10 of it (counting their bounds among those left): degenerate knapsacks, whose LP
// bound is their optimum up to rounding, would otherwise exhaust any node limit.
//
// Rounding is allowed for explicitly, since an LP's duals can be far larger than the bound
// they prove (degenerate duals are), and then cancellation in g costs more than the bound's own
// precision: every Ṽ_t is inflated by 1e-12 of the magnitude of the terms it sums, g is reduced
// by 1e-12 of the magnitude of its terms, and a further 1e-9 of the bound is taken off at the
// end. A property test certifies random prices, some of them huge, against brute force.
//
// # Three LPs, each solved by column generation (fractional.go, configuration.go, colgen.go,
// master.go, masterbasis.go, pricing.go)
//
// The covering LP:
//
//	min Σ_t c_t x_t  s.t.  Σ_t y_kt = n_k,  Σ_k d_kr y_kt ≤ C_tr x_t,  x_t ≤ M_t,  x, y ≥ 0
//
// (y_kt only for the types k may use and fits). Dantzig–Wolfe: for fixed t the feasible
// (y_·t, x_t) form the cone over x_t = 1 and the vertices of {a ≥ 0 : Σ_k a_k d_k ≤ C_t}, so the
// LP equals a master LP over columns "one node of t filled with the fractional vertex a", priced
// exactly by the knapsack LP without u or groups; its certificate uses that LP's duals (repaired
// until Σ_r y_r d_kr/C_tr ≥ π_k for every k, which makes Σ_r y_r a valid bound). A type is
// skipped in pricing when an unlimited type t usable by all its classes covers its capacity with
// β nodes for no more than it costs (β c_t ≤ c_s): fractional nodes of t replace it, and its
// certificate bound is β Ṽ_t. At convergence the certificate at α = 1 equals the master's dual
// objective, the LP optimum.
//
// The bounded LP is the same with the per-node caps u_{k,t} and group caps in the pricing
// knapsack: the configuration LP with pods made divisible. It starts from the covering optimum:
// its fillings, capped, seed the master and its prices are the first stability center.
//
// The configuration LP:
//
//	min Σ_p c_t(p) λ_p  s.t.  Σ_p a_kp λ_p ≥ n_k,  Σ_{p of t} λ_p ≤ M_t,  λ ≥ 0
//
// over whole-pod patterns p, so pods are indivisible and group caps hold per node. Covering ≤
// bounded ≤ configuration. It starts from the bounded LP: that LP's prices are certified with
// whole-pod knapsacks, so the result is never below the bounded LP's. If some of those
// knapsacks are too large for branch and bound to finish, it stops there (no certificate could
// then prove much more, and such knapsacks hold many pods, where whole pods matter little),
// unless the caller asked for the LP's solution (WithPatterns).
// Otherwise the master is seeded with each type's best whole-pod node at those prices and
// column generation runs, pricing by greedy fills, LP rounding and short branch and bound while
// they find columns, and by the certificate's branch and bound when they do not. Exact reports
// that the certificate reached the master's objective: the configuration LP was solved and
// proven.
//
// Every master is a revised simplex with a dense explicit inverse (rows: classes and limited
// types), seeded with single-class columns and an artificial column per class so it is always
// feasible, started from the single-class columns where it can, and pruned of columns far from
// pricing out. The covering LP's master also starts with the few types that would hold all their
// classes' pods most cheaply, filled in proportion: where one type serves everything best, that
// column is the LP.
//
// Pricing solves each type's knapsack LP with a revised simplex on its few rows that keeps the
// type's last basis (prices change, the constraints do not, so the basis stays feasible), or
// borrows the basis of the type priced just before when the two have the same classes and rows
// and it is feasible (types alike in all but size, priced at the same prices, share optimal
// bases). A round prices a working set of types and all of them only when the set offers no
// column: such a full pass proves the LP solved or brings the types that improve most into the
// set. The certificate at the end reuses the bounds of the last full pass, which solved every
// type at the final prices. An artificial column's cost must exceed
// what one more pod can be worth, which in an LP can be far more than any node's price (a pod
// that fills a free node is worth all it displaces): it is raised while optima use artificial
// columns, and artificial columns left basic at zero are pivoted out, since they would set
// their class's dual to that huge cost. Duals are smoothed towards a stability center
// (Wentges), which damps the oscillation that makes column generation tail off. The fractional
// LPs run to convergence (with a guard cap); the configuration LP stops at MaxIterations rounds
// or once its master objective, an upper bound on its optimum, is within Gap of the best bound
// proven. A capped run still returns a valid, weaker, bound.
//
// # The primal solution (patterns.go)
//
// With WithPatterns, Result.Patterns is the last configuration master's solution: its pattern
// columns in use with their multiplicities, mapped back to the problem. A merged limited type's
// nodes are shared among the types merged into it within their limits; a merged class's pods
// among its classes within their counts (laid end to end, each pattern's slots handed out in
// order and the pattern cut where its lanes change hands). Their cost is the master's objective,
// an upper bound on the configuration LP, and equals it when the LP was proven (Exact).
//
// # Counting bounds (trivial.go)
//
// A class alone (or a group alone), with a node of t holding at most u_t of its pods, needs whole
// nodes: the cheapest cover of its pods by such nodes, exact by dynamic programming over pod
// counts (or its LP when that is large). Each part needs at least one node of its types. And
// for each resource alone, with the pods made divisible and free to use any type of their part,
// whole nodes must hold the pods' total demand: the cheapest such cover, by the same dynamic
// program over demand counted in units small enough to keep it at 2^14 states (the demand
// rounded down, each type's capacity, capped at what its pods could use of one node, rounded
// up). Where a few nodes hold everything, rounding their count up beats the LPs, whose
// fractional nodes lend capacity no whole node can. (WithPatterns skips it: its callers want the
// LP's solution, not the bound.)
//
// CountingOnly runs these bounds alone, with one more: the joint cover (cover.go). The nodes'
// room, capped as above, must cover the total demand of every resource at once, an LP with a row
// per resource; its resource prices y become class prices π_k = y·d_k for the certificate, with
// Ṽ_t = y·U_t. The bounded LP is never weaker (each node it fills uses at most U_t), so Lower
// does not spend it there; but its size does not grow with the classes, so a caller with
// thousands of distinct shapes, whose class LPs must see merged, rounded-down rows, gets from it
// a bound on every pod's exact demand.
//
// # Why not gonum's simplex
//
// gonum's dense Simplex refactors the basis from scratch at every pivot, cannot add columns to a
// solved LP and returns no duals; the covering LP written out in full for 50 classes and a few
// hundred types has thousands of variables and hundreds of rows. The tests use it, on small
// problems, as an independent oracle for the covering and configuration LPs.
package bound

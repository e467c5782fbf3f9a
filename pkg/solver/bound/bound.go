package bound

import (
	"math"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// Type is an instance type that nodes may be bought as.
type Type struct {
	Name     string               // for debugging
	Price    float64              // $/h, finite and ≥ 0
	Capacity scheduling.Resources // what pods may use on one node of this type (negative: no room)
	MaxCount int                  // ≤ 0 = unlimited; > 0 = at most this many nodes (reserved capacity, existing nodes)
}

// Class is a set of identical pods.
type Class struct {
	Count  int                  // pods; ≤ 0 contributes nothing
	Demand scheduling.Resources // per pod (Pods slot = 1)
	Types  []int                // indices into Problem.Types this class may use; none (or none it fits) → infeasible
	Group  int                  // index into Problem.Groups, or -1 (any negative value means no group)
}

// Group caps how many pods of its classes together one node may hold.
type Group struct {
	PerNode int // hostname anti-affinity → 1; hostname topology spread with maxSkew s → s; < 1 places nothing
}

// Problem is a packing problem: buy nodes so that every pod has one.
type Problem struct {
	Types   []Type
	Classes []Class
	Groups  []Group
}

// Result is a proven lower bound on the cost of any feasible packing, with the bounds it is made
// of. Every figure is ≤ the optimum; +Inf means the problem is proven infeasible. Classes that
// share no type can never share a node, so the problem splits into independent parts whose
// bounds add up: each figure below is a sum over the parts, and Value sums the best of them in
// each part, so it is at least the largest of them.
type Result struct {
	Value         float64 // the proven bound
	Covering      float64 // per-resource covering LP bound (of the reduced problem, see doc.go)
	Configuration float64 // configuration LP by column generation, certified by a Lagrangian (Farley-like) dual bound
	Trivial       float64 // counting bounds (one class or one group alone, or one resource for all pods; node counts rounded up; with CountingOnly, every resource at once: cover.go)
	Iterations    int     // column-generation rounds, all LPs together
	Columns       int     // columns (node fillings and patterns) generated, all LPs together
	Exact         bool    // the configuration LP was solved to proven optimality (in every part)
	Work          int64   // the work spent (see Work)
	Stopped       bool    // the work budget ran out, or Stop said so, before the LPs finished

	// With WithPatterns: the configuration LP's primal solution, the patterns with positive
	// multiplicity in the last master solved (in every part), by Multiplicity (largest first),
	// then Type, then Classes and Counts; and their cost Σ Multiplicity × price, the master's
	// objective. That cost bounds the configuration LP from above (it is within Gap of the
	// proven bound when the LP stopped there, and equals Configuration up to rounding when
	// Exact), not the optimum: rounding the patterns to whole nodes costs more. Patterns is
	// empty when the configuration LP was not reached (CoveringOnly, an infeasible or empty
	// problem) or some master still needed an artificial column after twice MaxIterations
	// rounds (its columns could not yet cover the demand within the types' limits). Classes
	// that demand nothing (not even the pod slot) are left out: the bounds never see them.
	Patterns []Pattern
	Primal   float64

	// With CoveringPrices: a price per pod of each Problem class, such that for any counts n'
	// of the same classes (the same demands, types and groups, any Count), Σ_k Prices[k]·n'_k
	// is a lower bound on the covering LP of that problem, and so on the cost of any packing
	// of it. They are the covering LP's duals scaled by Farley's factor (the least c_t/Ṽ_t over
	// the types, Ṽ_t the certified worth of one node of t at those duals), which holds whatever
	// the counts, since the covering LP caps no class per node. At the problem's own counts the
	// sum is at most Covering; the farther the counts move, the looser it gets. Classes the
	// bound does not see (those that demand nothing, those of an infeasible part) are priced 0.
	Prices []float64
}

// Option tunes Lower. Every limit is a count, never a clock, so results are reproducible.
type Option func(*config)

type config struct {
	maxIterations int // column-generation rounds of the configuration LP
	iterationsSet bool
	knapsackNodes int // branch-and-bound nodes per knapsack when certifying
	priceNodes    int // branch-and-bound nodes per knapsack when pricing
	gap           float64
	smooth        float64
	configuration bool
	countingOnly  bool
	prices        bool // CoveringPrices
	patterns      bool
	work          int64       // the work budget, ≤ 0: none (see Work)
	stop          func() bool // nil: never
	spent         int64       // work done so far, all LPs together
	stopped       bool        // the budget ran out or stop said so
	table         []float64   // resourceBound's dynamic program, shared by the parts
}

// over reports whether the budget is spent (or stop said so); once true it stays true, and
// stop is not asked again.
func (c *config) over() bool {
	if !c.stopped && (c.work > 0 && c.spent >= c.work || c.stop != nil && c.stop()) {
		c.stopped = true
	}
	return c.stopped
}

// Work caps the work of the LPs: column generation stops at the first round that finds the
// budget spent, and so does a master's simplex, between pivots. Work counts the master's pivots,
// each weighted by its rows squared (the dense basis update it costs), plus the classes of every
// knapsack priced. Every bound stays valid (certificates hold at any prices); it is only weaker,
// and Patterns may be empty if the masters could not yet cover the demand. Result.Stopped says
// whether the budget ran out.
func Work(n int64) Option { return func(c *config) { c.work = n } }

// Stop is asked between rounds and pivots, as Work is counted; once it returns true the LPs stop
// as if their work budget had run out. It is how a driver bounds the LPs by wall-clock time: the
// package reads no clock itself, and with Stop nil (or never true) Lower is deterministic.
func Stop(f func() bool) Option { return func(c *config) { c.stop = f } }

// MaxIterations caps the column-generation rounds of the configuration LP (default 20, or 40
// with WithPatterns). A smaller cap gives a weaker, still valid, bound. The fractional LPs price
// exactly and run to convergence.
func MaxIterations(n int) Option {
	return func(c *config) { c.maxIterations, c.iterationsSet = max(n, 1), true }
}

// KnapsackNodes caps the branch-and-bound nodes spent proving one knapsack's value for a
// certificate (default 2000); one certificate spends at most twice that over all its knapsacks.
// A knapsack left unfinished still gives a valid, looser, bound.
func KnapsackNodes(n int) Option { return func(c *config) { c.knapsackNodes = max(n, 1) } }

// Gap stops the configuration LP's column generation once its master objective, an upper bound
// on the LP, is within this fraction of the best bound proven so far (default 1e-4): the LP
// cannot raise the bound by more than that.
func Gap(rel float64) Option { return func(c *config) { c.gap = max(rel, 0) } }

// CountingOnly skips every LP: the result is the counting bounds alone (trivial.go, cover.go),
// whose work does not grow with the classes as the LPs' does. A caller that bounds many distinct
// classes through merged, rounded-down rows uses it on the problem as given, where the joint
// resource cover sees every pod's exact demand.
func CountingOnly() Option { return func(c *config) { c.countingOnly = true } }

// CoveringOnly skips the configuration LP.
func CoveringOnly() Option { return func(c *config) { c.configuration = false } }

// CoveringPrices is CoveringOnly, and sets Result.Prices: prices per pod of each class whose
// sum over any counts of the same classes bounds the covering LP at those counts. The types are
// then reduced only by dominance that holds at any counts (by capacity rather than by what the
// classes at these counts could use of a node), so the LP may take a little longer.
func CoveringPrices() Option {
	return func(c *config) { c.configuration, c.countingOnly, c.prices = false, false, true }
}

// WithPatterns fills Result.Patterns with the configuration LP's primal solution. It costs
// time: the configuration LP then runs even where its certificate could not raise the bound
// (large knapsacks), for up to 40 rounds unless MaxIterations says otherwise (its solution is
// the better for them: on the solver's problems its cost falls from 1–4% above the bound after
// 20 rounds to 0–2.5% after 40), and its columns are mapped back to the problem's types and
// classes.
func WithPatterns() Option { return func(c *config) { c.patterns = true } }

// relSafety is subtracted, relative to the value, from every bound, on top of the allowances
// each certificate makes for its own rounding (roundingSlack).
const relSafety = 1e-9

// Lower returns a proven lower bound on the minimum cost of a feasible packing of p. It is
// deterministic: the same problem and options give bit-identical results. It panics when p is
// malformed: a type index or group index out of range, a negative or non-finite price, a negative
// demand. A type with a negative capacity in some slot holds no pod; amounts at
// scheduling.Saturated are merely very large.
func Lower(p *Problem, opts ...Option) Result {
	cfg := config{maxIterations: 20, knapsackNodes: 2000, priceNodes: 100, gap: 1e-4, smooth: 0.5, configuration: true}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.patterns && !cfg.iterationsSet {
		cfg.maxIterations = 40
	}
	var prices []float64
	if cfg.prices {
		prices = make([]float64, len(p.Classes))
	}
	in, status := prepareWith(p, cfg.prices)
	switch status {
	case infeasible:
		inf := math.Inf(1)
		return Result{Value: inf, Covering: inf, Configuration: inf, Trivial: inf, Exact: true, Prices: prices}
	case empty:
		return Result{Exact: true, Prices: prices}
	}
	if in.nK == 0 { // only pods that demand nothing
		v := safe(in.anyNode)
		return Result{Value: v, Trivial: v, Exact: true, Prices: prices}
	}
	r := Result{Exact: true, Prices: prices}
	covered := cfg.patterns && cfg.configuration
	var patterns []Pattern
	for _, part := range in.split() {
		pr, nodes, ok := lowerPart(part, &cfg, r.Prices)
		r.Value += pr.Value
		r.Covering += pr.Covering
		r.Configuration += pr.Configuration
		r.Trivial += pr.Trivial
		r.Iterations += pr.Iterations
		r.Columns += pr.Columns
		r.Exact = r.Exact && pr.Exact
		if covered = covered && ok; covered {
			patterns = append(patterns, part.patterns(p, nodes)...)
		}
	}
	if covered && !math.IsInf(r.Value, 1) {
		r.Patterns = gather(patterns)
		for i := range r.Patterns {
			r.Primal += r.Patterns[i].Cost(p)
		}
	}
	// Any packing buys a node some pod may use (the parts count only pods that demand
	// something).
	r.Trivial = max(r.Trivial, safe(in.anyNode))
	r.Value = max(r.Value, r.Trivial)
	r.Work, r.Stopped = cfg.spent, cfg.stopped
	return r
}

// lowerPart bounds one independent part of the instance and, with cfg.patterns, returns the
// configuration LP's solution and whether it covers the part's demand. When prices is not nil
// it sets the covering prices of the part's Problem classes (Result.Prices).
func lowerPart(in *instance, cfg *config, prices []float64) (Result, []lpNode, bool) {
	var r Result
	var nodes []lpNode
	covered := false
	// The part's pods need at least one of its nodes.
	r.Trivial = safe(max(in.anyNode, trivialBound(in)))
	if !cfg.patterns {
		// Callers of WithPatterns want the LP's solution; the cover only raises the value.
		r.Trivial = max(r.Trivial, safe(resourceBound(in, &cfg.table)))
	}
	if cfg.countingOnly {
		// The bounded LP below is never weaker than the joint cover (every node it fills
		// uses at most U_t), so the joint cover is only worth its LP without them.
		r.Trivial = max(r.Trivial, safe(jointCover(in)))
		r.Value, r.Exact = r.Trivial, false
		return r, nil, false
	}
	cov := fractional(in, cfg, false, nil, nil)
	r.Covering = safe(cov.value)
	if prices != nil {
		coveringPrices(in, &cov, prices)
	}
	r.Iterations, r.Columns = cov.rounds, cov.columns
	if cfg.configuration {
		bcov := fractional(in, cfg, true, cov.cols, cov.pi)
		c := configuration(in, cfg, cov, bcov)
		r.Configuration, r.Exact = safe(c.value), c.exact
		r.Iterations += bcov.rounds + c.rounds
		r.Columns += bcov.columns + c.columns
		nodes, covered = c.nodes, c.covered
	}
	r.Value = max(r.Trivial, r.Covering, r.Configuration)
	return r, nodes, covered
}

// safe shrinks a certified bound by relSafety and maps NaN to 0.
func safe(v float64) float64 {
	if math.IsNaN(v) || v <= 0 {
		return 0
	}
	if math.IsInf(v, 1) {
		return v
	}
	return v - relSafety*v
}

// coveringPrices sets prices[m] for the Problem classes m of the part's classes: the covering
// duals π_k scaled by α = min_t c_t/Ṽ_t. For any counts n' of the part's classes and any
// fractional packing of them (y_kt pods of k on x_t nodes of t, Σ_t y_kt = n'_k), Σ_k π_k y_kt
// ≤ Ṽ_t x_t ≤ c_t x_t / α, so α Σ_k π_k n'_k ≤ Σ_t c_t x_t. Ṽ_t bounds a node of t at π over
// all its fillings (the covering knapsacks have no count caps), so nothing depends on the
// counts the LP was solved at.
func coveringPrices(in *instance, cov *coverResult, prices []float64) {
	alpha := math.Inf(1)
	for t, v := range cov.vt {
		if v > 0 {
			alpha = min(alpha, in.price[t]/v)
		}
	}
	if math.IsInf(alpha, 1) || math.IsNaN(alpha) || math.IsInf(cov.value, 1) {
		return // no node is worth anything at π (or the part is infeasible): price 0
	}
	for k := 0; k < in.nK; k++ {
		v := alpha * cov.pi[k]
		if v > 0 {
			v *= 1 - relSafety
		} else {
			v *= 1 + relSafety
		}
		for _, m := range in.members[k] {
			prices[m] = v
		}
	}
}

package solver

import "github.com/tenon-sh/tenon/pkg/solver/bound"

// Budgets. The guide's LP and the bound's are the solve's only steps whose work grows faster
// than the pods do, so each has a budget, in the bound package's work units (bound.Work): a
// count, never a clock, so that a solve stays deterministic. The guide's default budget is
// proportional to the first-fit solve's own work; when it runs out, the guide places what the
// LP has found so far and first-fit the rest, and the cheaper of that and plain first-fit wins,
// so first-fit is always the floor. A driver that wants a wall-clock limit on top passes
// Options.Deadline (see doc.go).

// guideWorkFactor is the guide's default budget per unit of first-fit work (see guideBudget).
const guideWorkFactor = 64

// minGuideWork lets small problems converge whatever their first-fit work: the LP's work grows
// with its rows (at most maxGuideClasses), not with the pods; 200 distinct web pods in 80 rows
// need about 2^24.
const minGuideWork = 1 << 26

// GuideStats says what the guided packing did.
type GuideStats struct {
	// Classes is the number of pod classes the guide placed by the LP's patterns, Rows the rows
	// of its LP after like classes were merged.
	Classes, Rows int
	// GridSteps is the grid that grouped the classes into rows, in steps per doubling (0:
	// exact). A row demands its pods' mean shape (aggregate.go); RoundingLoss is the share of
	// the demand that rounding every pod up to its grid cell would add, in the resource it would
	// add most to.
	GridSteps    int
	RoundingLoss float64
	// Work is what the LP spent, Budget what it was allowed (bound.Work); Stopped says the
	// budget or the deadline cut it short.
	Work, Budget int64
	Stopped      bool
	// Price is the guided plan's price; Won says the plan is the guided one (it was cheaper
	// than first-fit's).
	Price float64
	Won   bool
}

// BoundStats says how far the proof of Plan.LowerBound got.
type BoundStats struct {
	// Exact says the configuration LP was solved to optimality: the bound is as tight as the
	// LP can make it.
	Exact bool
	// Iterations are the column-generation rounds, Work the work spent (bound.Work).
	Iterations int
	Work       int64
	// Stopped says Options.BoundWork or Options.Deadline cut the LPs short: the bound holds,
	// but a larger budget could raise it.
	Stopped bool
	// Classes are the pod classes the bound covers, Rows the rows of the LP that gave it:
	// past maxBoundClasses, like classes are merged with their requests rounded down (or all
	// but one dropped), which relaxes the problem, and the best of a few such relaxations is
	// the bound. Relaxation names the one that gave it, RoundingLoss the share of the demand it
	// took away, in the resource it kept that lost most.
	Classes, Rows int
	Relaxation    string
	RoundingLoss  float64
}

// guideBudget is the work the guide's LP may spend on prob: Options.GuideWork if set, else
// guideWorkFactor times first-fit's work, which compares every pod with the pool types as it
// sizes claims: pods × types.
func (s *solve) guideBudget(prob *bound.Problem) int64 {
	if s.opts.GuideWork != 0 {
		return max(s.opts.GuideWork, 0)
	}
	pods := 0
	for _, c := range prob.Classes {
		pods += c.Count
	}
	return max(guideWorkFactor*int64(pods)*int64(len(prob.Types)), minGuideWork)
}

// lpOptions are the bound options that bound the LP's work (w > 0) and honour Options.Deadline
// and, for the bound, Options.BoundDeadline.
func (s *solve) lpOptions(w int64, forBound bool, opts ...bound.Option) []bound.Option {
	if w > 0 {
		opts = append(opts, bound.Work(w))
	}
	d, bd := s.opts.Deadline, s.opts.BoundDeadline
	switch {
	case !forBound || bd == nil:
	case d == nil:
		d = bd
	default:
		d = func() bool { return bd() || s.opts.Deadline() }
	}
	if d != nil {
		opts = append(opts, bound.Stop(d))
	}
	return opts
}

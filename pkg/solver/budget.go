package solver

import "github.com/tenon-sh/tenon/pkg/solver/bound"

// Budgets. The guide's LP and the bound's are the solve's only steps whose work grows faster
// than the pods do, so each has a budget, in the bound package's work units (bound.Work): a
// count, never a clock, so that a solve stays deterministic. A driver that wants a wall-clock
// limit on top passes Options.Deadline (see doc.go).
//
// The guide is anytime. Its first attempt merges the classes into at most maxGuideClasses rows,
// which the LP solves in well under a million units; its plan, or first-fit's, whichever is
// cheaper, is the floor. A second attempt on a finer grid (at most maxFineGuideClasses rows) runs
// only when the budget left covers what it is expected to cost: its placement (a guided solve
// places every pod again: guidePlaceFactor units per pod and pool type, about what first-fit
// took) and its LP (the first LP's work times the cube of the rows' ratio, which is how the
// dense master grows). The cheapest of the plans wins. The default budget is guideWorkFactor
// units per pod and pool type (a few times first-fit's own work), and at least minGuideWork: so
// a few hundred distinct pods get the finer grid, and thousands, where the first attempt's
// rows already hold dozens of pods each, do not pay for it. Options.GuideWork replaces the
// budget (< 0: unlimited).

// guideWorkFactor is the guide's default budget per packable pod and pool type.
const guideWorkFactor = 4

// guidePlaceFactor is what one guided placement costs, in work units per packable pod and pool
// type: placing 2,000 distinct pods on about 900 types takes first-fit some 20 ms, about what
// the LP spends in 7M units.
const guidePlaceFactor = 4

// minGuideWork is the least default budget: small problems get a finer grid (or their exact
// classes) whatever their first-fit work. It is about 40 ms of LP.
const minGuideWork = 1 << 24

// GuideStats says what the guided packing did.
type GuideStats struct {
	// Classes is the number of pod classes the guide placed by the LP's patterns, Rows the rows
	// of its LP after like classes were merged.
	Classes, Rows int
	// GridSteps is the grid that grouped the classes into rows, in steps per doubling (0:
	// exact). A row demands its pods' mean shape (aggregate.go); RoundingLoss is the share of
	// the demand that rounding every pod up to its grid cell would add, in the resource it would
	// add most to.
	GridSteps    float64
	RoundingLoss float64
	// Attempts counts the guided solves made (a second one on a finer grid when the budget
	// allowed it; these stats are the winning attempt's, or the first's).
	Attempts int
	// Work is what the LPs spent over all attempts, Budget what the guide was allowed
	// (bound.Work); Stopped says the budget or the deadline cut an LP short.
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
	// Classes are the pod classes the bound covers, Rows the rows of its LPs: past
	// maxBoundClasses, like classes are merged with their requests rounded down (or all but one
	// dropped), which relaxes the problem, and the best of a few such relaxations is the bound,
	// unless the counting bounds on every pod's exact request (the joint cover of all
	// resources, bound.CountingOnly) prove more. Relaxation names the one that gave it,
	// RoundingLoss the share of the demand it took away, in the resource it kept that lost most.
	Classes, Rows int
	Relaxation    string
	RoundingLoss  float64
}

// guideBudget is the guide's budget for the solve's packable pods: Options.GuideWork if set
// (< 0: unlimited, returned as 0), else guideWorkFactor units per packable pod and pool type, at
// least minGuideWork; and what one guided placement counts against it.
func (s *solve) guideBudget() (budget, place int64) {
	pods := int64(0)
	for _, c := range s.classes {
		if c.packable() {
			pods += int64(len(c.pods))
		}
	}
	types := int64(len(s.prep.packTypes().types))
	place = guidePlaceFactor * pods * types
	switch {
	case s.opts.GuideWork < 0:
		return 0, place
	case s.opts.GuideWork > 0:
		return s.opts.GuideWork, place
	}
	return max(guideWorkFactor*pods*types, minGuideWork), place
}

// finerRows is the rows of the finest grid among finer (rows per grid, finest first) that a
// second attempt may take: after a first attempt of g.Rows rows whose LP spent g.Work, its
// placement and its LP (g.Work times the cube of the rows' ratio) must fit in what is left of the
// budget after spent (0: unlimited). It returns 0 when none does.
func finerRows(g GuideStats, finer []int, budget, spent, place int64) int {
	for _, r := range finer {
		if r <= g.Rows || g.Rows == 0 {
			continue
		}
		if budget == 0 {
			return r
		}
		ratio := float64(r) / float64(g.Rows)
		lp := float64(max(g.Work, 1)) * ratio * ratio * ratio
		if float64(spent)+float64(place)+lp <= float64(budget) {
			return r
		}
	}
	return 0
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

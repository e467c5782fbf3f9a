package bound

import (
	"cmp"
	"math"
	"slices"
)

// certificate turns class prices π ≥ 0 into a proven lower bound (doc.go, "The certificate"):
//
//	z ≥ g(α) = α·π·n − Σ_t W_t·(α·Ṽ_t − c_t)⁺   for every α ≥ 0,
//
// where Ṽ_t is an upper bound on what one node of type t can be worth at prices π and W_t bounds
// the non-empty nodes of type t. It maximizes g exactly (g is concave and piecewise linear) and
// tightens Ṽ_t lazily: only types whose breakpoint c_t/Ṽ_t lies at or below the maximizer can
// change the maximum, so only those are refined, until none is left to refine.
type certificate struct {
	in    *instance
	a     float64   // π·n
	vt    []float64 // Ṽ_t
	level []int8    // how far Ṽ_t has been refined
	top   int8      // the last refinement level
	order []int
}

func newCertificate(in *instance, top int8) *certificate {
	return &certificate{in: in, vt: make([]float64, in.nT), level: make([]int8, in.nT), top: top}
}

// start sets π·n for prices pi.
func (c *certificate) start(pi []float64) {
	c.a = 0
	for k, p := range pi {
		c.a += p * float64(c.in.count[k])
	}
}

// set records a bound for type t at a refinement level. It is inflated by roundingSlack:
// every bound is a sum of non-negative terms, or comes with its own allowance for cancellation
// (knap.certify), so this covers the rounding of its evaluation.
func (c *certificate) set(t int, v float64, level int8) {
	c.vt[t], c.level[t] = v*(1+roundingSlack), level
}

// roundingSlack is the relative allowance for floating-point rounding in one evaluation of a
// bound: far above the 1e-16 of a float64 times the few hundred terms of a sum.
const roundingSlack = 1e-12

// solve refines until the maximum of g is settled and returns it (+Inf when g is unbounded,
// which proves the problem infeasible). refine(t) must lower or keep vt[t] and raise level[t].
//
// A type matters once its breakpoint is at or below the maximizer α (past it, a lower Ṽ_t
// leaves the slope right of α negative, so the maximum stays). Cheap refinements go to the
// types within 5% of α, which batches them as α moves up; the last, dear one (branch and bound)
// only to those at α, up to rounding.
func (c *certificate) solve(refine func(t int)) float64 {
	in := c.in
	for {
		alpha, g := c.maximize()
		loose, tight := alpha*1.05, alpha*(1+1e-9)
		if math.IsInf(alpha, 1) {
			loose, tight = math.Inf(1), math.Inf(1)
		}
		refined := false
		for t := 0; t < in.nT; t++ {
			limit := loose
			if c.top > 1 && c.level[t] == c.top-1 {
				limit = tight
			}
			if c.level[t] < c.top && c.vt[t] > 0 && in.price[t]/c.vt[t] <= limit {
				refine(t)
				refined = true
			}
		}
		if !refined {
			return g
		}
	}
}

// maximize returns the maximizer α of g and g(α); α = +Inf when the slope of g stays positive,
// by a margin, past every breakpoint.
func (c *certificate) maximize() (float64, float64) {
	in := c.in
	c.order = c.order[:0]
	total := 0.0
	for t := 0; t < in.nT; t++ {
		if c.vt[t] > 0 {
			c.order = append(c.order, t)
			total += in.weight[t] * c.vt[t]
		}
	}
	if c.a <= 0 {
		return 0, 0
	}
	if c.a > (1+1e-9)*total {
		return math.Inf(1), math.Inf(1)
	}
	beta := func(t int) float64 { return in.price[t] / c.vt[t] }
	slices.SortFunc(c.order, func(x, y int) int {
		if r := cmp.Compare(beta(x), beta(y)); r != 0 {
			return r
		}
		return cmp.Compare(x, y)
	})
	slope, alpha := c.a, 0.0
	for _, t := range c.order {
		if slope <= 0 {
			break
		}
		alpha = beta(t)
		slope -= in.weight[t] * c.vt[t]
	}
	// g and the magnitude of its terms, whose rounding g must allow for: with prices far above
	// the bound (an LP's duals can be), cancellation costs more than the bound's own size.
	g, mag := alpha*c.a, alpha*c.a
	for _, t := range c.order {
		if p := alpha*c.vt[t] - in.price[t]; p > 0 {
			g -= in.weight[t] * p
			mag += in.weight[t] * (alpha*c.vt[t] + in.price[t])
		}
	}
	return alpha, max(g-roundingSlack*mag, 0)
}

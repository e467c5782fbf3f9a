package sim

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver/bound"
)

// BoundResult is the lower bound: at every instant, the cheapest fractional fleet that covers
// the pods then running if every job started at its submission (pkg/solver/bound's covering
// LP, solved at a change point unless the last LP's covering prices prove within BoundSlack of
// it there), integrated over time.
type BoundResult struct {
	CostUSD     float64   `json:"costUSD"`
	StepSeconds float64   `json:"stepSeconds"`
	CostPerHour []float64 `json:"costPerHour"`
	// ChangePoints is the number of instants the demand changed; LPs the covering LPs solved
	// (equal demands share one, and demands that differ only in scale share one when the
	// pods' requests are proportional).
	ChangePoints int `json:"changePoints"`
	LPs          int `json:"lps"`
	// Priced is how many change points took, instead of an LP, the covering prices of the
	// last LP solved (bound.CoveringPrices) summed over the pods then running: a proven bound
	// at any demand, used only where it is within BoundSlack of an upper bound on the LP there.
	Priced int `json:"priced"`
	// UnplaceablePods can go on no instance type of any pool: the bound leaves them out (no
	// policy can run them either).
	UnplaceablePods int `json:"unplaceablePods"`
	// InfeasibleHours is how long the demand could not be covered at all (count-limited types
	// only, such as reservations, too few): the bound counts nothing for that time.
	InfeasibleHours float64 `json:"infeasibleHours,omitempty"`
	// BillUSD, with Options.Commitments, is a floor under any policy's bill: in each bucket the
	// commitments' fixed part, plus the bound's cost less the most on-demand usage they can
	// cover (commitment.MaxCovered), never below zero.
	BillUSD float64 `json:"billUSD,omitempty"`
	// EndHours is the virtual time the bound covers.
	EndHours    float64 `json:"endHours"`
	WallSeconds float64 `json:"wallSeconds"`
}

// boundClass is a set of shapes the covering LP cannot tell apart: the same instance types,
// and proportional requests (the pods slot aside), so that k pods of one and j of another are
// unit × (k·mult₁ + j·mult₂).
type boundClass struct {
	unit  scheduling.Resources
	types []int
	// limited is set when some type has a count limit: the LP's value then does not scale.
	limited bool
	// perUnit is the cheapest price of a unit: min over the class's types of price ÷ the
	// units one node holds (fractionally).
	perUnit float64
	// group numbers the classes by unit: classes of one group have proportional requests.
	group int
}

// BoundSlack is how far below the covering LP, at most, the bound may be at a change point where
// it reuses the last LP's prices rather than solving (BoundResult.Priced): the prices are used
// only where their sum is at least 1 − BoundSlack of an upper bound on the LP there (the last LP's
// value plus, for the pods added since, what their classes cost alone at their cheapest price per
// unit).
const BoundSlack = 0.005

// LowerBound computes the bound for a workload over the NodePools of env, until until (0: the
// workload's span). The pods slot of requests is left out (a relaxation: the bound stays
// valid, and proportional shapes merge).
func LowerBound(env *Env, until time.Duration, buckets int) *BoundResult {
	return lowerBound(env, until, buckets, BoundSlack)
}

// lowerBound is LowerBound with the slack the last LP's prices may be used within (negative:
// an LP at every change point whose demand is new).
func lowerBound(env *Env, until time.Duration, buckets int, slack float64) *BoundResult {
	start := time.Now()
	w := env.Workload
	prob, classOf, mult := boundProblem(env)
	res := &BoundResult{}
	type change struct {
		at    time.Duration
		class int
		delta int64
	}
	var changes []change
	end := w.Span()
	if until > 0 {
		end = until
	}
	for _, j := range w.Jobs {
		c := classOf[j.Shape]
		if c < 0 {
			if !env.placeable(j.Shape) {
				res.UnplaceablePods += j.Replicas // else it requests nothing the bound counts
			}
			continue
		}
		d := int64(j.Replicas) * mult[j.Shape]
		stop := j.Submit + j.Duration
		if j.Duration == Forever {
			stop = end
		}
		changes = append(changes, change{j.Submit, c, d}, change{min(stop, end), c, -d})
	}
	slices.SortStableFunc(changes, func(a, b change) int { return cmp.Compare(a.at, b.at) })
	step := bucketStep(w.Span(), buckets)
	res.StepSeconds = step.Seconds()
	counts := make([]int64, len(prob.classes))
	cache := map[string]float64{}
	// The last LP solved: its value, the counts it was solved at and its covering prices per
	// class (nil until one is solved with no count-limited class).
	var atValue float64
	atCounts := make([]int64, len(prob.classes))
	var prices []float64
	value := func() float64 {
		// Classes of one group whose types have no count limit do not interact in the
		// fractional covering LP: a node holds a scalar number of units, so every unit goes
		// to its class's cheapest type per unit, and the LP's value is Σ count × perUnit.
		group, linear, sum := -1, true, 0.0
		for c, n := range counts {
			if n == 0 {
				continue
			}
			bc := &prob.classes[c]
			if bc.limited || group >= 0 && bc.group != group {
				linear = false
				break
			}
			group = bc.group
			sum += bc.perUnit * float64(n)
		}
		if group < 0 {
			return 0
		}
		if linear {
			return sum
		}
		limited := false
		for c, n := range counts {
			limited = limited || n > 0 && prob.classes[c].limited
		}
		if prices != nil && !limited && slack >= 0 {
			// Between L = Σ prices·counts (a bound at any counts) and U = the last LP's value
			// plus the added pods at their classes' cheapest price per unit (the LP is monotone
			// and subadditive, so U bounds it from above).
			lo, up := 0.0, atValue
			for c, n := range counts {
				lo += prices[c] * float64(n)
				if d := n - atCounts[c]; d > 0 {
					up += prob.classes[c].perUnit * float64(d)
				}
			}
			if lo >= (1-slack)*up {
				res.Priced++
				return lo
			}
		}
		var key strings.Builder
		state := map[int]int64{}
		for c, n := range counts {
			if n > 0 {
				key.WriteString(strconv.Itoa(c))
				key.WriteByte(':')
				key.WriteString(strconv.FormatInt(n, 10))
				key.WriteByte(',')
				state[c] = n
			}
		}
		if v, ok := cache[key.String()]; ok {
			return v
		}
		v, pr := prob.solve(state, len(counts))
		res.LPs++
		if math.IsInf(v, 0) || math.IsNaN(v) {
			v = -1
		}
		cache[key.String()] = v
		prices = nil
		if v >= 0 && !limited { // a count limit makes the LP's value depend on more than prices
			prices = pr
			atValue = v
			copy(atCounts, counts)
		}
		return v
	}
	var series []float64
	integrate := func(from, to time.Duration, rate float64) {
		for from < to {
			b := int(from / step)
			e := min(to, time.Duration(b+1)*step)
			for len(series) <= b {
				series = append(series, 0)
			}
			series[b] += rate * (e - from).Hours()
			from = e
		}
	}
	rate, last := 0.0, time.Duration(0)
	add := func(to time.Duration) {
		if rate < 0 { // infeasible: nothing is proven for this stretch
			res.InfeasibleHours += (to - last).Hours()
			return
		}
		integrate(last, to, rate)
		res.CostUSD += rate * (to - last).Hours()
	}
	for i := 0; i < len(changes); {
		at := changes[i].at
		if at > end {
			break
		}
		add(at)
		for ; i < len(changes) && changes[i].at == at; i++ {
			counts[changes[i].class] += changes[i].delta
		}
		res.ChangePoints++
		rate, last = value(), at
	}
	if last < end {
		add(end)
	}
	res.EndHours = end.Hours()
	res.CostPerHour = make([]float64, len(series))
	for b, s := range series {
		width := step
		if e := time.Duration(b+1) * step; e > end {
			width = end - time.Duration(b)*step
		}
		if width > 0 {
			res.CostPerHour[b] = s / width.Hours()
		}
	}
	res.WallSeconds = time.Since(start).Seconds()
	return res
}

// lpProblem holds the bound's types and classes.
type lpProblem struct {
	types   []bound.Type
	classes []boundClass
}

// solve returns the covering LP's value for counts of class units (the LP of the problem as
// given, bound.CoveringPrices), and its covering prices per class (0 for classes not in state):
// Σ prices·counts bounds the covering LP at any counts of the classes.
func (lp *lpProblem) solve(state map[int]int64, classes int) (float64, []float64) {
	p := bound.Problem{Types: lp.types}
	order := slices.Sorted(mapKeys(state))
	for _, c := range order {
		bc := &lp.classes[c]
		p.Classes = append(p.Classes, bound.Class{Count: int(state[c]), Demand: bc.unit, Types: bc.types, Group: -1})
	}
	r := bound.Lower(&p, bound.CoveringPrices())
	out := make([]float64, classes)
	for i, c := range order {
		out[c] = r.Prices[i]
	}
	return r.Covering, out
}

func mapKeys(m map[int]int64) func(func(int) bool) {
	return func(yield func(int) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// boundProblem builds the LP's types (every pool type at its cheapest allowed offering that is
// not reserved, and each usable reserved offering as a type limited to its capacity; room is
// allocatable less DaemonSets) and merges the shapes into classes. classOf[s] is shape s's
// class (-1: no type holds it), mult[s] its requests in units of the class's unit.
func boundProblem(env *Env) (*lpProblem, []int, []int64) {
	w := env.Workload
	lp := &lpProblem{}
	type ptype struct {
		pool int
		t    int // in lp.types
		node scheduling.Requirements
	}
	var pts []ptype
	for _, p := range env.Pools {
		q := catalog.NewQuery(p.Solver.Requirements)
		for _, it := range p.Types {
			room := it.Allocatable()
			node := nodeRequirements(p, it)
			best := -1
			for oi := range it.Offerings {
				o := &it.Offerings[oi]
				if !o.Usable() || !q.OfferingMatches(o) {
					continue
				}
				ds := daemonRequests(env, p, it.NodeLabels(o))
				cap := room.Sub(ds)
				cap[scheduling.Pods] = 0
				if o.CapacityType == apisv1.CapacityTypeReserved {
					pts = append(pts, ptype{p.Index, len(lp.types), node})
					lp.types = append(lp.types, bound.Type{Name: it.Name + "/reserved", Price: o.Price, Capacity: cap, MaxCount: o.ReservationCapacity})
					continue
				}
				if best < 0 || o.Price < it.Offerings[best].Price {
					best = oi
				}
			}
			if best >= 0 {
				o := &it.Offerings[best]
				cap := room.Sub(daemonRequests(env, p, it.NodeLabels(o)))
				cap[scheduling.Pods] = 0
				pts = append(pts, ptype{p.Index, len(lp.types), node})
				lp.types = append(lp.types, bound.Type{Name: it.Name, Price: o.Price, Capacity: cap})
			}
		}
	}
	classOf := make([]int, len(w.Shapes))
	mult := make([]int64, len(w.Shapes))
	byKey := map[string]int{}
	groups := map[scheduling.Resources]int{}
	for s := range w.Shapes {
		sh := &w.Shapes[s]
		demand := sh.Requests
		demand[scheduling.Pods] = 0
		var types []int
		limited := false
		for _, pt := range pts {
			if !demand.Fits(&lp.types[pt.t].Capacity) || !admitsNode(env, pt.pool, s, pt.node) {
				continue
			}
			types = append(types, pt.t)
			limited = limited || lp.types[pt.t].MaxCount > 0
		}
		if len(types) == 0 || demand.IsZero() {
			classOf[s] = -1
			continue
		}
		unit, m := normalise(demand)
		key := intsKey(types) + "|" + unit.String()
		c, ok := byKey[key]
		if !ok {
			g, ok := groups[unit]
			if !ok {
				g = len(groups)
				groups[unit] = g
			}
			c = len(lp.classes)
			byKey[key] = c
			lp.classes = append(lp.classes, boundClass{unit: unit, types: types, limited: limited, perUnit: perUnit(lp.types, types, unit), group: g})
		}
		classOf[s], mult[s] = c, m
	}
	return lp, classOf, mult
}

// perUnit returns the cheapest price per unit over types, a node holding a fraction of units.
func perUnit(types []bound.Type, idx []int, unit scheduling.Resources) float64 {
	best := inf
	for _, t := range idx {
		ty := &types[t]
		hold := inf
		for r, u := range unit {
			if u > 0 {
				hold = min(hold, float64(ty.Capacity[r])/float64(u))
			}
		}
		if hold > 0 && ty.Price/hold < best {
			best = ty.Price / hold
		}
	}
	return best
}

// placeableShapes tells, for each shape of the workload, whether some instance type of some
// pool could ever hold one of its pods: the pool's taints tolerated, the pool's and the type's
// requirements compatible with the pod's, and its requests (the pods slot aside) within the
// type's allocatable less the DaemonSets of some usable offering the pool allows. It errs
// towards placeable (offering-level constraints of the pod are not checked): a shape it calls
// unplaceable is one no policy can ever run.
func placeableShapes(env *Env) []bool {
	w := env.Workload
	out := make([]bool, len(w.Shapes))
	for _, p := range env.Pools {
		q := catalog.NewQuery(p.Solver.Requirements)
		for _, it := range p.Types {
			room := it.Allocatable()
			var caps []scheduling.Resources
			for oi := range it.Offerings {
				o := &it.Offerings[oi]
				if !o.Usable() || !q.OfferingMatches(o) {
					continue
				}
				c := room.Sub(daemonRequests(env, p, it.NodeLabels(o)))
				c[scheduling.Pods] = 0
				caps = append(caps, c)
			}
			if len(caps) == 0 {
				continue
			}
			node := nodeRequirements(p, it)
			for s := range w.Shapes {
				if out[s] {
					continue
				}
				demand := w.Shapes[s].Requests
				demand[scheduling.Pods] = 0
				if !slices.ContainsFunc(caps, func(c scheduling.Resources) bool { return demand.Fits(&c) }) {
					continue
				}
				out[s] = admitsNode(env, p.Index, s, node)
			}
		}
	}
	return out
}

// nodeRequirements are the requirements a node of type it in pool p carries: computed once per
// pool and type, not once per shape (the intersection allocates).
func nodeRequirements(p *Pool, it *catalog.InstanceType) scheduling.Requirements {
	return p.Reqs.Intersect(it.Requirements)
}

// admitsNode reports whether a shape may run on a node of a pool (taints and labels), node being
// the requirements of the pool's node of some type (nodeRequirements).
func admitsNode(env *Env, pool, shape int, node scheduling.Requirements) bool {
	sh := &env.Workload.Shapes[shape]
	if scheduling.UntoleratedTaint(sh.tolerations, env.Pools[pool].Taints) != nil {
		return false
	}
	for _, a := range sh.alts {
		if scheduling.Compatible(node, a, scheduling.AllowUndefinedWellKnown) == nil {
			return true
		}
	}
	return false
}

// normalise divides a vector by the greatest common divisor of its entries.
func normalise(r scheduling.Resources) (scheduling.Resources, int64) {
	var g int64
	for _, v := range r {
		if v > 0 {
			g = gcd(g, v)
		}
	}
	if g <= 1 {
		return r, 1
	}
	for i := range r {
		r[i] /= g
	}
	return r, g
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func intsKey(xs []int) string {
	var b strings.Builder
	for _, x := range xs {
		b.WriteString(strconv.Itoa(x))
		b.WriteByte(',')
	}
	return b.String()
}

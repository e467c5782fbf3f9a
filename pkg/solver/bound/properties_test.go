package bound

import (
	"flag"
	"fmt"
	"math"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// chooser draws the integers a problem is built from, so that rapid and the fuzzer share one
// generator.
type chooser interface {
	Int(lo, hi int) int
}

type rapidChooser struct{ t *rapid.T }

func (c rapidChooser) Int(lo, hi int) int { return rapid.IntRange(lo, hi).Draw(c.t, "n") }

var smallPrices = []float64{0, 0.25, 0.5, 0.7, 1, 1.212, 1.5, 2, 3, 5.672}

// smallProblem draws a problem brute force can solve: ≤ 4 types, ≤ 3 classes, ≤ 7 pods.
func smallProblem(c chooser) *Problem {
	const gib = 1 << 30
	p := &Problem{}
	for range c.Int(1, 4) {
		var capacity scheduling.Resources
		capacity[scheduling.CPU] = int64(c.Int(1, 8)) * 1000
		capacity[scheduling.Memory] = int64(c.Int(1, 8)) * gib
		capacity[scheduling.Pods] = int64(c.Int(1, 6))
		if c.Int(0, 3) == 3 {
			capacity[scheduling.NvidiaGPU] = int64(c.Int(1, 3))
		}
		price := smallPrices[c.Int(0, len(smallPrices)-1)]
		if c.Int(0, 1) == 1 {
			price = float64(c.Int(0, 500)) / 100
		}
		p.Types = append(p.Types, Type{Price: price, Capacity: capacity, MaxCount: max(c.Int(-2, 3), 0)})
	}
	for range c.Int(0, 2) {
		p.Groups = append(p.Groups, Group{PerNode: c.Int(1, 3)})
	}
	nK := c.Int(1, 3)
	left := 7
	for k := range nK {
		var demand scheduling.Resources
		demand[scheduling.CPU] = int64(c.Int(0, 16)) * 250
		demand[scheduling.Memory] = int64(c.Int(0, 8)) * gib / 4
		demand[scheduling.Pods] = 1
		if c.Int(0, 4) == 4 {
			demand[scheduling.NvidiaGPU] = 1
		}
		n := c.Int(1, max(1, left-(nK-k-1)))
		left -= n
		var types []int
		mask := c.Int(0, 1<<len(p.Types)-1)
		if c.Int(0, 3) > 0 { // mostly non-empty
			mask |= 1 << c.Int(0, len(p.Types)-1)
		}
		for t := range p.Types {
			if mask&(1<<t) != 0 {
				types = append(types, t)
			}
		}
		p.Classes = append(p.Classes, Class{Count: n, Demand: demand, Types: types, Group: c.Int(-1, len(p.Groups)-1)})
	}
	return p
}

// fataler is what the checks need of *testing.T, *testing.F's T and *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// tightness accumulates how close bounds come to the optimum.
type tightness struct {
	runs, feasible, positive, exactOpt, exactLP int
	ratio, covRatio, confRatio                  float64
}

func (s *tightness) add(r Result, opt float64) {
	s.runs++
	if math.IsInf(opt, 1) {
		return
	}
	s.feasible++
	if r.Exact {
		s.exactLP++
	}
	if opt <= 0 {
		return
	}
	s.positive++
	s.ratio += r.Value / opt
	s.covRatio += r.Covering / opt
	s.confRatio += r.Configuration / opt
	if r.Value >= opt*(1-1e-6) {
		s.exactOpt++
	}
}

func (s *tightness) log(t *testing.T) {
	n := float64(max(s.positive, 1))
	t.Logf("%d problems, %d feasible, %d with positive optimum: bound/optimum mean %.4f (covering %.4f, configuration %.4f); bound = optimum in %d (%.1f%%); configuration LP proven exact in %d of %d feasible",
		s.runs, s.feasible, s.positive, s.ratio/n, s.covRatio/n, s.confRatio/n, s.exactOpt, 100*float64(s.exactOpt)/n, s.exactLP, s.feasible)
}

// checkAgainstBruteForce asserts the safety properties of one problem and returns the optimum.
func checkAgainstBruteForce(t fataler, p *Problem, r Result) float64 {
	t.Helper()
	opt := bruteForce(p)
	for name, v := range map[string]float64{"Value": r.Value, "Covering": r.Covering, "Configuration": r.Configuration, "Trivial": r.Trivial} {
		if math.IsNaN(v) || v < 0 {
			t.Fatalf("%s = %v\n%s", name, v, describe(p))
		}
		if v > opt+1e-9 {
			t.Fatalf("%s = %.12g exceeds the optimum %.12g\nresult %+v\n%s", name, v, opt, r, describe(p))
		}
	}
	if r.Value < max(r.Covering, r.Configuration, r.Trivial) {
		t.Fatalf("Value %v is below one of %+v", r.Value, r)
	}
	for _, c := range p.Classes {
		if c.Count > 0 && len(fitting(p, c)) == 0 && !math.IsInf(r.Value, 1) {
			t.Fatalf("a class has no type it fits, yet Value = %v\n%s", r.Value, describe(p))
		}
	}
	return opt
}

// TestNeverAboveOptimum: on small random problems the bound never exceeds the brute-force
// optimum, is deterministic, and its LPs agree with gonum's solution of the full LPs.
func TestNeverAboveOptimum(t *testing.T) {
	var stats tightness
	for range repetitions() {
		rapid.Check(t, neverAboveOptimum(&stats))
	}
	stats.log(t)
}

// TestNeverAboveOptimumCapped: the bound stays below the optimum however few rounds and
// branch-and-bound nodes the options allow (capped loops certify prices part-way, where a
// working set has priced only some types), with or without patterns.
func TestNeverAboveOptimumCapped(t *testing.T) {
	for range repetitions() {
		rapid.Check(t, func(rt *rapid.T) {
			p := smallProblem(rapidChooser{rt})
			opts := []Option{
				MaxIterations(rapid.IntRange(1, 4).Draw(rt, "rounds")),
				KnapsackNodes(rapid.IntRange(1, 50).Draw(rt, "nodes")),
			}
			if rapid.Bool().Draw(rt, "patterns") {
				opts = append(opts, WithPatterns())
			}
			r := Lower(p, opts...)
			checkAgainstBruteForce(rt, p, r)
			if len(r.Patterns) > 0 {
				checkPatterns(rt, p, r)
			}
		})
	}
}

// repetitions runs rapid's default 100 cases ten times over (the checks are cheap); an explicit
// -rapid.checks is taken as given.
func repetitions() int {
	if f := flag.Lookup("rapid.checks"); f != nil && f.Value.String() == f.DefValue {
		return 10
	}
	return 1
}

func neverAboveOptimum(stats *tightness) func(*rapid.T) {
	return func(rt *rapid.T) {
		p := smallProblem(rapidChooser{rt})
		r := Lower(p)
		if again := Lower(p); !reflect.DeepEqual(again, r) {
			rt.Fatalf("not deterministic: %+v then %+v", r, again)
		}
		opt := checkAgainstBruteForce(rt, p, r)
		stats.add(r, opt)
		if math.IsInf(r.Value, 1) {
			return
		}
		checkLPs(rt, p, r)
	}
}

// checkLPs compares the covering and configuration bounds with the full LPs of the reduced
// problem solved by gonum, and the covering bound with the covering LP of the problem as given,
// which reductions never weaken.
func checkLPs(t fataler, p *Problem, r Result) {
	q := reduced(p)
	cov, err := coveringLP(q)
	if err == nil {
		if r.Covering > cov+1e-9*(1+cov) {
			t.Fatalf("Covering %.12g > covering LP %.12g\n%s", r.Covering, cov, describe(p))
		}
		if r.Covering < cov-1e-6*(1+cov) {
			t.Fatalf("Covering %.12g < covering LP %.12g: column generation stopped short\n%s", r.Covering, cov, describe(p))
		}
	}
	if given, err := coveringLP(p); err == nil && r.Covering < given-1e-6*(1+given) {
		t.Fatalf("Covering %.12g < covering LP of the problem as given %.12g\n%s", r.Covering, given, describe(p))
	}
	conf, err := configurationLP(q)
	if err == nil {
		if r.Configuration > conf+1e-9*(1+conf) {
			t.Fatalf("Configuration %.12g > configuration LP %.12g\n%s", r.Configuration, conf, describe(p))
		}
		if r.Exact && r.Configuration < conf-1e-6*(1+conf) {
			t.Fatalf("Exact, but Configuration %.12g < configuration LP %.12g\n%s", r.Configuration, conf, describe(p))
		}
	}
	if r.Exact && r.Configuration < r.Covering-1e-6*(1+r.Covering) {
		t.Fatalf("exact Configuration %.12g below Covering %.12g\n%s", r.Configuration, r.Covering, describe(p))
	}
}

// certifyAt runs the certificate alone at arbitrary prices.
func certifyAt(in *instance, pi []float64, bounded bool, nodes int) float64 {
	top := int8(1)
	if bounded {
		top = 2
	}
	kn := newKnap(in, newNodeLP(in, bounded))
	cert := newCertificate(in, top)
	for t := 0; t < in.nT; t++ {
		kn.load(t, pi)
		if kn.n == 0 {
			cert.set(t, 0, top)
		} else {
			cert.set(t, kn.cheap(), 0)
		}
	}
	cert.start(pi)
	return cert.solve(func(t int) {
		kn.load(t, pi)
		ub := min(cert.vt[t], kn.relax())
		level := cert.level[t] + 1
		if level >= 2 {
			ub = min(ub, kn.branch(nodes))
		}
		cert.set(t, ub, min(level, top))
	})
}

// TestCertificateAnyPrices: the certificate is a bound at any prices, however far from an LP's
// duals and however large (an LP's degenerate duals can be huge), with any branch-and-bound
// budget.
func TestCertificateAnyPrices(t *testing.T) {
	for range repetitions() {
		rapid.Check(t, certificateAnyPrices)
	}
}

func certificateAnyPrices(rt *rapid.T) {
	p := smallProblem(rapidChooser{rt})
	in, status := prepare(p)
	if status != solvable || in.nK == 0 {
		return
	}
	opt := bruteForce(p)
	pi := make([]float64, in.nK)
	for k := range pi {
		pi[k] = rapid.Float64Range(0, 4).Draw(rt, "pi")
		if rapid.IntRange(0, 4).Draw(rt, "huge") == 4 {
			pi[k] *= math.Pow(10, float64(rapid.IntRange(3, 12).Draw(rt, "exp")))
		}
	}
	for _, bounded := range []bool{false, true} {
		nodes := rapid.IntRange(1, 50).Draw(rt, "nodes")
		if g := safe(certifyAt(in, pi, bounded, nodes)); math.IsNaN(g) || g > opt+1e-9 {
			rt.Fatalf("bounded %v: certificate %.12g at prices %v exceeds the optimum %.12g\n%s", bounded, g, pi, opt, describe(p))
		}
	}
}

// TestJointCoverNeverAboveOptimum: the joint resource cover alone, and the counting bounds
// (CountingOnly), never exceed the brute-force optimum of small random problems.
func TestJointCoverNeverAboveOptimum(t *testing.T) {
	for range repetitions() {
		rapid.Check(t, func(rt *rapid.T) {
			p := smallProblem(rapidChooser{rt})
			opt := bruteForce(p)
			if r := Lower(p, CountingOnly()); r.Value > opt+1e-9 || r.Value < 0 || math.IsNaN(r.Value) {
				rt.Fatalf("CountingOnly = %.12g, optimum %.12g\n%s", r.Value, opt, describe(p))
			}
			in, status := prepare(p)
			if status != solvable || in.nK == 0 {
				return
			}
			sum := 0.0
			for _, part := range in.split() {
				sum += jointCover(part)
			}
			if sum > opt+1e-9 || sum < 0 || math.IsNaN(sum) {
				rt.Fatalf("jointCover = %.12g, optimum %.12g\n%s", sum, opt, describe(p))
			}
		})
	}
}

// TestCoveringPricesHoldAtAnyCounts: with CoveringPrices, Covering is the covering LP of the
// problem as given (gonum's solution of it), and the prices, summed over other counts of the same
// classes, never exceed the covering LP at those counts nor its brute-force optimum, and at the
// problem's own counts never exceed Covering.
func TestCoveringPricesHoldAtAnyCounts(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		p := smallProblem(rapidChooser{rt})
		r := Lower(p, CoveringPrices())
		if len(r.Prices) != len(p.Classes) {
			rt.Fatalf("%d prices for %d classes", len(r.Prices), len(p.Classes))
		}
		// With prices the types are reduced by count-free dominance only: the LP solved is the
		// covering LP of the problem as given, never above the reduced one CoveringOnly solves.
		if again := Lower(p, CoveringOnly()); r.Covering > again.Covering+1e-9*(1+again.Covering) {
			rt.Fatalf("Covering %v with prices, above %v without\n%s", r.Covering, again.Covering, describe(p))
		}
		if math.IsInf(r.Covering, 1) {
			return
		}
		if given, err := coveringLP(p); err == nil && math.Abs(r.Covering-given) > 1e-6*(1+given) {
			rt.Fatalf("Covering %.12g with prices, the covering LP of the problem as given is %.12g\n%s", r.Covering, given, describe(p))
		}
		s := 0.0
		for k, c := range p.Classes {
			s += r.Prices[k] * float64(c.Count)
		}
		if s > r.Covering+1e-9*(1+r.Covering) {
			rt.Fatalf("prices sum to %.12g at the problem's counts, above Covering %.12g\n%s", s, r.Covering, describe(p))
		}
		// Other counts: classes drawn to 0 are left out (the oracle LP wants every row used).
		q := &Problem{Types: p.Types, Groups: p.Groups}
		s = 0
		for k, c := range p.Classes {
			c.Count = rapid.IntRange(0, 7).Draw(rt, fmt.Sprint("count", k))
			if c.Count > 0 {
				q.Classes = append(q.Classes, c)
				s += r.Prices[k] * float64(c.Count)
			}
		}
		if len(q.Classes) == 0 {
			return
		}
		opt := bruteForce(q)
		if math.IsInf(opt, 1) {
			return // infeasible at those counts (a class no type holds): nothing to compare
		}
		if s > opt+1e-9*(1+opt) {
			rt.Fatalf("prices sum to %.12g at other counts, above their optimum %.12g\n%s\nat\n%s", s, opt, describe(p), describe(q))
		}
		if cov, err := coveringLP(q); err == nil && s > cov+1e-9*(1+cov) {
			rt.Fatalf("prices sum to %.12g at other counts, above their covering LP %.12g\nprices %v\n%s\nat\n%s", s, cov, r.Prices, describe(p), describe(q))
		}
	})
}

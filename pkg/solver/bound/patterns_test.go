package bound

import (
	"math"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// checkPatterns asserts what Result.Patterns promises: every pattern fits its type (capacity,
// group caps, types its classes may use), limited types stay within MaxCount, the patterns
// cover every class's pods, they are ordered, and they cost Primal, which lies between the
// configuration bound and, when the LP was proven, that bound itself.
func checkPatterns(t fataler, p *Problem, r Result) {
	t.Helper()
	nodes := make([]float64, len(p.Types))
	covered := make([]float64, len(p.Classes))
	cost := 0.0
	for i, pt := range r.Patterns {
		if pt.Type < 0 || pt.Type >= len(p.Types) || !(pt.Multiplicity > 0) || len(pt.Classes) == 0 || len(pt.Classes) != len(pt.Counts) {
			t.Fatalf("pattern %d malformed: %+v", i, pt)
		}
		if i > 0 {
			prev := r.Patterns[i-1]
			if prev.Multiplicity < pt.Multiplicity || prev.Multiplicity == pt.Multiplicity && prev.Type > pt.Type {
				t.Fatalf("patterns %d and %d out of order: %+v, %+v", i-1, i, prev, pt)
			}
		}
		var used scheduling.Resources
		perGroup := make([]int, len(p.Groups))
		for j, k := range pt.Classes {
			if j > 0 && pt.Classes[j-1] >= k {
				t.Fatalf("pattern %d: classes not ascending: %v", i, pt.Classes)
			}
			c := p.Classes[k]
			q := pt.Counts[j]
			if q <= 0 || !slices.Contains(c.Types, pt.Type) {
				t.Fatalf("pattern %d: %d pods of class %d on type %d (its types %v)", i, q, k, pt.Type, c.Types)
			}
			used = used.Add(c.Demand.Scale(int64(q)))
			if c.Group >= 0 {
				perGroup[c.Group] += int(q)
			}
			covered[k] += pt.Multiplicity * float64(q)
		}
		if !used.FitsIn(p.Types[pt.Type].Capacity) {
			t.Fatalf("pattern %d: %v does not fit type %d: %v", i, short(used), pt.Type, short(p.Types[pt.Type].Capacity))
		}
		for g, n := range perGroup {
			if n > p.Groups[g].PerNode {
				t.Fatalf("pattern %d: %d pods of group %d, cap %d", i, n, g, p.Groups[g].PerNode)
			}
		}
		nodes[pt.Type] += pt.Multiplicity
		cost += pt.Cost(p)
	}
	for ti, ty := range p.Types {
		if ty.MaxCount > 0 && nodes[ti] > float64(ty.MaxCount)+1e-9 {
			t.Fatalf("type %d: %v nodes, MaxCount %d", ti, nodes[ti], ty.MaxCount)
		}
	}
	for k, c := range p.Classes {
		if c.Count > 0 && !c.Demand.IsZero() && covered[k] < float64(c.Count)-1e-9 {
			t.Fatalf("class %d: %v of %d pods covered", k, covered[k], c.Count)
		}
	}
	if math.Abs(cost-r.Primal) > 1e-9*(1+cost) {
		t.Fatalf("patterns cost %.12g, Primal %.12g", cost, r.Primal)
	}
	if r.Primal < r.Configuration-1e-9*(1+r.Configuration) {
		t.Fatalf("Primal %.12g below the configuration bound %.12g", r.Primal, r.Configuration)
	}
	if r.Exact && r.Primal > r.Configuration+1e-6*(1+r.Configuration) {
		t.Fatalf("exact, but Primal %.12g above the configuration bound %.12g", r.Primal, r.Configuration)
	}
}

// TestPatternsRandom: on small random problems the patterns are feasible, cover the demand and
// cost the configuration LP (gonum's, of the reduced problem, when the LP was proven), and
// asking for them keeps every bound below the optimum.
func TestPatternsRandom(t *testing.T) {
	for range repetitions() {
		rapid.Check(t, func(rt *rapid.T) {
			p := smallProblem(rapidChooser{rt})
			r := Lower(p, WithPatterns())
			checkAgainstBruteForce(rt, p, r)
			if math.IsInf(r.Value, 1) {
				if len(r.Patterns) > 0 {
					rt.Fatalf("infeasible, yet %d patterns", len(r.Patterns))
				}
				return
			}
			checkPatterns(rt, p, r)
			if !r.Exact {
				return
			}
			pods := false
			for _, c := range p.Classes {
				pods = pods || c.Count > 0 && !c.Demand.IsZero()
			}
			if pods && len(r.Patterns) == 0 {
				rt.Fatalf("configuration LP proven, but no patterns\n%s", describe(p))
			}
			if conf, err := configurationLP(reduced(p)); err == nil && pods && math.Abs(r.Primal-conf) > 1e-6*(1+conf) {
				rt.Fatalf("Primal %.12g, configuration LP %.12g\n%s", r.Primal, conf, describe(p))
			}
		})
	}
}

// TestPatternsMerged: patterns of merged classes and merged limited types are mapped back to the
// problem's classes and types within their counts and limits.
func TestPatternsMerged(t *testing.T) {
	p := &Problem{
		Types: []Type{
			{Name: "a1", Price: 1, MaxCount: 1, Capacity: node(4, 16, 110, 0)},
			{Name: "a2", Price: 1, MaxCount: 1, Capacity: node(4, 16, 110, 0)},
			{Name: "b", Price: 3, Capacity: node(4, 16, 110, 0)},
		},
		Classes: []Class{
			{Count: 3, Demand: pod(1, 1, 0), Types: []int{0, 1, 2}, Group: -1},
			{Count: 2, Demand: pod(3, 1, 0), Types: []int{0, 1, 2}, Group: -1},
			{Count: 2, Demand: pod(1, 1, 0), Types: []int{0, 1, 2}, Group: -1},
			{Count: 1, Demand: pod(3, 1, 0), Types: []int{0, 1, 2}, Group: -1},
		},
	}
	r := Lower(p, WithPatterns())
	if len(r.Patterns) == 0 {
		t.Fatalf("no patterns: %+v", r)
	}
	checkPatterns(t, p, r)
	types := map[int]bool{}
	for _, pt := range r.Patterns {
		types[pt.Type] = true
	}
	if !types[0] || !types[1] {
		t.Errorf("the two limited types should both be used: %+v", r.Patterns)
	}
}

// TestPatternsProblems: on the solver's problems the patterns are feasible and cover the demand.
func TestPatternsProblems(t *testing.T) {
	for _, name := range problemNames {
		t.Run(name, func(t *testing.T) {
			p := loadProblem(t, name)
			start := time.Now()
			r := Lower(p, WithPatterns())
			took := time.Since(start)
			if len(r.Patterns) == 0 {
				t.Fatalf("no patterns: %+v", r)
			}
			checkPatterns(t, p, r)
			t.Logf("%d patterns, Primal %.6g = %.4f × bound %.6g (configuration %.6g), exact %v, %v",
				len(r.Patterns), r.Primal, r.Primal/r.Value, r.Value, r.Configuration, r.Exact, took)
		})
	}
}

// BenchmarkPatterns times Lower with patterns on the solver's problems.
func BenchmarkPatterns(b *testing.B) {
	for _, name := range problemNames {
		p := loadProblem(b, name)
		b.Run("name="+name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Lower(p, WithPatterns())
			}
		})
	}
}

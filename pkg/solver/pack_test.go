package solver

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver/bound"
)

// loadBoundProblem reads one of the bound package's problems (bound/testdata/problems).
func loadBoundProblem(t testing.TB, name string) *bound.Problem {
	t.Helper()
	f, err := os.Open(filepath.Join("bound", "testdata", "problems", name+".json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var p bound.Problem
	if err := json.NewDecoder(zr).Decode(&p); err != nil {
		t.Fatal(err)
	}
	return &p
}

// checkRounded asserts that the rounded nodes are whole and feasible (capacity, group caps,
// types the classes may use, MaxCount), that they and left account for every pod exactly, and
// that a pod is left over only when no type it fits can be bought any more. It returns the
// nodes' price.
func checkRounded(t interface {
	Helper()
	Fatalf(string, ...any)
}, p *bound.Problem, nodes []bound.Pattern, left []int) float64 {
	t.Helper()
	placed := make([]int, len(p.Classes))
	used := make([]int, len(p.Types))
	cost := 0.0
	for i, nd := range nodes {
		n := int(nd.Multiplicity)
		if float64(n) != nd.Multiplicity || n < 1 || len(nd.Classes) == 0 || len(nd.Classes) != len(nd.Counts) {
			t.Fatalf("node %d malformed: %+v", i, nd)
		}
		var sum scheduling.Resources
		perGroup := map[int]int{}
		for j, k := range nd.Classes {
			c := p.Classes[k]
			if nd.Counts[j] <= 0 || !slices.Contains(c.Types, nd.Type) || (j > 0 && nd.Classes[j-1] >= k) {
				t.Fatalf("node %d: %d pods of class %d on type %d", i, nd.Counts[j], k, nd.Type)
			}
			sum = sum.Add(c.Demand.Scale(int64(nd.Counts[j])))
			if c.Group >= 0 {
				perGroup[c.Group] += int(nd.Counts[j])
			}
			placed[k] += n * int(nd.Counts[j])
		}
		if !sum.FitsIn(p.Types[nd.Type].Capacity) {
			t.Fatalf("node %d does not fit type %d", i, nd.Type)
		}
		for g, q := range perGroup {
			if q > p.Groups[g].PerNode {
				t.Fatalf("node %d: %d pods of group %d", i, q, g)
			}
		}
		used[nd.Type] += n
		cost += float64(n) * p.Types[nd.Type].Price
	}
	for ti, ty := range p.Types {
		if ty.MaxCount > 0 && used[ti] > ty.MaxCount {
			t.Fatalf("type %d: %d nodes, MaxCount %d", ti, used[ti], ty.MaxCount)
		}
	}
	for k, c := range p.Classes {
		if placed[k]+left[k] != max(c.Count, 0) || left[k] < 0 {
			t.Fatalf("class %d: %d placed + %d left ≠ %d", k, placed[k], left[k], c.Count)
		}
		if left[k] == 0 {
			continue
		}
		for _, ti := range c.Types {
			ty := p.Types[ti]
			if c.Demand.FitsIn(ty.Capacity) && (ty.MaxCount <= 0 || used[ti] < ty.MaxCount) {
				t.Fatalf("class %d: %d pods left though type %d could take one", k, left[k], ti)
			}
		}
	}
	return cost
}

// TestRoundPatternsProblems rounds the configuration LP's patterns of the bound package's
// problems: every pod is placed, and the nodes cost at most 5% (diverse) or 3% (AWS mixes) more
// than the proven bound (ratios to the LP solution and to the bound logged).
func TestRoundPatternsProblems(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit float64 // the rounded price may not exceed this times the proven bound
	}{
		{"diverse-50", 1.05},
		{"diverse-1000", 1.05},
		{"diverse-20000", 1.05},
		{"aws-web", 1.03},
		{"aws-memory", 1.03},
		{"aws-gpu", 1.03},
		{"aws-spread", 1.03},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := loadBoundProblem(t, tc.name)
			r := bound.Lower(p, bound.WithPatterns())
			if len(r.Patterns) == 0 {
				t.Fatalf("no patterns: %+v", r)
			}
			nodes, left := roundPatterns(p, r.Patterns)
			cost := checkRounded(t, p, nodes, left)
			for k, n := range left {
				if n > 0 {
					t.Fatalf("class %d: %d pods left", k, n)
				}
			}
			t.Logf("rounded %.6g: %.4f × LP solution %.6g, %.4f × bound %.6g", cost, cost/r.Primal, r.Primal, cost/r.Value, r.Value)
			if cost > tc.limit*r.Value {
				t.Errorf("rounded %.6g is %.4f × the bound %.6g, above %.2f", cost, cost/r.Value, r.Value, tc.limit)
			}
		})
	}
}

// TestRoundPatternsRandom: on random problems, rounding any LP solution the bound package
// returns gives feasible whole nodes that account for every pod.
func TestRoundPatternsRandom(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		p := randomBoundProblem(rt)
		r := bound.Lower(p, bound.WithPatterns())
		nodes, left := roundPatterns(p, r.Patterns)
		checkRounded(rt, p, nodes, left)
	})
}

// randomBoundProblem draws a small packing problem with limited types and groups.
func randomBoundProblem(rt *rapid.T) *bound.Problem {
	const gib = 1 << 30
	p := &bound.Problem{}
	for range rapid.IntRange(1, 5).Draw(rt, "types") {
		var c scheduling.Resources
		c[scheduling.CPU] = int64(rapid.IntRange(1, 16).Draw(rt, "cpu")) * 1000
		c[scheduling.Memory] = int64(rapid.IntRange(1, 32).Draw(rt, "mem")) * gib
		c[scheduling.Pods] = int64(rapid.IntRange(1, 30).Draw(rt, "pods"))
		p.Types = append(p.Types, bound.Type{
			Price:    float64(rapid.IntRange(0, 400).Draw(rt, "price")) / 100,
			Capacity: c,
			MaxCount: max(rapid.IntRange(-3, 3).Draw(rt, "max"), 0),
		})
	}
	for range rapid.IntRange(0, 2).Draw(rt, "groups") {
		p.Groups = append(p.Groups, bound.Group{PerNode: rapid.IntRange(1, 3).Draw(rt, "perNode")})
	}
	for range rapid.IntRange(1, 5).Draw(rt, "classes") {
		var d scheduling.Resources
		d[scheduling.CPU] = int64(rapid.IntRange(0, 16).Draw(rt, "dcpu")) * 250
		d[scheduling.Memory] = int64(rapid.IntRange(0, 16).Draw(rt, "dmem")) * gib / 2
		d[scheduling.Pods] = 1
		var types []int
		for ti := range p.Types {
			if rapid.Bool().Draw(rt, "allowed") {
				types = append(types, ti)
			}
		}
		p.Classes = append(p.Classes, bound.Class{
			Count:  rapid.IntRange(0, 40).Draw(rt, "count"),
			Demand: d,
			Types:  types,
			Group:  rapid.IntRange(-1, len(p.Groups)-1).Draw(rt, "group"),
		})
	}
	return p
}

// BenchmarkRoundPatterns times roundPatterns alone on the bound package's problems.
func BenchmarkRoundPatterns(b *testing.B) {
	for _, name := range []string{"diverse-50", "diverse-1000", "diverse-20000", "aws-web", "aws-memory", "aws-gpu", "aws-spread"} {
		p := loadBoundProblem(b, name)
		r := bound.Lower(p, bound.WithPatterns())
		b.Run("name="+name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				roundPatterns(p, r.Patterns)
			}
		})
	}
}

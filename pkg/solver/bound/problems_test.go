package bound

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// problemNames are the bound problems the solver's benchmark snapshots send (written by the
// solver's TestDumpBoundProblems): 400 synthetic types whose price is linear in size with 50,
// 1000 and 20000 diverse pods, and four workload mixes on the AWS catalog.
var problemNames = []string{"diverse-50", "diverse-1000", "diverse-20000", "aws-web", "aws-memory", "aws-gpu", "aws-spread"}

// loadProblem reads testdata/problems/<name>.json.gz.
func loadProblem(tb testing.TB, name string) *Problem {
	tb.Helper()
	f, err := os.Open(filepath.Join("testdata", "problems", name+".json.gz"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	var p Problem
	if err := json.NewDecoder(zr).Decode(&p); err != nil {
		tb.Fatal(err)
	}
	return &p
}

// TestProblemFloors: on the solver's problems no bound is weaker than it was when these floors
// were recorded (by more than 1e-9 of it). Raise a floor when a change strengthens a bound.
func TestProblemFloors(t *testing.T) {
	for _, tc := range []struct {
		name                                    string
		value, covering, configuration, trivial float64
	}{
		{"diverse-50", 9.8849999900777892, 9.5873968395961295, 9.8849999900777892, 2.9999999970000002},
		{"diverse-1000", 205.18499979410745, 199.23480850234219, 205.18499979410745, 59.999999939999789},
		{"diverse-20000", 4119.6299958485943, 4000.6301535267394, 4119.6299958485943, 1199.9999987999095},
		{"aws-web", 14.49603396777583, 14.49603396777583, 14.496033967775819, 1.1716799988283197},
		{"aws-memory", 26.019943150882327, 26.019943150882327, 26.019943150882327, 9.696959990303041},
		{"aws-gpu", 387.77764315126967, 387.77764315126967, 387.77764315126967, 194.154095805846},
		{"aws-spread", 7.0824755054512663, 7.0261952705602599, 7.0824755054512663, 2.7879999972120006},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Lower(loadProblem(t, tc.name))
			for _, f := range []struct {
				what       string
				got, floor float64
			}{
				{"Value", r.Value, tc.value},
				{"Covering", r.Covering, tc.covering},
				{"Configuration", r.Configuration, tc.configuration},
				{"Trivial", r.Trivial, tc.trivial},
			} {
				if f.got < f.floor*(1-1e-9) {
					t.Errorf("%s = %.17g, below its floor %.17g", f.what, f.got, f.floor)
				}
			}
			t.Logf("Value %.17g (floor %+.3g), Covering %.17g, Configuration %.17g, %d rounds, %d columns, exact %v",
				r.Value, r.Value/tc.value-1, r.Covering, r.Configuration, r.Iterations, r.Columns, r.Exact)
		})
	}
}

// BenchmarkProblems times Lower on the solver's problems.
func BenchmarkProblems(b *testing.B) {
	for _, name := range problemNames {
		p := loadProblem(b, name)
		b.Run("name="+name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Lower(p)
			}
		})
	}
}

package bound

import (
	"testing"

	"pgregory.net/rapid"
)

// TestWorkBudgetKeepsTheBoundValid: with any work budget, or a Stop that fires at once, the
// bound stays below the brute-force optimum, and a budget too small to finish says so.
func TestWorkBudgetKeepsTheBoundValid(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		p := smallProblem(rapidChooser{rt})
		opts := []Option{Work(int64(rapid.IntRange(1, 5000).Draw(rt, "work")))}
		if rapid.Bool().Draw(rt, "patterns") {
			opts = append(opts, WithPatterns())
		}
		if rapid.Bool().Draw(rt, "stop") {
			opts = append(opts, Stop(func() bool { return true }))
		}
		r := Lower(p, opts...)
		checkAgainstBruteForce(rt, p, r)
		if len(r.Patterns) > 0 {
			checkPatterns(rt, p, r)
		}
	})
}

// TestStopStopsTheLPs: a Stop that fires at once leaves the LPs unrun and is reported.
func TestStopStopsTheLPs(t *testing.T) {
	p := loadProblem(t, "aws-web")
	calls := 0
	r := Lower(p, WithPatterns(), Stop(func() bool { calls++; return true }))
	if !r.Stopped || calls != 1 {
		t.Fatalf("Stopped = %v after %d calls of Stop, want true after 1", r.Stopped, calls)
	}
	if full := Lower(p); r.Value > full.Value {
		t.Fatalf("stopped bound %v above the full one %v", r.Value, full.Value)
	}
	if r := Lower(p); r.Stopped {
		t.Fatalf("Stopped without a budget")
	}
}

package solver

import (
	"os"
	"testing"
	"time"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

func TestSpeedDiagnostics(t *testing.T) {
	if os.Getenv("TENON_SPEED") == "" {
		t.Skip("diagnostics only")
	}
	its := syntheticTypes(400)
	for _, n := range []int{1000, 5000, 20000} {
		snap := &Snapshot{NodePools: []NodePool{nodePool("default", its, scheduling.Requirements{})}, Pods: diversePods(n, 42)}
		start := time.Now()
		plan, err := Solve(snap, Options{SkipBound: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("n=%d solve %v claims %d price %.1f unsched %d", n, time.Since(start), len(plan.Claims), plan.Price, len(plan.Unschedulable))
	}
}

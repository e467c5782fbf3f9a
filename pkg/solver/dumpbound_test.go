package solver

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// TestDumpBoundProblems writes the bound problems of the benchmark snapshots to
// $TENON_DUMP_BOUND (for work on the bound package).
func TestDumpBoundProblems(t *testing.T) {
	dir := os.Getenv("TENON_DUMP_BOUND")
	if dir == "" {
		t.Skip("set TENON_DUMP_BOUND to a directory")
	}
	its := syntheticTypes(400)
	cases := map[string]*Snapshot{}
	for _, n := range []int{50, 1000, 20000} {
		cases[fmt.Sprintf("diverse-%d", n)] = &Snapshot{NodePools: []NodePool{nodePool("default", its, scheduling.Requirements{})}, Pods: diversePods(n, 42)}
	}
	for _, mix := range []string{"web", "memory", "gpu", "spread"} {
		cases["aws-"+mix] = &Snapshot{NodePools: awsPools(t), Pods: awsMix(mix)}
	}
	for name, snap := range cases {
		s, err := newSolve(snap, Options{})
		if err != nil {
			t.Fatal(err)
		}
		s.run()
		b, err := json.Marshal(s.boundProblem())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

package plan

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenon-sh/tenon/pkg/manifest"
	"github.com/tenon-sh/tenon/pkg/solver"
)

var update = flag.Bool("update", false, "rewrite the golden plans of testdata/scenarios")

// TestScenarios solves each scenario under testdata/scenarios (manifests.yaml, and nodes.yaml
// for existing nodes) and compares what tenon plan prints (the kinds it ignored, then the
// table) with plan.golden; -update rewrites the goldens.
// Every plan must also pass the solver's independent Verify.
func TestScenarios(t *testing.T) {
	dirs, err := filepath.Glob("testdata/scenarios/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 10 {
		t.Fatalf("only %d scenarios found", len(dirs))
	}
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			work, err := manifest.Load(filepath.Join(dir, "manifests.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var existing *manifest.Set
			if nodes := filepath.Join(dir, "nodes.yaml"); fileExists(nodes) {
				if existing, err = manifest.Load(nodes); err != nil {
					t.Fatal(err)
				}
			}
			in, err := Build(work, existing, Options{InstanceTypes: SimulatedInstanceTypes(at), Now: at})
			if err != nil {
				t.Fatal(err)
			}
			snap := in.Snapshot
			p, err := solver.Solve(snap, solver.Options{})
			if err != nil {
				t.Fatal(err)
			}
			bill, committed := in.Launch(p) // as tenon plan does
			if err := solver.Verify(snap, p); err != nil {
				t.Fatalf("the plan violates a constraint: %v", err)
			}
			var got bytes.Buffer
			in.WriteIgnored(&got)
			res := NewResult(p, in.Rejected...)
			if committed {
				res.SetBill(bill, in.Commitments)
			}
			if err := res.WriteTable(&got); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join(dir, "plan.golden")
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./pkg/plan -update to create it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("plan differs from %s (go test ./pkg/plan -update rewrites it)\n--- want\n%s\n--- got\n%s", golden, want, got.Bytes())
			}
		})
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

package solver_test

import (
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenon-sh/tenon/pkg/manifest"
	"github.com/tenon-sh/tenon/pkg/plan"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// planManifest solves a testdata manifest as tenon plan does.
func planManifest(t *testing.T, name string, opts solver.Options) (*solver.Snapshot, *solver.Plan) {
	t.Helper()
	set, err := manifest.Load(filepath.Join("testdata", "pools", name))
	if err != nil {
		t.Fatal(err)
	}
	in, err := plan.Build(set, nil, plan.Options{Region: "us-east-1", InstanceTypes: plan.SimulatedInstanceTypes(time.Unix(0, 0))})
	if err != nil {
		t.Fatal(err)
	}
	p, err := solver.Solve(in.Snapshot, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := solver.Verify(in.Snapshot, p); err != nil {
		t.Fatalf("%s: invalid plan: %v", name, err)
	}
	return in.Snapshot, p
}

// TestIndependentPoolsSolveApart: 24 memory pods on an r5 pool and 96 pods on a c5/m5 pool,
// every pod pinned to its pool. Solved together, the memory pods used to take the guided
// plan's r5.4xlarge + r5.2xlarge ($1.512/h) because the guide won for the whole batch, though
// first-fit alone buys them for $1.386/h; each part now chooses its own plan. Without the
// repair (which on its own also mends this case) the joint plan was $4.232/h.
func TestIndependentPoolsSolveApart(t *testing.T) {
	for _, tc := range []struct {
		noRepair        bool
		memory, general float64 // $/h at most
	}{
		{noRepair: true, memory: 1.386, general: 2.72},
		{noRepair: false, memory: 1.386, general: 2.635},
	} {
		price := map[string]float64{}
		for _, f := range []struct {
			file string
			want float64
		}{
			{"m24.yaml", tc.memory},
			{"g120.yaml", tc.general},
			{"wl120.yaml", tc.memory + tc.general},
		} {
			_, p := planManifest(t, f.file, solver.Options{NoRepair: tc.noRepair})
			if len(p.Unschedulable) > 0 {
				t.Fatalf("%s: %d pods unschedulable", f.file, len(p.Unschedulable))
			}
			if p.Price > f.want+1e-6 {
				t.Errorf("%s (no repair %v): $%.4f/h, want at most $%.4f/h", f.file, tc.noRepair, p.Price, f.want)
			}
			if p.Price < p.LowerBound-1e-9 {
				t.Errorf("%s: $%.4f/h below its bound $%.4f/h", f.file, p.Price, p.LowerBound)
			}
			price[f.file] = p.Price
		}
		if sum := price["m24.yaml"] + price["g120.yaml"]; math.Abs(price["wl120.yaml"]-sum) > 1e-6 {
			t.Errorf("no repair %v: joint plan $%.4f/h, its parts apart $%.4f/h", tc.noRepair, price["wl120.yaml"], sum)
		}
	}
}

// TestRepairSplitsClaim: on g120 the guided plan is 3×c5.4xlarge + 2×c5.2xlarge ($2.72/h), one
// c5.2xlarge holding 5 vCPU of pods; the repair gives those pods a c5.xlarge and a c5.large
// ($2.635/h: 62 vCPU of c5 for 60 vCPU of pods).
func TestRepairSplitsClaim(t *testing.T) {
	_, before := planManifest(t, "g120.yaml", solver.Options{NoRepair: true})
	_, after := planManifest(t, "g120.yaml", solver.Options{})
	if after.Price > 2.635+1e-6 || after.Price > before.Price+1e-9 {
		t.Fatalf("repaired plan $%.4f/h (unrepaired $%.4f/h), want at most $2.635/h", after.Price, before.Price)
	}
	if len(after.Unschedulable) > 0 {
		t.Fatalf("%d pods unschedulable", len(after.Unschedulable))
	}
}

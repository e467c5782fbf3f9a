package sim

import (
	"testing"
)

// Prices of us-east-1 on-demand g4dn instances (the embedded catalog).
const (
	g4dnXlarge   = 0.526 // 4 vCPU, 16 GiB, 1 T4
	g4dn12xlarge = 3.912 // 48 vCPU, 192 GiB, 4 T4
)

// TestKnownOptimalCost replays small traces whose cheapest fleet is known, with no delays and
// no interruptions, so that costs are exact. tenon must reach the optimum; the other policies
// reach it or land exactly on the cost their documented behaviour explains.
func TestKnownOptimalCost(t *testing.T) {
	for _, tc := range []struct {
		name    string
		types   []string
		rows    string
		optimal float64
		// explained gives, per policy that does not reach the optimum, the cost its behaviour
		// leads to and why, within tolerance dollars.
		explained map[string]float64
		tolerance float64
	}{{
		name:    "one pod on one type",
		types:   []string{"g4dn.xlarge"},
		rows:    "0,36000,1,,,1,\n",
		optimal: 10 * g4dnXlarge,
	}, {
		name:  "eight pods: eight small nodes beat two large ones",
		types: []string{"g4dn.xlarge", "g4dn.12xlarge"},
		rows:  "0,36000,8,,,1,\n",
		// 8 × g4dn.xlarge for 10 h.
		optimal: 8 * 10 * g4dnXlarge,
		explained: map[string]float64{
			// Karpenter grows a claim while any type still holds its pods: four pods fill a
			// g4dn.12xlarge, the fifth opens a second one. Neither can be replaced by one
			// cheaper node (only a g4dn.12xlarge holds four pods) nor deleted.
			PolicyKarpenter: 2 * 10 * g4dn12xlarge,
		},
	}, {
		name:  "a pod outlives its batch",
		types: []string{"g4dn.xlarge", "g4dn.12xlarge"},
		rows:  "0,3600,3,,,1,\n0,36000,1,,,1,\n",
		// Four g4dn.xlarge for the first hour, one for the nine after.
		optimal: 4*g4dnXlarge + 9*g4dnXlarge,
		explained: map[string]float64{
			// Karpenter puts the four pods on one g4dn.12xlarge; when three finish, single-node
			// consolidation replaces it with a g4dn.xlarge at the next pass (within 10 s).
			PolicyKarpenter: g4dn12xlarge + 9*g4dnXlarge,
			// Cluster Autoscaler removes the three nodes emptied at 1 h only once they have
			// been unneeded for 10 minutes.
			PolicyNodeGroup: 4*g4dnXlarge + 9*g4dnXlarge + 3*600/3600.0*g4dnXlarge,
		},
		tolerance: 20.0 / 3600 * g4dn12xlarge,
	}, {
		name:    "jobs one after another reuse nothing",
		types:   []string{"g4dn.xlarge"},
		rows:    "0,3600,1,,,1,\n7200,3600,1,,,1,\n",
		optimal: 2 * g4dnXlarge,
		explained: map[string]float64{
			// Cluster Autoscaler keeps an empty node for 10 minutes before removing it
			// (scale-down-unneeded-time), and scans every 10 s: the second job waits for the
			// scan after its arrival, the first node stays 10 minutes (and a pass) too long.
			PolicyNodeGroup: 2*g4dnXlarge + (600+10)/3600.0*g4dnXlarge,
		},
		tolerance: 20.0 / 3600 * g4dnXlarge,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			env := traceEnv(t, parseSet(t, poolYAML(tc.types...)), tc.rows)
			rep := simulate(t, env, exact())
			if !near(rep.Bound.CostUSD, tc.optimal) {
				t.Errorf("bound $%.4f, want the optimum $%.4f (a fractional fleet cannot beat whole nodes that fit exactly)", rep.Bound.CostUSD, tc.optimal)
			}
			for _, p := range rep.Policies {
				if p.PodsNeverStarted > 0 || p.PodsUnfinished > 0 {
					t.Errorf("%s: %d pods never ran, %d unfinished", p.Policy, p.PodsNeverStarted, p.PodsUnfinished)
				}
				want, ok := tc.explained[p.Policy]
				if !ok {
					want = tc.optimal
				}
				tol := max(tc.tolerance, 1e-6*want)
				if p.CostUSD < want-tol || p.CostUSD > want+tol {
					t.Errorf("%s: $%.4f, want $%.4f ± %.4f (optimum $%.4f)", p.Policy, p.CostUSD, want, tol, tc.optimal)
				}
				if p.CostUSD < rep.Bound.CostUSD-1e-9 {
					t.Errorf("%s: $%.4f is below the bound $%.4f", p.Policy, p.CostUSD, rep.Bound.CostUSD)
				}
			}
		})
	}
}

package sim

import (
	"math"
	"strings"
	"testing"

	"github.com/tenon-sh/tenon/pkg/commitment"
)

// A pool of m5.xlarge that may buy spot or on demand; a Compute Savings Plan with room for one
// m5.xlarge on demand ($0.192/h at 30% off is $0.1344/h of the $0.14 committed). Three 3-CPU
// jobs of one hour, each needing its own node.
func committedEnv(t *testing.T) *Env {
	t.Helper()
	yaml := strings.Replace(poolYAML("m5.xlarge"), "values: [on-demand]", "values: [spot, on-demand]", 1)
	return traceEnv(t, parseSet(t, yaml), "0,3600,3,3000,4096,0,\n")
}

var computeSP = []commitment.Commitment{{Name: "sp", Kind: commitment.ComputeSavingsPlan, Hourly: 0.14, Default: 0.3}}

// tenon, deciding with the plan, takes its room with one on-demand node and buys the other two
// as spot; deciding at list prices it buys three spot nodes and leaves the plan unused. Both
// are billed with the plan, and the one that knows it pays less.
func TestCommitmentsInTheSimulation(t *testing.T) {
	opts := exact()
	opts.Commitments = computeSP
	env := committedEnv(t)
	rep := simulate(t, env, opts, PolicyTenon, PolicyTenonListPrices, PolicyKarpenter)
	byCT := func(p *PolicyResult) map[string]int {
		out := map[string]int{}
		for _, u := range p.TypeMix {
			out[u.CapacityType] += u.Nodes
		}
		return out
	}
	aware, list := policy(t, rep, PolicyTenon), policy(t, rep, PolicyTenonListPrices)
	if got := byCT(aware); got["on-demand"] != 1 || got["spot"] != 2 {
		t.Errorf("tenon bought %v; want one on-demand node in the plan's room and two spot", got)
	}
	if got := byCT(list); got["on-demand"] != 0 {
		t.Errorf("tenon at list prices bought %v; want spot alone", got)
	}
	for _, p := range rep.Policies {
		if p.Bill == nil {
			t.Fatalf("%s: no bill", p.Policy)
		}
		if b := p.Bill; math.Abs(b.TotalUSD-b.CommitmentUSD-b.OverageUSD) > 1e-9 || b.CommitmentUSD < 0.14*p.EndHours*0.99 {
			t.Errorf("%s: bill %+v over %.2f h; the plan's $0.14/h is committed whether used or not", p.Policy, *b, p.EndHours)
		}
	}
	if aware.Bill.TotalUSD >= list.Bill.TotalUSD {
		t.Errorf("tenon's bill $%.4f is not below tenon at list prices' $%.4f", aware.Bill.TotalUSD, list.Bill.TotalUSD)
	}
	if aware.Bill.Utilization < 0.5 || list.Bill.Utilization != 0 {
		t.Errorf("the plan used %.2f by tenon, %.2f at list prices; want most of it and none", aware.Bill.Utilization, list.Bill.Utilization)
	}
	if lb := rep.Bound.BillUSD; lb <= 0 {
		t.Errorf("no floor under the bills: %v", lb)
	} else {
		for _, p := range rep.Policies {
			if p.Bill.TotalUSD < lb-1e-9 {
				t.Errorf("%s: bill $%.4f below the floor $%.4f", p.Policy, p.Bill.TotalUSD, lb)
			}
		}
	}
	if len(aware.Series.CommitmentUtilization) == 0 {
		t.Error("no commitment utilisation series")
	}
}

// Without commitments a run has no bill, and the figures are those of list prices.
func TestNoCommitmentsNoBill(t *testing.T) {
	rep := simulate(t, committedEnv(t), exact(), PolicyTenon)
	if p := policy(t, rep, PolicyTenon); p.Bill != nil || len(p.Series.CommitmentUtilization) != 0 {
		t.Errorf("bill %+v without commitments", p.Bill)
	}
}

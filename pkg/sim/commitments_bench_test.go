package sim

import (
	"runtime/debug"
	"testing"

	"github.com/tenon-sh/tenon/pkg/commitment"
)

// BenchmarkSimulateCommitments replays the first 20,000 Philly jobs under tenon, deciding with
// a $20/h Compute Savings Plan (28% off) and at list prices, both billed with it.
func BenchmarkSimulateCommitments(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	env := philly(b, 20000)
	opts := phillyOptions()
	opts.Commitments = []commitment.Commitment{{Name: "sp", Kind: commitment.ComputeSavingsPlan, Hourly: 20, Default: 0.28}}
	for _, name := range []string{PolicyTenon, PolicyTenonListPrices} {
		b.Run(name, func(b *testing.B) {
			var rep *Report
			for range b.N {
				rep = simulate(b, env, opts, name)
			}
			p := rep.Policies[0]
			b.ReportMetric(p.Bill.TotalUSD, "bill-$")
			b.ReportMetric(p.Bill.Utilization, "used")
		})
	}
}

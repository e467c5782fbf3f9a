package sim

import (
	"fmt"
	"runtime/debug"
	"testing"
)

// BenchmarkSimulatePhilly replays prefixes of the Philly trace, and the whole of it, under the
// three policies with the bound, as `tenon simulate` does (including its garbage-collector
// setting). The whole trace is the figure docs/performance.md reports:
//
//	go test ./pkg/sim -run '^$' -bench 'SimulatePhilly/jobs=all' -benchtime 1x
func BenchmarkSimulatePhilly(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	for _, gangs := range []bool{false, true} {
		for _, n := range []int{2000, 20000, 0} {
			name := fmt.Sprint("jobs=", n)
			if n == 0 {
				name = "jobs=all"
			}
			if gangs {
				name += "/gangs"
			}
			b.Run(name, func(b *testing.B) {
				env := philly(b, n)
				opts := phillyOptions()
				opts.Gangs = gangs
				b.ResetTimer()
				var rep *Report
				for range b.N {
					rep = simulate(b, env, opts)
				}
				b.StopTimer()
				for _, p := range rep.Policies {
					b.ReportMetric(p.CostUSD/rep.Bound.CostUSD, p.Policy+"/bound")
					b.ReportMetric(p.StrandedGPUHours, p.Policy+"/stranded-GPU-h")
				}
			})
		}
	}
}

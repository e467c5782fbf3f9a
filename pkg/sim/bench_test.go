package sim

import (
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"strconv"
	"strings"
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

// BenchmarkSimulateSharedGPUs replays a synthetic day of a GPU-sharing cluster (seeded): 2,000
// jobs, arriving over 24 hours, lasting 10 minutes to 4 hours; two in three ask for a fraction
// of a GPU (0.05 to 0.5, inference and notebooks), the rest 1, 2, 4 or 8 whole GPUs, a third of
// all naming a model (T4, A10G, V100); GPUs shared 4 ways with the default NodePools and
// SharedGPUNodePools.
func BenchmarkSimulateSharedGPUs(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 7))
	var rows strings.Builder
	models := []string{"T4", "A10G", "V100"}
	for i := range 2000 {
		gpu := fmt.Sprint([]int{1, 2, 4, 8}[rng.IntN(4)])
		if rng.IntN(3) < 2 {
			gpu = strconv.FormatFloat(0.05+0.45*rng.Float64(), 'f', 2, 64)
		}
		model := ""
		if rng.IntN(3) == 0 {
			model = models[rng.IntN(len(models))]
		}
		fmt.Fprintf(&rows, "%d,%d,1,,,%s,%s\n", i*86400/2000, 600+rng.IntN(14400-600), gpu, model)
	}
	env := sharedEnv(b, 4, rows.String())
	b.ResetTimer()
	var rep *Report
	for range b.N {
		rep = simulate(b, env, phillyOptions())
	}
	b.StopTimer()
	for _, p := range rep.Policies {
		b.ReportMetric(p.CostUSD/rep.Bound.CostUSD, p.Policy+"/bound")
		b.ReportMetric(p.Utilisation.GPUShares, p.Policy+"/share-util")
		b.ReportMetric(p.Utilisation.GPU, p.Policy+"/gpu-util")
	}
}

package sim

import (
	"fmt"
	"math"
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

// BenchmarkSimulateMixedShared replays a synthetic week of a mixed cluster (seeded), the size
// issue 16 asks to replay in a minute: jobs arriving about every 25 s, lasting a minute to three
// days (log-normal around half an hour); 60% CPU-only of log-uniform sizes (250m to 16 CPU, 1 to
// 8 GiB per CPU), 25% a fraction of a GPU (⅛, ¼, ½, ¾; a third naming a T4, an A10 or a V100),
// 15% 1 to 8 whole GPUs in jobs of 1 to 4 replicas (untyped, V100, A100, H100 or T4|A10). GPUs
// are shared 4 ways, with the default NodePools and SharedGPUNodePools. jobs=all is 24,000 pods.
func BenchmarkSimulateMixedShared(b *testing.B) {
	for _, jobs := range []int{3000, 0} {
		name := fmt.Sprint("jobs=", jobs)
		if jobs == 0 {
			name = "jobs=all"
		}
		b.Run(name, func(b *testing.B) {
			env := sharedEnv(b, 4, mixedSharedTrace(24000, jobs))
			b.ResetTimer()
			var rep *Report
			for range b.N {
				rep = simulate(b, env, phillyOptions())
			}
			b.StopTimer()
			b.ReportMetric(float64(env.Workload.Pods()), "pods")
			for _, p := range rep.Policies {
				b.ReportMetric(p.CostUSD/rep.Bound.CostUSD, p.Policy+"/bound")
				b.ReportMetric(p.Utilisation.GPUShares, p.Policy+"/share-util")
				b.ReportMetric(p.WallSeconds, p.Policy+"/s") // the policies and the bound run side by side
			}
		})
	}
}

// mixedSharedTrace writes the rows of BenchmarkSimulateMixedShared's trace: jobs until pods
// pods, the first maxJobs of them (0: all).
func mixedSharedTrace(pods, maxJobs int) string {
	rng := rand.New(rand.NewPCG(2026, 16))
	var rows strings.Builder
	at := 0.0
	for n, jobs := 0, 0; n < pods && (maxJobs == 0 || jobs < maxJobs); jobs++ {
		at += rng.ExpFloat64() * 25
		duration := int(min(max(math.Exp(7.5+1.3*rng.NormFloat64()), 60), 3*86400))
		replicas := 1
		switch r := rng.Float64(); {
		case r < 0.6:
			cpu := int(math.Exp(math.Log(250) + rng.Float64()*(math.Log(16000)-math.Log(250))))
			mem := cpu*[]int{1024, 2048, 4096, 8192}[rng.IntN(4)]/1000 + 256
			fmt.Fprintf(&rows, "%d,%d,1,%d,%d,0,\n", int(at), duration, cpu, mem)
		case r < 0.85:
			model := ""
			if rng.IntN(3) == 0 {
				model = []string{"T4", "A10", "V100"}[rng.IntN(3)]
			}
			fmt.Fprintf(&rows, "%d,%d,1,,,%s,%s\n", int(at), duration, []string{"0.125", "0.25", "0.5", "0.75"}[rng.IntN(4)], model)
		default:
			replicas = []int{1, 1, 1, 2, 4}[rng.IntN(5)]
			model := []string{"", "V100", "A100", "H100", "T4|A10"}[rng.IntN(5)]
			fmt.Fprintf(&rows, "%d,%d,%d,,,%d,%s\n", int(at), duration, replicas, []int{1, 1, 1, 2, 4, 8}[rng.IntN(6)], model)
		}
		n += replicas
	}
	return rows.String()
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

package bound

import (
	"fmt"
	"testing"
)

// BenchmarkLower times Lower on realistic problems and reports how close the bound comes to a
// first-fit packing's cost (bound/ffd; the optimum lies between them).
func BenchmarkLower(b *testing.B) {
	for _, k := range []int{5, 50} {
		for _, t := range []int{50, 600} {
			b.Run(fmt.Sprintf("classes=%d/types=%d", k, t), func(b *testing.B) {
				p := realistic(uint64(k*1000+t), k, t)
				r := Lower(p)
				ffd := firstFit(p)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					Lower(p)
				}
				b.ReportMetric(r.Value/ffd, "bound/ffd")
				b.ReportMetric(float64(r.Iterations), "rounds")
				exact := 0.0
				if r.Exact {
					exact = 1
				}
				b.ReportMetric(exact, "exact")
			})
		}
	}
}

// BenchmarkCoveringOnly times the covering LP alone on the largest problem.
func BenchmarkCoveringOnly(b *testing.B) {
	p := realistic(uint64(50*1000+600), 50, 600)
	b.ReportAllocs()
	for b.Loop() {
		Lower(p, CoveringOnly())
	}
}

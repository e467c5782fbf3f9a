package instancetype

import (
	"testing"
)

// BenchmarkListInstanceTypes measures List for one NodeClass in all six us-east-1 zones
// against the endpoint over loopback: cold (every call a new provider: the two paginated
// Describe calls, then the build of 1,366 types) and warm (the cached view; only unavailable
// offerings are applied). It reports the API calls per List.
func BenchmarkListInstanceTypes(b *testing.B) {
	f := newFixture(b, nil, Options{})
	nc := f.nodeClass("bench")
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		before := f.Calls()
		for b.Loop() {
			p, err := New(f.EC2, f.prices, Options{Region: "us-east-1", Clock: f.clock})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := p.List(ctx, nc); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(f.Calls()-before)/float64(b.N), "calls/op")
	})
	b.Run("warm", func(b *testing.B) {
		b.ReportAllocs()
		if _, err := f.p.List(ctx, nc); err != nil {
			b.Fatal(err)
		}
		before := f.Calls()
		for b.Loop() {
			if _, err := f.p.List(ctx, nc); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(f.Calls()-before)/float64(b.N), "calls/op")
	})
}

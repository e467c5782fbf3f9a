package cloud

import (
	"testing"
	"time"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// benchCloud is the us-east-1 catalog with a reservation and a pool of one m5.large per zone.
func benchCloud(b *testing.B) *Cloud {
	cat, err := catalog.Load("us-east-1", catalog.WithReservations(catalog.Reservation{ID: "cr-1", InstanceType: "c5.large", Zone: "us-east-1a", Count: 5}))
	if err != nil {
		b.Fatal(err)
	}
	var pools []Pool
	for _, z := range cat.Zones {
		pools = append(pools, Pool{Match: reqs(types("m5.large"), zones(z.Name)), Capacity: 1})
	}
	c := New(Options{IDSeed: 1})
	if err := c.SetClass("default", ClassConfig{Catalog: cat, Pools: pools}); err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkInstanceTypes: "steady" asks again with nothing changed; "changed" launches into a
// pool (making its offering unavailable) and terminates the instance between calls, so every
// call refreshes the view.
func BenchmarkInstanceTypes(b *testing.B) {
	b.Run("steady", func(b *testing.B) {
		c := benchCloud(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.InstanceTypes("default", t0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("changed", func(b *testing.B) {
		c := benchCloud(b)
		only := reqs(types("m5.large"), zones("us-east-1a"), scheduling.In(apisv1.CapacityTypeLabelKey, apisv1.CapacityTypeOnDemand))
		now := t0
		b.ReportAllocs()
		for b.Loop() {
			now = now.Add(time.Second)
			inst, err := c.Launch(LaunchRequest{Class: "default", Requirements: only}, now)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.InstanceTypes("default", now); err != nil {
				b.Fatal(err)
			}
			if err := c.Terminate(inst.ID, now); err != nil {
				b.Fatal(err)
			}
			_ = c.Forget(inst.ID)
		}
	})
}

// BenchmarkLaunch launches into the full catalog with no instance-type requirement (the slow
// path: every type is matched) and with a claim-like list of 50 types.
func BenchmarkLaunch(b *testing.B) {
	for _, bc := range []struct {
		name string
		reqs scheduling.Requirements
	}{
		{"any-type", reqs(scheduling.In(apisv1.LabelArch, "arm64"))},
		{"50-types", reqs(types(catalogNames(b, 50)...))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := benchCloud(b)
			now := t0
			b.ReportAllocs()
			for b.Loop() {
				now = now.Add(time.Second)
				inst, err := c.Launch(LaunchRequest{Class: "default", Requirements: bc.reqs}, now)
				if err != nil {
					b.Fatal(err)
				}
				if err := c.Terminate(inst.ID, now); err != nil {
					b.Fatal(err)
				}
				_ = c.Forget(inst.ID)
			}
		})
	}
}

func catalogNames(b *testing.B, n int) []string {
	cat, err := catalog.Load("us-east-1")
	if err != nil {
		b.Fatal(err)
	}
	var out []string
	for _, it := range catalog.Truncate(catalog.OrderByPrice(cat.Types, scheduling.Requirements{}), n) {
		out = append(out, it.Name)
	}
	return out
}

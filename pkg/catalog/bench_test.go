package catalog

import (
	"testing"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// BenchmarkLoad measures the two halves of loading: parsing the embedded files (done once per
// process) and building a region's catalog from them (done per Load), and the two together.
func BenchmarkLoad(b *testing.B) {
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := parseTable(instanceTypesCSV, spotPricesCSV, spotAdvisorCSV); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, region := range Regions() {
		b.Run("build/"+region, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Load(region); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("parse+build/us-east-1", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			tb, err := parseTable(instanceTypesCSV, spotPricesCSV, spotAdvisorCSV)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tb.build("us-east-1", newSettings(nil)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkOrderByPrice orders the whole us-east-1 catalog under requirements of growing
// selectivity.
func BenchmarkOrderByPrice(b *testing.B) {
	c := mustLoad(b, "")
	cases := []struct {
		name string
		reqs scheduling.Requirements
	}{
		{"unconstrained", scheduling.Requirements{}},
		{"amd64-spot-zone", scheduling.NewRequirements(
			scheduling.In(apisv1.LabelArch, "amd64"),
			scheduling.In(apisv1.CapacityTypeLabelKey, apisv1.CapacityTypeSpot),
			scheduling.In(apisv1.LabelZone, "us-east-1a"),
		)},
		{"nodepool-typical", scheduling.NewRequirements(
			scheduling.In(apisv1.LabelInstanceCategory, "c", "m", "r"),
			scheduling.MustRequirement(apisv1.LabelInstanceGeneration, "Gt", "4"),
			scheduling.In(apisv1.CapacityTypeLabelKey, apisv1.CapacityTypeSpot, apisv1.CapacityTypeOnDemand),
			scheduling.In(apisv1.LabelOS, "linux"),
		)},
		{"gpu", scheduling.NewRequirements(scheduling.In(apisv1.LabelInstanceGPUName, "a10g", "l4"))},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Truncate(OrderByPrice(c.Types, tc.reqs), MaxInstanceTypes)
			}
		})
	}
}

package catalog_test

import (
	"fmt"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// The three cheapest on-demand instance types with an NVIDIA L4 or A10G GPU in us-east-1a,
// given a negotiated 10% discount on g6 on-demand.
func Example() {
	discount := catalog.AdjustPrice(scheduling.NewRequirements(
		scheduling.In(apisv1.LabelInstanceFamily, "g6"),
		scheduling.In(apisv1.CapacityTypeLabelKey, apisv1.CapacityTypeOnDemand),
	), -10)
	c, err := catalog.Load("us-east-1", catalog.WithPriceOverrides(discount))
	if err != nil {
		panic(err)
	}
	reqs := scheduling.NewRequirements(
		scheduling.In(apisv1.LabelInstanceGPUName, "l4", "a10g"),
		scheduling.In(apisv1.LabelZone, "us-east-1a"),
		scheduling.In(apisv1.CapacityTypeLabelKey, apisv1.CapacityTypeOnDemand),
	)
	for _, r := range catalog.Rank(c.Types, reqs)[:3] {
		o := r.Type.Offerings[r.Offering]
		fmt.Printf("%s %s %s $%.4f/h, %d GPU\n", r.Type.Name, o.Zone, o.CapacityType, r.Price, r.Type.Shape.GPUCount)
	}
	// Output:
	// g6.xlarge us-east-1a on-demand $0.7243/h, 1 GPU
	// g6.2xlarge us-east-1a on-demand $0.8798/h, 1 GPU
	// g5.xlarge us-east-1a on-demand $1.0060/h, 1 GPU
}

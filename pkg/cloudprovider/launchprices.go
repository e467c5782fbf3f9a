package cloudprovider

import (
	"context"

	"github.com/tenon-sh/tenon/pkg/catalog"
)

// LaunchPrices gives the price a launch ranks an offering of an instance type by, when it is
// not the offering's own: the price NodeOverlays set. A provider given one launches the
// claim's offerings in that order (on EC2, CreateFleet's prioritized allocation strategies),
// as Karpenter's AWS provider does with NodeOverlay prices, instead of the cheapest by the
// cloud's prices.
type LaunchPrices func(instanceType string, o *catalog.Offering) float64

type launchPricesKey struct{}

// WithLaunchPrices returns ctx carrying f for the providers' Create.
func WithLaunchPrices(ctx context.Context, f LaunchPrices) context.Context {
	return context.WithValue(ctx, launchPricesKey{}, f)
}

// LaunchPricesFrom returns the LaunchPrices ctx carries, or nil.
func LaunchPricesFrom(ctx context.Context) LaunchPrices {
	f, _ := ctx.Value(launchPricesKey{}).(LaunchPrices)
	return f
}

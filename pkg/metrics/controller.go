package metrics

import "context"

type controllerKey struct{}

// WithController returns ctx naming the controller that works under it; the cloud provider's
// metrics (the controller label of karpenter_cloudprovider_*) read it back with Controller.
func WithController(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, controllerKey{}, name)
}

// Controller is the controller ctx names ("" when none).
func Controller(ctx context.Context) string {
	name, _ := ctx.Value(controllerKey{}).(string)
	return name
}

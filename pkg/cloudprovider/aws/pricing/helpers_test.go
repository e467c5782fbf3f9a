package pricing

import "context"

var ctx = context.Background()

func contextWithCancel() (context.Context, context.CancelFunc) { return context.WithCancel(ctx) }

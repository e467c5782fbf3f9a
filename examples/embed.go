// Package examples holds the manifests `tenon up` applies (and that `tenon plan -f examples/`
// reads): NodePools with a simulated NodeClass, and a demo workload; and under simulate/ the
// GPU NodePools `tenon simulate --trace` replays a trace against by default.
package examples

import "embed"

// Files are the example manifests.
//
//go:embed *.yaml simulate/*.yaml
var Files embed.FS

// Package examples holds the manifests `tenon up` applies (and that `tenon plan -f
// examples/nodepools.yaml -f examples/workload.yaml` reads): NodePools with a simulated NodeClass, and a demo workload; under aws/ the same
// NodePools on an EC2NodeClass (`tenon up --cloud-provider aws`); and under simulate/ the GPU
// NodePools `tenon simulate --trace` replays a trace against by default.
package examples

import "embed"

// Files are the example manifests.
//
//go:embed *.yaml simulate/*.yaml aws/*.yaml
var Files embed.FS

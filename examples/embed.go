// Package examples holds the manifests `tenon up` applies (and that `tenon plan -f examples/`
// reads): NodePools with a simulated NodeClass, and a demo workload.
package examples

import "embed"

// Files are the example manifests.
//
//go:embed *.yaml
var Files embed.FS

// Command tenon is the tenon node autoscaler: `tenon controller` runs it in a cluster, `tenon
// up` runs it on a local control plane with a simulated cloud, `tenon plan` runs its solver
// offline over manifests, and `tenon explain node/NAME` says why a node is or is not being
// disrupted.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRoot().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "tenon:", err)
		os.Exit(1)
	}
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "tenon",
		Short:         "tenon buys the nodes your pending pods need and removes the ones they don't",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newPlan(), newController(), newUp(), newExplain(), newSimulate(), newVersion())
	return root
}

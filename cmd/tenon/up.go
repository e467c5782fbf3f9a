package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/tenon-sh/tenon/internal/up"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/registry"
)

func newUp() *cobra.Command {
	var opts up.Options
	var logFile string
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Run tenon on this machine: a local control plane, the simulated cloud and a demo workload",
		Long: `up starts a real etcd, kube-apiserver, kube-scheduler, kube-controller-manager and kwok on
loopback (building them from the Go module proxy on the first run), installs tenon's CRDs, runs
tenon's controllers with the simulated cloud (or, with --cloud-provider aws, tenon's AWS provider
against the project's EC2-compatible endpoint on loopback), applies the example NodePools and a
demo workload (examples/), and shows pods becoming nodes as it happens. It keeps running, with the kubeconfig
printed so that kubectl get nodepools,nodeclaims,nodes works, until Ctrl-C or --exit-after.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if logFile == "" {
				logFile = filepath.Join(os.TempDir(), fmt.Sprintf("tenon-up-%d.log", os.Getpid()))
			}
			lf, err := os.Create(logFile)
			if err != nil {
				return err
			}
			defer lf.Close()
			log := zap.New(zap.WriteTo(lf))
			ctrl.SetLogger(log)
			opts.Log = log
			opts.Out = cmd.OutOrStdout()
			opts.Interactive = term.IsTerminal(int(os.Stdout.Fd()))
			fmt.Fprintf(opts.Out, "tenon up: controller logs go to %s\n", logFile)
			sum, err := up.Run(upSignals(), opts)
			if err != nil {
				return err
			}
			if sum != nil && sum.Pending > 0 && opts.ExitAfter > 0 {
				fmt.Fprintf(opts.Out, "%d pods were still pending when --exit-after ran out.\n", sum.Pending)
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&opts.Files, "filename", "f", nil, "workload manifests to apply instead of the demo (repeatable; files or directories)")
	cmd.Flags().BoolVar(&opts.NoNodePools, "no-nodepools", false, "do not apply the example NodePools and SimNodeClass")
	cmd.Flags().DurationVar(&opts.ExitAfter, "exit-after", 0, "stop everything after this long (for scripts); 0 runs until Ctrl-C")
	cmd.Flags().StringVar(&logFile, "log-file", "", "where the controller's logs go (default: a file in the temp directory)")
	cmd.Flags().StringVar(&opts.Operator.CloudProvider, "cloud-provider", registry.Default, "simulated (the simulated cloud) or aws (tenon's AWS provider against the project's EC2-compatible endpoint on loopback, with the NodePools of examples/aws)")
	cmd.Flags().DurationVar(&opts.Operator.Provisioning.BatchIdle, "batch-idle-duration", 0, "provisioning batch idle window (default 1s)")
	return cmd
}

// upSignals returns a context that ends at the first SIGINT or SIGTERM; later ones are
// swallowed, so that a second Ctrl-C does not exit before the control plane's directory is
// removed (that takes well under a second). SIGPIPE is ignored: when the reader of a piped
// stdout goes away (tee, killed by the same Ctrl-C), writes fail with EPIPE instead of killing
// the process in the middle of its shutdown.
func upSignals() context.Context {
	signal.Ignore(syscall.SIGPIPE)
	ctx, _ := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM) //nolint:govet // for the life of the process
	return ctx
}

package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/tenon-sh/tenon/pkg/operator"
)

// controllerFlags are the knobs of `tenon controller`; each also reads TENON_<NAME> from the
// environment (dashes become underscores), flags winning over the environment.
type controllerFlags struct {
	kubeconfig string
	logLevel   string
	logFormat  string
	opts       operator.Options
}

func (f *controllerFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster config, then $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info or error")
	fs.StringVar(&f.logFormat, "log-format", "json", "log format: json or console")
	fs.StringVar(&f.opts.CloudProvider, "cloud-provider", "simulated", "cloud provider: simulated")
	fs.StringVar(&f.opts.MetricsAddr, "metrics-bind-address", ":8080", "address to serve Prometheus metrics on (0 disables)")
	fs.StringVar(&f.opts.HealthAddr, "health-probe-bind-address", ":8081", "address to serve /healthz and /readyz on")
	fs.BoolVar(&f.opts.LeaderElection, "leader-elect", true, "elect a leader so that only one replica acts")
	fs.StringVar(&f.opts.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader-election Lease (default: the pod's namespace)")
	fs.DurationVar(&f.opts.Provisioning.BatchIdle, "batch-idle-duration", 0, "close a provisioning batch after this long without new pending pods (default 1s)")
	fs.DurationVar(&f.opts.Provisioning.BatchMax, "batch-max-duration", 0, "close a provisioning batch this long after it opened (default 10s)")
	fs.IntVar(&f.opts.Provisioning.CreateWorkers, "nodeclaim-create-workers", 0, "NodeClaims created concurrently (default 16)")
	fs.BoolVar(&f.opts.Provisioning.Bound, "lower-bound", false, "compute each batch's proven lower bound (logged); costs time on large batches")
	fs.StringSliceVar(&f.opts.Provisioning.Schedulers, "scheduler-names", nil, "scheduler names whose pods tenon provisions for (default default-scheduler)")
}

// fromEnv sets every flag not given on the command line from TENON_<NAME>.
func fromEnv(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(fl *pflag.Flag) {
		if fl.Changed || err != nil {
			return
		}
		name := "TENON_" + strings.ToUpper(strings.ReplaceAll(fl.Name, "-", "_"))
		if v, ok := os.LookupEnv(name); ok {
			if e := fs.Set(fl.Name, v); e != nil {
				err = fmt.Errorf("%s=%q: %w", name, v, e)
			}
		}
	})
	return err
}

func newLogger(level, format string) (func(*zap.Options), error) {
	var lvl zapcore.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level %q: %w", level, err)
	}
	if format != "json" && format != "console" {
		return nil, fmt.Errorf("log format %q: use json or console", format)
	}
	return func(o *zap.Options) {
		o.Development = format == "console"
		o.Level = lvl
	}, nil
}

func newController() *cobra.Command {
	f := &controllerFlags{}
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run tenon's controllers against a cluster",
		Long: `controller runs tenon in a cluster (or against one through a kubeconfig): the cluster
mirror, the provisioning loop and the NodeClaim controllers, with the simulated cloud provider
by default. Every flag can also be set as TENON_<FLAG_NAME> in the environment.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := fromEnv(cmd.Flags()); err != nil {
				return err
			}
			logOpts, err := newLogger(f.logLevel, f.logFormat)
			if err != nil {
				return err
			}
			log := zap.New(logOpts)
			ctrl.SetLogger(log)
			cfg, err := restConfig(f.kubeconfig)
			if err != nil {
				return err
			}
			ctx := ctrl.SetupSignalHandler()
			op, err := operator.New(ctx, cfg, f.opts, log)
			if err != nil {
				return err
			}
			log.Info("starting tenon", "cloudProvider", f.opts.CloudProvider, "leaderElection", f.opts.LeaderElection)
			return op.Start(ctx)
		},
	}
	f.register(cmd.Flags())
	return cmd
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	return ctrl.GetConfig()
}

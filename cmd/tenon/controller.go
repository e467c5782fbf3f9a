package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/tenon-sh/tenon/internal/version"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/registry"
	"github.com/tenon-sh/tenon/pkg/disruption"
	"github.com/tenon-sh/tenon/pkg/featuregates"
	"github.com/tenon-sh/tenon/pkg/operator"
	"github.com/tenon-sh/tenon/pkg/scheduling"
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
	fs.StringVar(&f.opts.CloudProvider, "cloud-provider", registry.Default, "cloud provider: "+strings.Join(registry.Names(), ", "))
	fs.StringVar(&f.opts.MetricsAddr, "metrics-bind-address", ":8080", "address to serve Prometheus metrics on (0 disables)")
	fs.StringVar(&f.opts.HealthAddr, "health-probe-bind-address", ":8081", "address to serve /healthz and /readyz on")
	fs.BoolVar(&f.opts.LeaderElection, "leader-elect", true, "elect a leader so that only one replica acts")
	fs.StringVar(&f.opts.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader-election Lease (default: the pod's namespace)")
	registerLeaderFlags(fs, &f.opts)
	fs.BoolVar(&f.opts.Coexistence.Takeover, "takeover", false, "start even while Karpenter's leader-election Lease is held, and adopt the NodeClaims Karpenter made (docs/migrate.md); without it tenon refuses to start while Karpenter runs")
	fs.StringVar(&f.opts.Coexistence.KarpenterLease.Name, "karpenter-leader-election-name", operator.DefaultKarpenterLeaseName, "name of Karpenter's leader-election Lease, which tenon checks at start-up (Karpenter's --leader-election-name)")
	fs.StringVar(&f.opts.Coexistence.KarpenterLease.Namespace, "karpenter-leader-election-namespace", operator.DefaultKarpenterLeaseNamespace, "namespace of Karpenter's leader-election Lease: the namespace Karpenter runs in (Karpenter's --leader-election-namespace)")
	fs.DurationVar(&f.opts.Provisioning.BatchIdle, "batch-idle-duration", 0, "close a provisioning batch after this long without new pending pods (default 1s)")
	fs.DurationVar(&f.opts.Provisioning.BatchMax, "batch-max-duration", 0, "close a provisioning batch this long after it opened (default 10s)")
	fs.IntVar(&f.opts.Provisioning.CreateWorkers, "nodeclaim-create-workers", 0, "NodeClaims created concurrently (default 16)")
	fs.BoolVar(&f.opts.Provisioning.Bound, "lower-bound", false, "compute each batch's proven lower bound (logged); costs time on large batches")
	fs.StringSliceVar(&f.opts.Provisioning.Schedulers, "scheduler-names", nil, "scheduler names whose pods tenon provisions for (default default-scheduler)")
	fs.VarPF(notBool{&f.opts.Provisioning.NoNomination}, "nominate-pods", "",
		"once a NodeClaim's node registers, set status.nominatedNodeName on the pods planned onto it, so that kube-scheduler binds them there (--nominate-pods=false: leave binding to kube-scheduler's own scores)").NoOptDefVal = "true"
	fs.DurationVar(&f.opts.Provisioning.GangDeadline, "gang-deadline", 0,
		"release the NodeClaims of a gang (a PodGroup with a gang policy) whose minCount pods are not bound this long after its first NodeClaim (default 10m; negative: never)")
	fs.DurationVar(&f.opts.Provisioning.GangReleaseTTL, "gang-release-unavailable-ttl", 0, "how long the offerings of a released gang are not bought again (default 3m)")
	f.registerDisruption(fs)
	registerAWSFlags(fs, &f.opts.AWS)
	fs.DurationVar(&f.opts.Interruption.PollInterval, "interruption-poll-interval", 0, "how often the cloud provider's interruption queue is polled (default 1s)")
	fs.IntVar(&f.opts.Interruption.Workers, "interruption-workers", 0, "interruption messages handled concurrently (default 4)")
	fs.DurationVar(&f.opts.Interruption.DrainLead, "interruption-drain-lead", 0, "finish draining an interrupted node this long before the notice's deadline (default 15s)")
	fs.DurationVar(&f.opts.Interruption.UnavailableTTL, "interruption-unavailable-ttl", 0, "how long an interrupted spot offering is not bought again (default 10m)")
	fs.BoolVar(&f.opts.Interruption.ReplaceOnRebalance, "interruption-replace-on-rebalance", false, "replace a node on a rebalance recommendation instead of only recording it")
	fs.Float32Var(&f.opts.KubeClientQPS, "kube-client-qps", 0, "queries per second to the API server, smoothed (default 200)")
	fs.IntVar(&f.opts.KubeClientBurst, "kube-client-burst", 0, "queries to the API server allowed in a burst (default 400)")
	fs.BoolVar(&f.opts.EnableProfiling, "enable-profiling", false, "serve Go's pprof profiles under /debug/pprof/ on the metrics address")
}

// registerDisruption adds the flags of the disruption loop.
func (f *controllerFlags) registerDisruption(fs *pflag.FlagSet) {
	d := &f.opts.Disruption
	fs.BoolVar(&d.Disabled, "disable-disruption", false, "do not run the disruption loop (no consolidation, drift, expiration)")
	fs.DurationVar(&d.PassInterval, "disruption-pass-interval", 0, "time between disruption passes (default 10s)")
	fs.DurationVar(&d.ValidationDelay, "disruption-validation-delay", 0, "how long a disruption command waits before it is validated again and executed (default 15s)")
	fs.DurationVar(&d.ReplacementTimeout, "disruption-replacement-timeout", 0, "how long a disruption command waits for its replacements to initialize before rolling back (default 10m)")
	fs.DurationVar(&d.FailureBackoff, "disruption-failure-backoff", 0, "how long the nodes of a failed disruption command are left alone (default 5m)")
	fs.DurationVar(&d.OrphanTaintInterval, "disruption-orphan-taint-interval", 0, "how often karpenter.sh/disrupted taints that no disruption command owns are removed (default 1m)")
	fs.DurationVar(&d.DriftCheckInterval, "drift-check-interval", 0, "how long the cloud provider's drift verdict on a NodeClaim is reused (default 1m)")
	registerDecisionFlags(fs, &d.Decision, func(g featuregates.Gates) {
		f.opts.StaticCapacity, f.opts.NodeOverlay = g.StaticCapacity, g.NodeOverlay
	})
}

// registerDecisionFlags adds the flags that tune the disruption decision; `tenon explain` takes
// them too, so that it decides as the controller does.
// also, when given, is called with the feature gates too.
func registerDecisionFlags(fs *pflag.FlagSet, o *disruption.Options, also ...func(featuregates.Gates)) {
	fs.Var(featuregates.NewValue(func(g featuregates.Gates) {
		o.SpotToSpotConsolidation = g.SpotToSpotConsolidation
		for _, f := range also {
			f(g)
		}
	}), "feature-gates",
		"Karpenter's feature gates, Name=true|false comma-separated ("+strings.Join(featuregates.Names(), ", ")+"); SpotToSpotConsolidation (default false) lets consolidation replace spot by spot; StaticCapacity (default false) keeps static NodePools at spec.replicas; NodeOverlay (default false) applies NodeOverlays to instance types")
	o.ExpendablePriorityCutoff = new(scheduling.DefaultExpendableCutoff)
	fs.Int32Var(o.ExpendablePriorityCutoff, "expendable-pods-priority-cutoff", scheduling.DefaultExpendableCutoff,
		"pods of a priority below this are expendable, as in Cluster Autoscaler: tenon buys no capacity for them, and a node holding only expendable pods is empty")
	fs.Float64Var(&o.MinSavingsFraction, "consolidation-min-savings-fraction", 0, "least fraction of the candidates' price a consolidation must save (default 0.02; per nodepool: annotation tenon.sh/consolidation-min-savings-fraction)")
	fs.Float64Var(&o.MinSavingsPerHour, "consolidation-min-savings-per-hour", 0, "least $/h a consolidation must save (default 0.001; per nodepool: annotation tenon.sh/consolidation-min-savings-per-hour)")
	fs.IntVar(&o.SpotToSpotMinInstanceTypes, "spot-to-spot-min-instance-types", 0, "instance types cheaper than a spot node its spot replacement must be able to use (default 15)")
	fs.DurationVar(&o.SpotToSpotMinAge, "spot-to-spot-min-age", 0, "how old a spot node must be before it is replaced by cheaper spot (default 10m)")
	fs.Float64Var(&o.BalancedThreshold, "balanced-threshold", 0, "least score a Balanced nodepool consolidates at (default 0.5)")
	fs.IntVar(&o.MaxSimulations, "disruption-max-simulations", 0, "solver runs one disruption pass may spend; the next pass resumes (default 2000)")
	fs.DurationVar(&o.RepackAfter, "consolidation-repack-after", 0, "how long nodes must go without a pod arriving or leaving before consolidation may repack several of them onto fewer new ones (default 2h)")
	fs.Var(&o.MinValuesPolicy, "min-values-policy", "Strict keeps every NodePool requirement's minValues (pods that would leave fewer values are unschedulable); BestEffort lowers minValues to what is left and records it on the NodeClaim; provisioning and disruption simulations both follow it")
	fs.Var(&o.PreferencePolicy, "preference-policy", "Respect enforces pods' preferences (preferred affinities, ScheduleAnyway spreads) while they can hold; Ignore plans with their required constraints only; provisioning and disruption simulations both follow it")
	fs.BoolVar(&o.NoRepack, "consolidation-no-repack", false, "never repack several nodes onto several fewer new ones; multi-node consolidation keeps to one replacement")
}

// fromEnv sets every flag not given on the command line from TENON_<NAME>, or else from the
// variable Karpenter's chart uses for it (karpenterEnv).
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
			return
		}
		k, ok := karpenterEnv[fl.Name]
		if !ok {
			return
		}
		v, ok := os.LookupEnv(k.name)
		if !ok {
			return
		}
		set := v
		if k.value != nil {
			var e error
			if set, e = k.value(v); e != nil {
				err = fmt.Errorf("%s=%q: %w", k.name, v, e)
				return
			}
		}
		if e := fs.Set(fl.Name, set); e != nil {
			err = fmt.Errorf("%s=%q: %w", k.name, v, e)
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
		o.EncoderConfigOptions = append(o.EncoderConfigOptions, ecosystemKeys)
	}, nil
}

// ecosystemKeys names the JSON log fields as Karpenter does: time (ISO 8601), level, message,
// logger, caller; controller-runtime adds controller and the reconciled object's kind to each
// reconcile's lines.
func ecosystemKeys(ec *zapcore.EncoderConfig) {
	ec.TimeKey, ec.LevelKey, ec.MessageKey, ec.NameKey, ec.CallerKey = "time", "level", "message", "logger", "caller"
	ec.EncodeTime = zapcore.ISO8601TimeEncoder
}

func newController() *cobra.Command {
	f := &controllerFlags{}
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run tenon's controllers against a cluster",
		Long: `controller runs tenon in a cluster (or against one through a kubeconfig): the cluster
mirror, the provisioning loop, the disruption loop and the NodeClaim controllers, with the
simulated cloud provider by default. Every flag can also be set as TENON_<FLAG_NAME> in the environment,
and the variables of Karpenter's chart are read too (KUBE_CLIENT_QPS, KUBE_CLIENT_BURST,
ENABLE_PROFILING, BATCH_IDLE_DURATION, BATCH_MAX_DURATION, FEATURE_GATES, LOG_LEVEL,
MIN_VALUES_POLICY, PREFERENCE_POLICY, LEADER_ELECTION_NAMESPACE, METRICS_PORT, HEALTH_PROBE_PORT,
DISABLE_LEADER_ELECTION), TENON_ ones winning.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := fromEnv(cmd.Flags()); err != nil {
				return err
			}
			if err := fromKarpenterEnv(cmd.Flags()); err != nil {
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
			log.Info("starting tenon", f.startupValues()...)
			return op.Start(ctx)
		},
	}
	f.register(cmd.Flags())
	return cmd
}

// startupValues are the key-value pairs of the start-up log line: the version and commit (the
// keys Karpenter logs them under) and the choices that matter most when reading what follows.
func (f *controllerFlags) startupValues() []any {
	v := version.Get()
	return []any{"version", v.Version, "commit", v.Commit, "cloudProvider", f.opts.CloudProvider, "leaderElection", f.opts.LeaderElection, "takeover", f.opts.Coexistence.Takeover}
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	return ctrl.GetConfig()
}

// notBool is a boolean flag that stores its negation, for an option whose zero value is on.
type notBool struct{ p *bool }

func (b notBool) String() string {
	if b.p == nil {
		return "true"
	}
	return strconv.FormatBool(!*b.p)
}

func (b notBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*b.p = !v
	return nil
}

func (notBool) Type() string { return "bool" }

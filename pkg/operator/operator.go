package operator

import (
	"context"
	"fmt"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	tenonv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/tenon/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws"
	cpmetrics "github.com/tenon-sh/tenon/pkg/cloudprovider/metrics"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/registry"
	commitmentctrl "github.com/tenon-sh/tenon/pkg/controllers/commitment"
	disruptionctrl "github.com/tenon-sh/tenon/pkg/controllers/disruption"
	"github.com/tenon-sh/tenon/pkg/controllers/interruption"
	"github.com/tenon-sh/tenon/pkg/controllers/metrics"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/garbagecollection"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/lifecycle"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/termination"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeoverlay"
	staticpool "github.com/tenon-sh/tenon/pkg/controllers/nodepool/static"
	"github.com/tenon-sh/tenon/pkg/controllers/nodepool/status"
	"github.com/tenon-sh/tenon/pkg/controllers/provisioning"
	"github.com/tenon-sh/tenon/pkg/events"
	"github.com/tenon-sh/tenon/pkg/state"
)

// Options configure the controller process. Every field has a flag in `tenon controller`.
type Options struct {
	// CloudProvider names the provider, one of package registry's ("simulated" by default).
	CloudProvider string
	// MetricsAddr serves Prometheus metrics ("0" disables); HealthAddr serves /healthz and
	// /readyz.
	MetricsAddr, HealthAddr string
	// LeaderElection makes only one replica act; LeaderElectionNamespace holds its Lease.
	LeaderElection          bool
	LeaderElectionNamespace string
	// LeaderElectionID names tenon's own Lease (default tenon-leader, DefaultLeaderElectionID).
	LeaderElectionID string
	// LeaseDuration, RenewDeadline and RetryPeriod time the leader election (kube components'
	// --leader-elect-lease-duration, --leader-elect-renew-deadline, --leader-elect-retry-period;
	// controller-runtime's fields of the same names): a standby takes over at most LeaseDuration
	// after the leader last renewed; the leader gives up if it cannot renew for RenewDeadline;
	// every candidate tries every RetryPeriod. Zero: 15s, 10s and 2s. Each must exceed the next
	// (RenewDeadline by more than 1.2 RetryPeriods, as client-go requires).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Coexistence: refuse to start while Karpenter's leader-election Lease is held, unless
	// taking over (--takeover).
	Coexistence Coexistence
	// AllowRepeatedControllers lets several operators run in one process (tests, restarts
	// simulated in-process); controller-runtime otherwise refuses a second controller name.
	AllowRepeatedControllers bool
	Provisioning             provisioning.Options
	Lifecycle                lifecycle.Options
	Termination              termination.Options
	GarbageCollection        garbagecollection.Options
	NodePoolStatus           status.Options
	Interruption             interruption.Options
	Disruption               disruptionctrl.Options

	// StaticCapacity (the StaticCapacity feature gate, default off, as in Karpenter) runs the
	// controller that keeps static NodePools at spec.replicas; StaticNodePool tunes it.
	StaticCapacity bool
	StaticNodePool staticpool.Options
	// NodeOverlay (the NodeOverlay feature gate, default off, as in Karpenter) applies
	// NodeOverlays to the instance types provisioning and disruption plan with; NodeOverlays
	// tunes their controller.
	NodeOverlay  bool
	NodeOverlays nodeoverlay.Options

	// AWS configures the aws provider (--cluster-name, --interruption-queue, ...).
	AWS aws.Config
	// KubeClientQPS and KubeClientBurst limit the API client (rest.Config QPS and Burst;
	// Karpenter's --kube-client-qps and --kube-client-burst). Zero keeps the config's own, or
	// 200 and 400 when it has none.
	KubeClientQPS   float32
	KubeClientBurst int
	// EnableProfiling serves Go's pprof handlers under /debug/pprof/ on the metrics server.
	EnableProfiling bool
	// Metrics tunes the controller that publishes the cluster-state metrics.
	Metrics metrics.Options
	// AccessDeniedFor is how long the API server may refuse one of the controller's informers
	// its list or watch (RBAC missing a rule its caches need) before Start stops with an error
	// naming the resource (default DefaultAccessDeniedFor). /readyz fails from the first
	// refusal.
	AccessDeniedFor time.Duration
}

// ProfilingHandlers are the pprof handlers EnableProfiling adds to the metrics server, by path
// (those Karpenter serves).
func ProfilingHandlers() map[string]http.Handler {
	return map[string]http.Handler{
		"/debug/pprof/":             http.HandlerFunc(pprof.Index),
		"/debug/pprof/cmdline":      http.HandlerFunc(pprof.Cmdline),
		"/debug/pprof/profile":      http.HandlerFunc(pprof.Profile),
		"/debug/pprof/symbol":       http.HandlerFunc(pprof.Symbol),
		"/debug/pprof/trace":        http.HandlerFunc(pprof.Trace),
		"/debug/pprof/allocs":       pprof.Handler("allocs"),
		"/debug/pprof/heap":         pprof.Handler("heap"),
		"/debug/pprof/block":        pprof.Handler("block"),
		"/debug/pprof/goroutine":    pprof.Handler("goroutine"),
		"/debug/pprof/threadcreate": pprof.Handler("threadcreate"),
	}
}

// Operator is a running tenon controller process.
type Operator struct {
	Manager manager.Manager
	Cluster *state.Cluster
	Cloud   cloudprovider.CloudProvider
	// Measured is Cloud decorated with karpenter_cloudprovider_* metrics; every controller
	// calls the provider through it.
	Measured cloudprovider.CloudProvider
	// Planned is Measured with the NodeOverlays applied to its instance types: the provider
	// provisioning and disruption plan with.
	// With Commitments served, on-demand offerings are priced at what they add to the bill.
	Planned     cloudprovider.CloudProvider
	Overlays    *nodeoverlay.Store
	Commitments *commitmentctrl.Store
	Unavailable *cloudprovider.UnavailableOfferings
	Provisioner *provisioning.Provisioner
	// Disruption is nil when Options.Disruption.Disabled.
	Disruption *disruptionctrl.Controller

	access *accessGuard
}

// New builds the manager, the mirror, the provider and the controllers. Nothing runs until
// Start.
func New(ctx context.Context, cfg *rest.Config, opts Options, log logr.Logger) (*Operator, error) {
	if opts.CloudProvider == "" {
		opts.CloudProvider = registry.Default
	}
	if opts.LeaderElectionID == "" {
		opts.LeaderElectionID = DefaultLeaderElectionID
	}
	opts.Coexistence.defaults()
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 200, 400
	}
	if opts.KubeClientQPS > 0 {
		cfg.QPS = opts.KubeClientQPS
	}
	if opts.KubeClientBurst > 0 {
		cfg.Burst = opts.KubeClientBurst
	}
	direct, err := client.New(cfg, client.Options{Scheme: Scheme})
	if err != nil {
		return nil, fmt.Errorf("creating the API client: %w", err)
	}
	if err := checkKarpenter(ctx, direct, opts.Coexistence, time.Now(), log); err != nil {
		return nil, err
	}
	metricsOpts := metricsserver.Options{BindAddress: opts.MetricsAddr}
	if opts.EnableProfiling {
		metricsOpts.ExtraHandlers = ProfilingHandlers()
	}
	lease, renew, retryPeriod, err := leaderTimings(opts)
	if err != nil {
		return nil, err
	}
	access := newAccessGuard(opts.AccessDeniedFor, log.WithName("access"))
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  Scheme,
		Logger:                  log,
		Cache:                   cache.Options{DefaultWatchErrorHandler: access.handle},
		Metrics:                 metricsOpts,
		HealthProbeBindAddress:  opts.HealthAddr,
		LeaderElection:          opts.LeaderElection,
		LeaderElectionID:        opts.LeaderElectionID,
		LeaderElectionNamespace: opts.LeaderElectionNamespace,
		LeaseDuration:           &lease,
		RenewDeadline:           &renew,
		RetryPeriod:             &retryPeriod,
		// A clean stop hands the Lease over at once. Safe because the process ends when
		// Start returns (cmd/tenon, tenon up): nothing acts after the release.
		LeaderElectionReleaseOnCancel: true,
		// Reconcilers also recover their own panics (internal/recovery), with an event and
		// tenon_controller_panics_total; this is the net under that.
		Controller: config.Controller{SkipNameValidation: &opts.AllowRepeatedControllers, RecoverPanic: ptr.To(true)},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	o := &Operator{Manager: mgr, access: access, Cluster: state.NewCluster(clock.RealClock{}), Unavailable: cloudprovider.NewUnavailableOfferings(clock.RealClock{})}
	if o.Cloud, err = registry.Build(opts.CloudProvider, registry.Env{
		Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Unavailable: o.Unavailable, Manager: mgr, AWS: opts.AWS,
	}); err != nil {
		return nil, err
	}
	o.Measured = cpmetrics.Decorate(o.Cloud)
	o.Overlays = nodeoverlay.NewStore(opts.NodeOverlay)
	o.Planned = nodeoverlay.Decorate(o.Measured, o.Overlays)
	overlaid := o.Planned
	if err := o.Cluster.Register(ctx, mgr.GetCache()); err != nil {
		return nil, err
	}
	// PodGroups exist only where the API server serves them (GenericWorkload): their gangs are
	// planned together where it does, their pods as ordinary pods elsewhere.
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the discovery client: %w", err)
	}
	if served, err := state.PodGroupsServed(disc); err != nil {
		return nil, err
	} else if served {
		if err := o.Cluster.RegisterPodGroups(ctx, mgr.GetCache()); err != nil {
			return nil, err
		}
		log.Info("planning PodGroups' gangs", "api", "scheduling.k8s.io/v1beta1")
	}
	// Commitments (tenon.sh/v1alpha1) price on-demand capacity where the CRD is installed.
	if served, err := served(disc, tenonv1alpha1.SchemeGroupVersion.String(), "commitments"); err != nil {
		return nil, err
	} else if served {
		o.Commitments = commitmentctrl.NewStore(o.Cluster, clock.RealClock{}, opts.AWS.Region)
		o.Planned = commitmentctrl.Decorate(o.Planned, o.Commitments)
		if _, err := commitmentctrl.Register(mgr, commitmentctrl.Deps{Store: o.Commitments, Cloud: overlaid}, commitmentctrl.Options{}); err != nil {
			return nil, err
		}
	} else {
		log.Info("the Commitment CRD is not installed: on-demand capacity is priced at list prices", "api", tenonv1alpha1.SchemeGroupVersion.String())
	}
	if _, err := metrics.Register(mgr, metrics.Deps{Cluster: o.Cluster, Informers: mgr.GetCache(), Cloud: o.Measured}, opts.Metrics); err != nil {
		return nil, err
	}
	// The lifecycle launches through the overlays: NodeOverlay prices rank a claim's offerings.
	if err := lifecycle.Register(mgr, lifecycle.Deps{CloudProvider: o.Planned, UnavailableOfferings: o.Unavailable,
		// o.Provisioner is set below, before the manager starts.
		BeforeRegister: func(ctx context.Context, c *apisv1.NodeClaim, n *corev1.Node) {
			o.Provisioner.BeforeRegister(ctx, c, n)
		}}, opts.Lifecycle); err != nil {
		return nil, err
	}
	if err := termination.Register(mgr, termination.Deps{CloudProvider: o.Measured}, opts.Termination); err != nil {
		return nil, err
	}
	if err := garbagecollection.Register(mgr, garbagecollection.Deps{CloudProvider: o.Measured}, opts.GarbageCollection); err != nil {
		return nil, err
	}
	if len(opts.NodePoolStatus.NodeClasses) == 0 {
		opts.NodePoolStatus.NodeClasses = []client.Object{&simv1alpha1.SimNodeClass{}}
		if entry, err := registry.Get(opts.CloudProvider); err == nil && entry.NodeClass != nil {
			opts.NodePoolStatus.NodeClasses = []client.Object{entry.NodeClass()}
		}
	}
	if err := status.Register(mgr, status.Deps{CloudProvider: o.Measured}, opts.NodePoolStatus); err != nil {
		return nil, err
	}
	opts.NodeOverlays.Enabled = opts.NodeOverlays.Enabled || opts.NodeOverlay
	if len(opts.NodeOverlays.NodeClasses) == 0 {
		opts.NodeOverlays.NodeClasses = opts.NodePoolStatus.NodeClasses
	}
	if _, err := nodeoverlay.Register(mgr, nodeoverlay.Deps{Cloud: o.Measured, Store: o.Overlays}, opts.NodeOverlays); err != nil {
		return nil, err
	}
	if opts.StaticCapacity {
		if err := staticpool.Register(mgr, staticpool.Deps{CloudProvider: o.Planned, Filter: o.Unavailable}, opts.StaticNodePool); err != nil {
			return nil, err
		}
	}
	// One minValues policy and one preference policy for both loops (`--min-values-policy` and
	// `--preference-policy` set the disruption decision's): a disruption simulation must plan
	// what the provisioner would launch.
	if opts.Provisioning.MinValuesPolicy == "" {
		opts.Provisioning.MinValuesPolicy = opts.Disruption.Decision.MinValuesPolicy
	}
	if opts.Disruption.Decision.MinValuesPolicy == "" {
		opts.Disruption.Decision.MinValuesPolicy = opts.Provisioning.MinValuesPolicy
	}
	if opts.Provisioning.ExpendablePriorityCutoff == nil {
		opts.Provisioning.ExpendablePriorityCutoff = opts.Disruption.Decision.ExpendablePriorityCutoff
	}
	if opts.Disruption.Decision.ExpendablePriorityCutoff == nil {
		opts.Disruption.Decision.ExpendablePriorityCutoff = opts.Provisioning.ExpendablePriorityCutoff
	}
	if opts.Provisioning.PreferencePolicy == "" {
		opts.Provisioning.PreferencePolicy = opts.Disruption.Decision.PreferencePolicy
	}
	if opts.Disruption.Decision.PreferencePolicy == "" {
		opts.Disruption.Decision.PreferencePolicy = opts.Provisioning.PreferencePolicy
	}
	o.Provisioner = provisioning.New(provisioning.Deps{
		Client: mgr.GetClient(), Cluster: o.Cluster, Cloud: o.Planned, Filter: o.Unavailable,
		Recorder: events.New(mgr.GetEventRecorderFor("tenon"), events.Options{}), Log: log.WithName("provisioner"),
	}, opts.Provisioning)
	o.Overlays.OnChange(o.Provisioner.Trigger) // new prices or capacity may fit pods waiting
	if o.Commitments != nil {
		o.Commitments.OnChange(o.Provisioner.Trigger)
	}
	if err := o.Provisioner.Register(ctx, mgr.GetCache()); err != nil {
		return nil, err
	}
	if err := mgr.Add(o.Provisioner); err != nil {
		return nil, err
	}
	if !opts.Disruption.Disabled {
		opts.Disruption.StaticCapacity = opts.Disruption.StaticCapacity || opts.StaticCapacity // one gate for both
		o.Disruption, err = disruptionctrl.Register(mgr, disruptionctrl.Deps{
			Cluster: o.Cluster, Cloud: o.Planned, Filter: o.Unavailable, Schedulers: opts.Provisioning.Schedulers,
			Recorder: events.New(mgr.GetEventRecorderFor("tenon"), events.Options{}), Log: log.WithName("disruption"),
		}, opts.Disruption)
		if err != nil {
			return nil, err
		}
	}
	if q, ok := o.Measured.(cloudprovider.InterruptionQueue); ok {
		deps := interruption.Deps{Queue: q, Cluster: o.Cluster, Unavailable: o.Unavailable, Provisioner: o.Provisioner, Log: log}
		if err := interruption.Register(mgr, deps, opts.Interruption); err != nil {
			return nil, err
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", func(req *http.Request) error {
		if err := access.ready(); err != nil {
			return err
		}
		// A probe has a short timeout of its own (a kubelet's is 1s by default); answer within it.
		ctx, cancel := context.WithTimeout(req.Context(), time.Second)
		defer cancel()
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return fmt.Errorf("caches not synced")
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return o, nil
}

// leaderTimings are the leader election's lease duration, renew deadline and retry period,
// defaulted, or an error naming the flags that contradict each other.
func leaderTimings(opts Options) (lease, renew, retry time.Duration, err error) {
	lease, renew, retry = opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod
	if lease == 0 {
		lease = 15 * time.Second
	}
	if renew == 0 {
		renew = 10 * time.Second
	}
	if retry == 0 {
		retry = 2 * time.Second
	}
	switch {
	case lease < 0 || renew < 0 || retry < 0:
		err = fmt.Errorf("leader election: --leader-elect-lease-duration (%v), --leader-elect-renew-deadline (%v) and --leader-elect-retry-period (%v) must be positive", lease, renew, retry)
	case lease <= renew:
		err = fmt.Errorf("leader election: --leader-elect-lease-duration (%v) must be longer than --leader-elect-renew-deadline (%v)", lease, renew)
	case float64(renew) <= 1.2*float64(retry):
		err = fmt.Errorf("leader election: --leader-elect-renew-deadline (%v) must be longer than 1.2 times --leader-elect-retry-period (%v)", renew, retry)
	}
	return lease, renew, retry, err
}

// Start runs everything until ctx ends. It returns early, with an error naming the resource,
// when the API server keeps refusing an informer its list or watch (Options.AccessDeniedFor):
// the manager would otherwise wait for ever for that cache to sync, and would not return even
// when ctx ends, since controller-runtime waits for the caches without watching ctx.
func (o *Operator) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- o.Manager.Start(ctx) }()
	select {
	case err := <-done:
		return err
	case err := <-o.access.fatal:
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second): // the manager stuck in its cache wait; its goroutines end with the process
		}
		return err
	}
}

// served reports whether the API server serves the resource in the group version.
func served(d discovery.DiscoveryInterface, groupVersion, resource string) (bool, error) {
	list, err := d.ServerResourcesForGroupVersion(groupVersion)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("discovering %s: %w", groupVersion, err)
	}
	for _, r := range list.APIResources {
		if r.Name == resource {
			return true, nil
		}
	}
	return false, nil
}

package disruption

import (
	"errors"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/solverinput"
	"github.com/tenon-sh/tenon/pkg/disruption"
	"github.com/tenon-sh/tenon/pkg/state"
)

// Defaults of Options.
const (
	DefaultPassInterval        = 10 * time.Second
	DefaultValidationDelay     = 15 * time.Second
	DefaultReplacementTimeout  = 10 * time.Minute
	DefaultFailureBackoff      = 5 * time.Minute
	DefaultDriftCheckInterval  = time.Minute
	DefaultOrphanTaintInterval = time.Minute
)

// Options tune the disruption loop. A zero field takes its default.
type Options struct {
	// Disabled turns the loop off: no pass runs and no taint is cleaned up.
	Disabled bool
	// PassInterval is the time between the starts of two passes (default 10s).
	PassInterval time.Duration
	// ValidationDelay is how long a command waits before it is validated again on a fresh
	// snapshot and executed (default 15s), so that a cluster in motion settles first.
	ValidationDelay time.Duration
	// ReplacementTimeout bounds the wait for a command's replacements to initialize; when it
	// runs out the command is rolled back (default 10m).
	ReplacementTimeout time.Duration
	// FailureBackoff is how long the candidates of a command that failed are left alone
	// (default 5m).
	FailureBackoff time.Duration
	// DriftCheckInterval is how long the cloud provider's drift verdict on a NodeClaim is reused
	// before the provider is asked again (default 1m).
	DriftCheckInterval time.Duration
	// OrphanTaintInterval is how often disrupted taints that no command owns are looked for and
	// removed, besides once at start-up (default 1m): a command whose Node update was lost, or
	// another writer of the taint, must not leave a node unschedulable for good.
	OrphanTaintInterval time.Duration
	// StaticCapacity (the StaticCapacity feature gate) lets drift and expiration replace the
	// nodes of static NodePools, each by one NodeClaim of its pool; without it their nodes are
	// left alone, as the static controller that keeps their replicas does not run.
	StaticCapacity bool
	// Decision tunes the decision itself: savings floors, spot-to-spot, simulation caps. Its
	// Cursor is managed by the controller.
	Decision disruption.Options
	// OnPass, when set, is called after every pass (benchmarks and tests watch the loop with
	// it). It must not block.
	OnPass func(PassResult)
	// OnCommand, when set, is called when a command ends, whatever its result. It must not
	// block.
	OnCommand func(CommandResult)
}

func (o *Options) defaults() {
	if o.PassInterval <= 0 {
		o.PassInterval = DefaultPassInterval
	}
	if o.ValidationDelay <= 0 {
		o.ValidationDelay = DefaultValidationDelay
	}
	if o.ReplacementTimeout <= 0 {
		o.ReplacementTimeout = DefaultReplacementTimeout
	}
	if o.FailureBackoff <= 0 {
		o.FailureBackoff = DefaultFailureBackoff
	}
	if o.DriftCheckInterval <= 0 {
		o.DriftCheckInterval = DefaultDriftCheckInterval
	}
	if o.OrphanTaintInterval <= 0 {
		o.OrphanTaintInterval = DefaultOrphanTaintInterval
	}
}

// Deps are what the controller works with.
type Deps struct {
	// Client writes Nodes (taints) and NodeClaims (replacements, conditions, deletions) and reads
	// them from the manager's cache. Required.
	Client client.Client
	// Reader reads Nodes and the volumes of pending pods from the API server directly (a
	// manager's API reader). Default: Client.
	Reader client.Reader
	// Cluster is the mirror, fed by informers. Required.
	Cluster *state.Cluster
	// Cloud serves instance types and drift. Required.
	Cloud cloudprovider.CloudProvider
	// Filter, when set, marks offerings that recently failed as unavailable, as the
	// provisioner does.
	Filter solverinput.OfferingFilter
	// Recorder records events on Nodes and NodeClaims (wrap it in events.New). Required.
	Recorder record.EventRecorder
	// Schedulers are the scheduler names whose pending pods the provisioner plans for (default
	// default-scheduler).
	Schedulers []string
	// Clock tells the time (default: the real clock).
	Clock clock.WithTicker
	Log   logr.Logger
}

func (d *Deps) defaults() error {
	switch {
	case d.Client == nil:
		return errors.New("disruption: Deps.Client is required")
	case d.Cluster == nil:
		return errors.New("disruption: Deps.Cluster is required")
	case d.Cloud == nil:
		return errors.New("disruption: Deps.Cloud is required")
	case d.Recorder == nil:
		return errors.New("disruption: Deps.Recorder is required")
	}
	if d.Reader == nil {
		d.Reader = d.Client
	}
	if len(d.Schedulers) == 0 {
		d.Schedulers = []string{corev1.DefaultSchedulerName}
	}
	if d.Clock == nil {
		d.Clock = clock.RealClock{}
	}
	return nil
}

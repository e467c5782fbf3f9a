package interruption

import (
	"errors"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/kube"
	"github.com/tenon-sh/tenon/pkg/state"
)

// ControllerName names the controller (in logs, and as the source of its events).
const ControllerName = "interruption"

// Defaults of Options.
const (
	DefaultPollInterval   = time.Second
	DefaultWorkers        = 4
	DefaultDrainLead      = 15 * time.Second
	DefaultUnavailableTTL = 10 * time.Minute
)

// retryMax bounds the delay before a message whose handling failed is tried again; a spot
// notice leaves two minutes, so the delay must stay short.
const retryMax = 10 * time.Second

// Options tune the controller. A zero field takes its default.
type Options struct {
	// PollInterval is the time between two receives from the queue (default 1s).
	PollInterval time.Duration
	// Workers is how many messages are handled at once (default 4).
	Workers int
	// DrainLead is how long before a notice's deadline the drain must be over, so that the
	// pods have left before the instance goes (default 15s). A notice that leaves less than
	// that is drained until its deadline.
	DrainLead time.Duration
	// UnavailableTTL is how long the offering of an interrupted spot instance stays marked
	// unavailable (default 10m).
	UnavailableTTL time.Duration
	// ReplaceOnRebalance acts on a rebalance recommendation as on an interruption without a
	// deadline: the node is tainted, its pods are planned elsewhere and its NodeClaim is
	// deleted. Off by default: the recommendation is only recorded.
	ReplaceOnRebalance bool
}

func (o *Options) defaults() {
	kube.DefaultPositive(&o.PollInterval, DefaultPollInterval)
	kube.DefaultPositive(&o.DrainLead, DefaultDrainLead)
	kube.DefaultPositive(&o.UnavailableTTL, DefaultUnavailableTTL)
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
}

// Trigger asks for a provisioning batch soon; *provisioning.Provisioner implements it.
type Trigger interface{ Trigger() }

// Deps are what the controller works with.
type Deps struct {
	// Queue delivers the messages. Required.
	Queue cloudprovider.InterruptionQueue
	// Cluster is the mirror the messages' instances are looked up in and their nodes marked
	// for deletion in. Required.
	Cluster *state.Cluster
	// Client reads NodeClaims and Nodes (by the field indexes of package
	// controllers/internal/index when the mirror does not know an instance yet), patches them
	// and deletes NodeClaims. Register defaults it to the manager's (cached) client; New
	// requires it.
	Client client.Client
	// Unavailable receives the offerings of interrupted spot instances; pass the cache the
	// provisioner applies and the provider launches around. Optional.
	Unavailable *cloudprovider.UnavailableOfferings
	// Provisioner is asked for a batch once a node is marked for deletion. Optional: without
	// it the replacement is planned when the provisioner next runs.
	Provisioner Trigger
	// Recorder records events on NodeClaims and Nodes. Register defaults it to a
	// de-duplicating recorder (package events) on the manager's; New to one that drops them.
	Recorder record.EventRecorder
	// Clock tells the time and paces the polls (default: the real clock).
	Clock clock.Clock
	// Log receives what the controller does (default: discarded).
	Log logr.Logger
}

func (d *Deps) defaults() error {
	switch {
	case d.Queue == nil:
		return errors.New("interruption: Deps.Queue is required")
	case d.Cluster == nil:
		return errors.New("interruption: Deps.Cluster is required")
	case d.Client == nil:
		return errors.New("interruption: Deps.Client is required")
	}
	if d.Recorder == nil {
		d.Recorder = &record.FakeRecorder{}
	}
	if d.Clock == nil {
		d.Clock = clock.RealClock{}
	}
	if d.Log.GetSink() == nil {
		d.Log = logr.Discard()
	}
	return nil
}

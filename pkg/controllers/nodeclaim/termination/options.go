package termination

import (
	"errors"
	"time"

	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/kube"
)

// Names of the controllers (in logs and metrics, and the source of their events).
const (
	ControllerName     = "nodeclaim.termination"
	NodeControllerName = "node.termination"
)

// Defaults of Options.
const (
	DefaultDrainPollInterval       = time.Second
	DefaultEvictionRetryBase       = 100 * time.Millisecond
	DefaultEvictionRetryMax        = 10 * time.Second
	DefaultInstancePollInterval    = time.Second
	DefaultStuckPodTimeout         = time.Minute
	DefaultMaxConcurrentReconciles = 10
)

// Options tune the controllers. A zero field takes its default.
type Options struct {
	// DrainPollInterval is how often a drain in progress is looked at again (default 1s).
	DrainPollInterval time.Duration
	// EvictionRetryBase and EvictionRetryMax bound the backoff between evictions of a pod
	// that were refused (defaults 100ms and 10s); the delay doubles with each refusal.
	EvictionRetryBase, EvictionRetryMax time.Duration
	// InstancePollInterval is how often the provider is asked again whether a terminating
	// instance is gone (default 1s).
	InstancePollInterval time.Duration
	// StuckPodTimeout: a pod still terminating this long after its deletion timestamp is no
	// longer waited for; its kubelet is presumed gone (default 1m).
	StuckPodTimeout time.Duration
	// MaxConcurrentReconciles is how many NodeClaims terminate at once (default 10).
	MaxConcurrentReconciles int
}

func (o *Options) defaults() {
	kube.DefaultPositive(&o.DrainPollInterval, DefaultDrainPollInterval)
	kube.DefaultPositive(&o.EvictionRetryBase, DefaultEvictionRetryBase)
	kube.DefaultPositive(&o.EvictionRetryMax, DefaultEvictionRetryMax)
	kube.DefaultPositive(&o.InstancePollInterval, DefaultInstancePollInterval)
	kube.DefaultPositive(&o.StuckPodTimeout, DefaultStuckPodTimeout)
	kube.DefaultPositive(&o.MaxConcurrentReconciles, DefaultMaxConcurrentReconciles)
	o.EvictionRetryMax = max(o.EvictionRetryMax, o.EvictionRetryBase)
}

// Deps are what the controllers work with.
type Deps struct {
	// Client reads NodeClaims, Nodes and Pods and writes them, and evicts pods. Register
	// defaults it to the manager's (cached) client; New requires it.
	Client client.Client
	// CloudProvider deletes instances. Required.
	CloudProvider cloudprovider.CloudProvider
	// Clock tells the time (default: the real clock).
	Clock clock.Clock
	// Recorder records events on NodeClaims and Pods. Register defaults it to the manager's
	// recorder; New to one that drops them.
	Recorder record.EventRecorder
}

func (d *Deps) defaults() error {
	if d.Client == nil {
		return errors.New("termination: Deps.Client is required")
	}
	if d.CloudProvider == nil {
		return errors.New("termination: Deps.CloudProvider is required")
	}
	if d.Clock == nil {
		d.Clock = clock.RealClock{}
	}
	if d.Recorder == nil {
		d.Recorder = &record.FakeRecorder{}
	}
	return nil
}

package lifecycle

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/kube"
)

// ControllerName names the controller (in logs, metrics and as the source of its events).
const ControllerName = "nodeclaim.lifecycle"

// Defaults of Options.
const (
	DefaultLaunchTimeout           = 5 * time.Minute
	DefaultRegistrationTimeout     = 15 * time.Minute
	DefaultUnavailableOfferingsTTL = 3 * time.Minute
	DefaultRetryBase               = time.Second
	DefaultRetryMax                = time.Minute
	DefaultMaxConcurrentReconciles = 10
)

// Options tune the controller. A zero field takes its default.
type Options struct {
	// LaunchTimeout: a claim not Launched this long after its creation is deleted (default
	// 5m).
	LaunchTimeout time.Duration
	// RegistrationTimeout: a claim whose Node has not registered this long after its creation
	// is deleted (default 15m).
	RegistrationTimeout time.Duration
	// UnavailableOfferingsTTL is how long an offering that ran out of capacity stays marked
	// unavailable (default 3m).
	UnavailableOfferingsTTL time.Duration
	// RetryBase and RetryMax bound the backoff between launch attempts that failed (defaults
	// 1s and 1m); the delay doubles from RetryBase with each failure of the same claim.
	RetryBase, RetryMax time.Duration
	// MaxConcurrentReconciles is how many claims are reconciled at once (default 10).
	MaxConcurrentReconciles int
}

func (o *Options) defaults() {
	kube.DefaultPositive(&o.LaunchTimeout, DefaultLaunchTimeout)
	kube.DefaultPositive(&o.RegistrationTimeout, DefaultRegistrationTimeout)
	kube.DefaultPositive(&o.UnavailableOfferingsTTL, DefaultUnavailableOfferingsTTL)
	kube.DefaultPositive(&o.RetryBase, DefaultRetryBase)
	kube.DefaultPositive(&o.RetryMax, DefaultRetryMax)
	kube.DefaultPositive(&o.MaxConcurrentReconciles, DefaultMaxConcurrentReconciles)
	o.RetryMax = max(o.RetryMax, o.RetryBase)
}

// Deps are what the controller works with.
type Deps struct {
	// Client reads and writes NodeClaims and Nodes. Register defaults it to the manager's
	// (cached) client; New requires it.
	Client client.Client
	// CloudProvider launches instances. Required.
	CloudProvider cloudprovider.CloudProvider
	// UnavailableOfferings receives the offerings that ran out of capacity; pass the one the
	// provisioner applies. Default: a cache of the controller's own, which nothing else reads.
	UnavailableOfferings *cloudprovider.UnavailableOfferings
	// Clock tells the time (default: the real clock).
	Clock clock.Clock
	// Recorder records events on NodeClaims. Register defaults it to the manager's recorder
	// for ControllerName; New to one that drops them.
	Recorder record.EventRecorder
	// BeforeRegister, when set, is called with a claim and its Node when the Node first
	// registers, before its karpenter.sh/unregistered taint is removed, so nothing schedules
	// onto the Node until it returns (the provisioner nominates its planned pods there).
	BeforeRegister func(ctx context.Context, claim *apisv1.NodeClaim, node *corev1.Node)
}

func (d *Deps) defaults() error {
	if d.Client == nil {
		return errors.New("lifecycle: Deps.Client is required")
	}
	if d.CloudProvider == nil {
		return errors.New("lifecycle: Deps.CloudProvider is required")
	}
	if d.Clock == nil {
		d.Clock = clock.RealClock{}
	}
	if d.UnavailableOfferings == nil {
		d.UnavailableOfferings = cloudprovider.NewUnavailableOfferings(d.Clock)
	}
	if d.Recorder == nil {
		d.Recorder = &record.FakeRecorder{}
	}
	return nil
}

package garbagecollection

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/tenon-sh/tenon/internal/recovery"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/index"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/metrics"
	tmetrics "github.com/tenon-sh/tenon/pkg/metrics"
)

// ControllerName names the collector (in logs, and as the source of its events).
const ControllerName = "nodeclaim.garbagecollection"

// Event reasons.
const (
	ReasonInstanceGone   = "InstanceGone"
	ReasonOrphanInstance = "OrphanInstance"
)

// Defaults of Options.
const (
	DefaultInterval    = 2 * time.Minute
	DefaultGracePeriod = time.Minute
)

// Options tune the collector. A zero field takes its default.
type Options struct {
	// Interval is the time between passes (default 2m).
	Interval time.Duration
	// GracePeriod is how old an instance no NodeClaim refers to must be before it is deleted
	// (default 1m).
	GracePeriod time.Duration
}

// Deps are what the collector works with.
type Deps struct {
	// Client reads Nodes and deletes NodeClaims. Register defaults it to the manager's (cached)
	// client; New requires it.
	Client client.Client
	// Reader lists the NodeClaims at the start of a pass. It must read the API server, not a
	// cache: a cache that lags behind a launch would make a claim's new instance look orphaned.
	// Register defaults it to the manager's APIReader; New to Client.
	Reader client.Reader
	// CloudProvider lists, gets and deletes instances. Required.
	CloudProvider cloudprovider.CloudProvider
	// Clock tells the time and paces the passes (default: the real clock).
	Clock clock.Clock
	// Recorder records events on NodeClaims and Nodes. Register defaults it to the manager's
	// recorder; New to one that drops them.
	Recorder record.EventRecorder
}

// Collector deletes instances without NodeClaims and NodeClaims without instances.
type Collector struct {
	deps Deps
	opts Options
}

var _ manager.LeaderElectionRunnable = (*Collector)(nil)

// New returns a collector.
func New(deps Deps, opts Options) (*Collector, error) {
	if deps.Client == nil {
		return nil, errors.New("garbagecollection: Deps.Client is required")
	}
	if deps.CloudProvider == nil {
		return nil, errors.New("garbagecollection: Deps.CloudProvider is required")
	}
	if deps.Reader == nil {
		deps.Reader = deps.Client
	}
	if deps.Clock == nil {
		deps.Clock = clock.RealClock{}
	}
	if deps.Recorder == nil {
		deps.Recorder = &record.FakeRecorder{}
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.GracePeriod <= 0 {
		opts.GracePeriod = DefaultGracePeriod
	}
	return &Collector{deps: deps, opts: opts}, nil
}

// Register adds a collector to mgr.
func Register(mgr manager.Manager, deps Deps, opts Options) error {
	if deps.Client == nil {
		deps.Client = mgr.GetClient()
	}
	if deps.Reader == nil {
		deps.Reader = mgr.GetAPIReader()
	}
	if deps.Recorder == nil {
		deps.Recorder = mgr.GetEventRecorderFor(ControllerName) //nolint:staticcheck // the provisioner records through the same API
	}
	c, err := New(deps, opts)
	if err != nil {
		return err
	}
	if err := index.Setup(context.Background(), mgr); err != nil {
		return err
	}
	return mgr.Add(c)
}

// NeedLeaderElection is true: only the leader collects.
func (c *Collector) NeedLeaderElection() bool { return true }

// Start runs a pass every Interval until ctx is done, then returns nil. A failed pass is
// logged and the next one runs on schedule.
func (c *Collector) Start(ctx context.Context) error {
	ctx = tmetrics.WithController(ctx, ControllerName)
	logger := log.FromContext(ctx).WithName(ControllerName)
	ctx = log.IntoContext(ctx, logger)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.deps.Clock.After(c.opts.Interval):
		}
		// A pass that panics is skipped like one that failed; the next runs on schedule.
		if err := recovery.Guard(logger, ControllerName, func() error { return c.Collect(ctx) }); err != nil && ctx.Err() == nil {
			logger.Error(err, "garbage collection pass failed")
		}
	}
}

// Collect runs one pass.
func (c *Collector) Collect(ctx context.Context) error {
	// Instances are listed before claims, and claims from the API server: a claim exists before
	// its instance is launched, so every listed instance's claim is among those listed below
	// unless it was deleted. A claim launched after the instance list is not judged by that
	// list: its instance is looked up again before the claim is deleted.
	instances, err := c.deps.CloudProvider.List(ctx)
	if err != nil {
		return fmt.Errorf("listing instances: %w", err)
	}
	claims := &apisv1.NodeClaimList{}
	if err := c.deps.Reader.List(ctx, claims); err != nil {
		return fmt.Errorf("listing NodeClaims: %w", err)
	}
	refs := references(claims.Items)
	live := make(map[string]bool, len(instances))
	var errs []error
	for _, inst := range instances {
		live[inst.Status.ProviderID] = true
		if refs.holds(inst) || c.deps.Clock.Since(inst.CreationTimestamp.Time) < c.opts.GracePeriod {
			continue
		}
		errs = append(errs, c.deleteInstance(ctx, inst))
	}
	for i := range claims.Items {
		claim := &claims.Items[i]
		// A foreign claim's instance is not among this provider's, and must not make it "gone".
		if !cloudprovider.IsManaged(c.deps.CloudProvider, claim) || claim.Status.ProviderID == "" || live[claim.Status.ProviderID] ||
			!claim.DeletionTimestamp.IsZero() || !claim.IsTrue(apisv1.ConditionTypeLaunched) {
			continue
		}
		errs = append(errs, c.deleteClaimIfGone(ctx, claim))
	}
	return errors.Join(errs...)
}

// refs are what the NodeClaims refer to: instances by provider ID, and by name the claims
// instances were launched for. Every claim counts, another autoscaler's too: an instance a
// foreign claim holds is not an orphan.
type refs struct {
	providerIDs map[string]bool
	names       map[string]bool
}

func references(claims []apisv1.NodeClaim) refs {
	r := refs{providerIDs: make(map[string]bool, len(claims)), names: make(map[string]bool, len(claims))}
	for i := range claims {
		if id := claims[i].Status.ProviderID; id != "" {
			r.providerIDs[id] = true
		}
		r.names[claims[i].Name] = true
	}
	return r
}

// holds tells whether a NodeClaim refers to the instance viewed as inst: by its provider ID,
// or, while the claim being launched has no provider ID yet, by the name of the claim the
// instance was launched for (the view's name; see cloudprovider.CloudProvider.List).
func (r refs) holds(inst *apisv1.NodeClaim) bool {
	return r.providerIDs[inst.Status.ProviderID] || (inst.Name != "" && r.names[inst.Name])
}

// deleteInstance deletes an instance no NodeClaim refers to, with an event on its Node if it
// registered one.
func (c *Collector) deleteInstance(ctx context.Context, inst *apisv1.NodeClaim) error {
	id := inst.Status.ProviderID
	// Looked up first: the Node goes with the instance.
	node, err := index.NodeForProviderID(ctx, c.deps.Client, id)
	if err != nil {
		return err
	}
	if err := cloudprovider.IgnoreNodeClaimNotFound(c.deps.CloudProvider.Delete(ctx, inst)); err != nil {
		return fmt.Errorf("deleting orphan instance %s: %w", id, err)
	}
	metrics.InstancesGarbageCollected.Inc()
	log.FromContext(ctx).Info("deleted an instance no NodeClaim refers to", "providerID", id, "launched", inst.CreationTimestamp.Time)
	if node != nil {
		c.deps.Recorder.Eventf(node, corev1.EventTypeWarning, ReasonOrphanInstance, "no NodeClaim refers to instance %s; deleted it", id)
	}
	return nil
}

// deleteClaimIfGone deletes a launched claim whose instance the provider confirms is gone.
func (c *Collector) deleteClaimIfGone(ctx context.Context, claim *apisv1.NodeClaim) error {
	_, err := c.deps.CloudProvider.Get(ctx, claim.Status.ProviderID)
	if err == nil {
		return nil // launched after the list
	}
	if !cloudprovider.IsNodeClaimNotFound(err) {
		return fmt.Errorf("getting instance %s of NodeClaim %s: %w", claim.Status.ProviderID, claim.Name, err)
	}
	if err := client.IgnoreNotFound(c.deps.Client.Delete(ctx, claim, client.Preconditions{UID: &claim.UID})); err != nil {
		return fmt.Errorf("deleting NodeClaim %s: %w", claim.Name, err)
	}
	tmetrics.Disrupted(claim, tmetrics.ReasonGarbageCollected, "", 0)
	c.deps.Recorder.Eventf(claim, corev1.EventTypeWarning, ReasonInstanceGone, "instance %s no longer exists; deleting the NodeClaim", claim.Status.ProviderID)
	log.FromContext(ctx).Info("deleted a NodeClaim whose instance is gone", "nodeclaim", claim.Name, "providerID", claim.Status.ProviderID)
	return nil
}

package nodeoverlay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-sh/tenon/internal/recovery"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/apis/v1alpha1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/featuregates"
	"github.com/tenon-sh/tenon/pkg/overlay"
)

// ControllerName names the controller (in logs and metrics, and as the source of its events).
const ControllerName = "nodeoverlay"

// EventDisabled is the reason of the warning recorded on each NodeOverlay while the feature
// gate is off: the overlay exists but is not applied.
const EventDisabled = "NodeOverlayDisabled"

// DefaultResync is the default of Options.Resync.
const DefaultResync = 5 * time.Minute

// Options tune the controller.
type Options struct {
	// Enabled is the NodeOverlay feature gate: off, overlays are not applied (each gets a
	// warning event) and Decorate returns instance types unchanged.
	Enabled bool
	// Resync is the longest the evaluation goes without being redone, so that instance types
	// and offerings the cloud adds later are overlaid too (default 5m).
	Resync time.Duration
	// NodeClasses are the NodeClass kinds to watch: a change to one re-evaluates.
	NodeClasses []client.Object
}

// Store holds the latest evaluation. The zero value holds none.
type Store struct {
	enabled atomic.Bool
	eval    atomic.Pointer[overlay.Evaluation]
	// onChange, when set, is called after each new evaluation (to wake the provisioner).
	onChange func()
}

// NewStore returns a store; enabled is the feature gate.
func NewStore(enabled bool) *Store {
	s := &Store{}
	s.enabled.Store(enabled)
	return s
}

// OnChange sets what is called after each new evaluation.
func (s *Store) OnChange(f func()) { s.onChange = f }

// Enabled reports the feature gate.
func (s *Store) Enabled() bool { return s.enabled.Load() }

// Evaluation returns the latest evaluation, or nil before the first.
func (s *Store) Evaluation() *overlay.Evaluation { return s.eval.Load() }

func (s *Store) set(e *overlay.Evaluation) {
	s.eval.Store(e)
	if s.onChange != nil {
		s.onChange()
	}
}

// apply overlays a pool's types: unchanged with the gate off; an error before the pool is
// evaluated.
func (s *Store) apply(pool string, its []*catalog.InstanceType) ([]*catalog.InstanceType, error) {
	if !s.enabled.Load() {
		return its, nil
	}
	e := s.eval.Load()
	if e == nil {
		return nil, &overlay.NotEvaluatedError{NodePool: pool}
	}
	return e.Apply(pool, its)
}

// Deps are what the controller works with.
type Deps struct {
	// Client reads NodeOverlays and NodePools and writes NodeOverlay status. Register defaults
	// it to the manager's client.
	Client client.Client
	// Cloud serves the NodePools' instance types before overlays (not the decorated provider).
	// Required with the gate on.
	Cloud cloudprovider.CloudProvider
	// Store receives each evaluation. Required.
	Store *Store
	// Clock tells the time (default: the real clock).
	Clock clock.Clock
	// Recorder records events on NodeOverlays. Register defaults it to the manager's.
	Recorder record.EventRecorder
}

// Controller evaluates NodeOverlays.
type Controller struct {
	deps Deps
	opts Options

	mu     sync.Mutex
	warned map[types.UID]int64 // overlays warned about the gate, at which generation
}

// key is the one request the controller reconciles: every overlay is evaluated against every
// other, so any change redoes them all.
var key = reconcile.Request{NamespacedName: types.NamespacedName{Name: "nodeoverlays"}}

// New returns the controller.
func New(deps Deps, opts Options) (*Controller, error) {
	if deps.Client == nil || deps.Store == nil || (opts.Enabled && deps.Cloud == nil) {
		return nil, errors.New("nodeoverlay: Deps.Client and Deps.Store are required, and Deps.Cloud with the gate on")
	}
	if deps.Clock == nil {
		deps.Clock = clock.RealClock{}
	}
	if deps.Recorder == nil {
		deps.Recorder = &record.FakeRecorder{}
	}
	if opts.Resync <= 0 {
		opts.Resync = DefaultResync
	}
	return &Controller{deps: deps, opts: opts, warned: map[types.UID]int64{}}, nil
}

// Register builds the controller on mgr.
func Register(mgr manager.Manager, deps Deps, opts Options) (*Controller, error) {
	if deps.Client == nil {
		deps.Client = mgr.GetClient()
	}
	if deps.Recorder == nil {
		deps.Recorder = mgr.GetEventRecorderFor(ControllerName) //nolint:staticcheck // the other controllers record through the same API
	}
	c, err := New(deps, opts)
	if err != nil {
		return nil, err
	}
	all := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request { return []reconcile.Request{key} })
	b := builder.ControllerManagedBy(mgr).
		Named(ControllerName).
		Watches(&v1alpha1.NodeOverlay{}, all, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&apisv1.NodePool{}, all, builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	for _, nc := range opts.NodeClasses {
		b = b.Watches(nc, all)
	}
	err = b.Complete(recovery.Reconciler(ControllerName, deps.Client, deps.Recorder, func() client.Object { return &v1alpha1.NodeOverlay{} }, c))
	return c, err
}

// Reconcile evaluates every overlay against every NodePool tenon manages, stores the result
// and writes the overlays' conditions.
func (c *Controller) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	objs, err := listOverlays(ctx, c.deps.Client)
	if err != nil {
		return reconcile.Result{}, err
	}
	if !c.opts.Enabled {
		c.warnDisabled(objs)
		return reconcile.Result{}, nil
	}
	e, errs := Evaluate(ctx, c.deps.Client, c.deps.Cloud, objs)
	if err := c.writeStatus(ctx, objs, e); err != nil {
		errs = append(errs, err)
	}
	c.deps.Store.set(e)
	log.FromContext(ctx).V(1).Info("evaluated nodeoverlays", "overlays", len(objs),
		"applied", len(e.Applied), "invalid", len(e.Invalid), "conflicts", len(e.Conflicts))
	if len(errs) > 0 {
		return reconcile.Result{}, errors.Join(errs...)
	}
	return reconcile.Result{RequeueAfter: c.opts.Resync}, nil
}

// listOverlays reads the cluster's NodeOverlays.
func listOverlays(ctx context.Context, r client.Reader) ([]*v1alpha1.NodeOverlay, error) {
	var list v1alpha1.NodeOverlayList
	if err := r.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing nodeoverlays: %w", err)
	}
	objs := make([]*v1alpha1.NodeOverlay, len(list.Items))
	for i := range list.Items {
		objs[i] = &list.Items[i]
	}
	return objs, nil
}

// Evaluate evaluates overlays against every NodePool the cloud serves, with the instance types
// it serves them (before overlays). A NodePool whose types cannot be read is left out (it stays
// unevaluated) and named among the errors. tenon explain uses it to decide as the controller.
func Evaluate(ctx context.Context, r client.Reader, cloud cloudprovider.CloudProvider, overlays []*v1alpha1.NodeOverlay) (*overlay.Evaluation, []error) {
	var pools apisv1.NodePoolList
	if err := r.List(ctx, &pools); err != nil {
		return overlay.Evaluate(overlays, nil), []error{fmt.Errorf("listing nodepools: %w", err)}
	}
	var in []overlay.Pool
	var errs []error
	for i := range pools.Items {
		np := &pools.Items[i]
		if !cloudprovider.IsManagedNodePool(cloud, np) {
			continue
		}
		its, err := cloud.GetInstanceTypes(ctx, np)
		if err != nil {
			// The pool stays unevaluated (it serves no types, as it could not anyway); the
			// others are evaluated without it.
			errs = append(errs, fmt.Errorf("instance types of nodepool %s: %w", np.Name, err))
			continue
		}
		in = append(in, overlay.Pool{NodePool: np, Types: its})
	}
	return overlay.Evaluate(overlays, in), errs
}

// writeStatus sets ValidationSucceeded (and so Ready) on every overlay.
func (c *Controller) writeStatus(ctx context.Context, objs []*v1alpha1.NodeOverlay, e *overlay.Evaluation) error {
	now := c.deps.Clock.Now()
	var errs []error
	for _, o := range objs {
		stored := o.DeepCopy()
		cond := metav1.Condition{Type: v1alpha1.ConditionTypeValidationSucceeded, Status: metav1.ConditionTrue, Reason: v1alpha1.ConditionTypeValidationSucceeded}
		if err, bad := e.Invalid[o.Name]; bad {
			cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, v1alpha1.ReasonRuntimeValidation, err.Error()
		} else if why, bad := e.Conflicts[o.Name]; bad {
			cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, v1alpha1.ReasonConflict, why
		}
		o.SetCondition(cond, now)
		if equality.Semantic.DeepEqual(stored.Status, o.Status) {
			continue
		}
		if err := c.deps.Client.Status().Patch(ctx, o, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("status of nodeoverlay %s: %w", o.Name, err))
		}
	}
	return errors.Join(errs...)
}

// warnDisabled records, once per generation, that an overlay is not applied.
func (c *Controller) warnDisabled(objs []*v1alpha1.NodeOverlay) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, o := range objs {
		if g, ok := c.warned[o.UID]; ok && g == o.Generation {
			continue
		}
		c.warned[o.UID] = o.Generation
		c.deps.Recorder.Eventf(o, corev1.EventTypeWarning, EventDisabled,
			"the %s feature gate is off: this overlay is not applied (start tenon with --feature-gates %s=true)", featuregates.NodeOverlay, featuregates.NodeOverlay)
	}
	seen := make([]types.UID, 0, len(objs))
	for _, o := range objs {
		seen = append(seen, o.UID)
	}
	for uid := range c.warned {
		if !slices.Contains(seen, uid) {
			delete(c.warned, uid)
		}
	}
}

package lifecycle

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-sh/tenon/internal/recovery"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/index"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/kube"
)

// Controller reconciles NodeClaims through launch, registration and initialization, and
// enforces their liveness.
type Controller struct {
	deps  Deps
	opts  Options
	retry *flowcontrol.Backoff // launch retries, by claim name
	// deleted are the claims this controller deleted, which a stale cache may still show.
	deleted kube.Deletions
}

var _ reconcile.Reconciler = (*Controller)(nil)

// New returns the controller. deps.Client must be able to list Nodes by the field index
// index.NodeProviderID (Register sets that up).
func New(deps Deps, opts Options) (*Controller, error) {
	if err := deps.defaults(); err != nil {
		return nil, err
	}
	opts.defaults()
	retry := flowcontrol.NewBackOff(opts.RetryBase, opts.RetryMax)
	retry.Clock = deps.Clock
	return &Controller{deps: deps, opts: opts, retry: retry}, nil
}

// Register builds the controller on mgr: it reconciles every NodeClaim, and a claim again
// whenever the Node with its provider ID changes.
func Register(mgr manager.Manager, deps Deps, opts Options) error {
	if deps.Client == nil {
		deps.Client = mgr.GetClient()
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
	return builder.ControllerManagedBy(mgr).
		Named(ControllerName).
		For(&apisv1.NodeClaim{}).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(c.claimsOfNode), builder.WithPredicates(hasProviderID)).
		WithOptions(controller.Options{MaxConcurrentReconciles: c.opts.MaxConcurrentReconciles}).
		Complete(recovery.Reconciler(ControllerName, deps.Client, deps.Recorder, func() client.Object { return &apisv1.NodeClaim{} }, c))
}

var hasProviderID = predicate.NewPredicateFuncs(func(o client.Object) bool {
	n, ok := o.(*corev1.Node)
	return ok && n.Spec.ProviderID != ""
})

// claimsOfNode maps a Node to the claims with its provider ID.
func (c *Controller) claimsOfNode(ctx context.Context, o client.Object) []reconcile.Request {
	claims, err := index.NodeClaimsForProviderID(ctx, c.deps.Client, o.(*corev1.Node).Spec.ProviderID)
	if err != nil {
		log.FromContext(ctx).Error(err, "listing the NodeClaims of a Node", "node", o.GetName())
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(claims))
	for i := range claims {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&claims[i])})
	}
	return reqs
}

// Reconcile advances one NodeClaim as far as it can go now.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	claim := &apisv1.NodeClaim{}
	if err := c.deps.Client.Get(ctx, req.NamespacedName, claim); err != nil {
		c.retry.DeleteEntry(req.Name)
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !claim.DeletionTimestamp.IsZero() || c.deleted.Has(claim.UID, c.deps.Clock.Now()) {
		c.retry.DeleteEntry(req.Name)
		return reconcile.Result{}, nil
	}
	// Another autoscaler's claim (its nodeClassRef is not this provider's): not launched, not
	// given the finalizer, not judged for liveness.
	if !cloudprovider.IsManaged(c.deps.CloudProvider, claim) {
		return reconcile.Result{}, nil
	}
	if err := kube.AddFinalizer(ctx, c.deps.Client, claim, apisv1.TerminationFinalizer); err != nil {
		return kube.Result(reconcile.Result{}, err)
	}
	orig := claim.DeepCopy()
	if err := c.adopt(ctx, claim); err != nil {
		return kube.Result(reconcile.Result{}, err)
	}
	s := &step{}
	c.advance(ctx, claim, s)
	if s.deleted {
		return reconcile.Result{}, nil
	}
	if err := kube.PatchNodeClaim(ctx, c.deps.Client, orig, claim); err != nil {
		return kube.Result(reconcile.Result{}, errors.Join(s.err, err))
	}
	c.recordTransitions(orig, claim)
	return kube.Result(reconcile.Result{RequeueAfter: s.requeue}, s.err)
}

// step is the outcome of one pass over a claim.
type step struct {
	// deleted: the claim was deleted; nothing more to write.
	deleted bool
	// requeue: look again after this long (0: when something changes).
	requeue time.Duration
	err     error
}

func (s *step) after(d time.Duration) { s.requeue = kube.Soonest(s.requeue, d) }

// advance runs launch, registration and initialization in order, each only once the previous
// one is done, then liveness. It changes claim in memory; Reconcile writes it.
func (c *Controller) advance(ctx context.Context, claim *apisv1.NodeClaim, s *step) {
	if !claim.IsTrue(apisv1.ConditionTypeLaunched) {
		c.launch(ctx, claim, s)
	}
	if !s.deleted && s.err == nil && claim.IsTrue(apisv1.ConditionTypeLaunched) && !claim.IsTrue(apisv1.ConditionTypeRegistered) {
		s.err = c.register(ctx, claim)
	}
	if !s.deleted && s.err == nil && claim.IsTrue(apisv1.ConditionTypeRegistered) && !claim.IsTrue(apisv1.ConditionTypeInitialized) {
		s.err = c.initialize(ctx, claim)
	}
	if !s.deleted {
		c.liveness(ctx, claim, s)
	}
}

// deleteClaim deletes the claim (this very object: a claim recreated under its name is left
// alone).
func (c *Controller) deleteClaim(ctx context.Context, claim *apisv1.NodeClaim) error {
	if err := c.deps.Client.Delete(ctx, claim, client.Preconditions{UID: &claim.UID}); client.IgnoreNotFound(err) != nil {
		return err
	}
	c.deleted.Add(claim.UID, c.deps.Clock.Now())
	return nil
}

package termination

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-sh/tenon/internal/recovery"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/index"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/kube"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/owned"
	"github.com/tenon-sh/tenon/pkg/events"
)

// Controller terminates NodeClaims being deleted.
type Controller struct {
	deps      Deps
	opts      Options
	evictions *flowcontrol.Backoff // refused evictions, by pod UID
}

// NodeController turns the deletion of a Node into the deletion of its NodeClaim.
type NodeController struct {
	c *Controller
}

var (
	_ reconcile.Reconciler = (*Controller)(nil)
	_ reconcile.Reconciler = (*NodeController)(nil)
)

// New returns the NodeClaim termination controller. deps.Client must be able to list Nodes
// and Pods by the field indexes of package index (Register sets them up).
func New(deps Deps, opts Options) (*Controller, error) {
	if err := deps.defaults(); err != nil {
		return nil, err
	}
	opts.defaults()
	evictions := flowcontrol.NewBackOff(opts.EvictionRetryBase, opts.EvictionRetryMax)
	evictions.Clock = deps.Clock
	return &Controller{deps: deps, opts: opts, evictions: evictions}, nil
}

// NodeController returns the Node deletion controller sharing c's dependencies.
func (c *Controller) NodeController() *NodeController { return &NodeController{c: c} }

// Register builds both controllers on mgr: NodeClaims being deleted are terminated, and Nodes
// being deleted have their NodeClaims deleted.
func Register(mgr manager.Manager, deps Deps, opts Options) error {
	if deps.Client == nil {
		deps.Client = mgr.GetClient()
	}
	if deps.Recorder == nil {
		deps.Recorder = events.New(mgr.GetEventRecorderFor(ControllerName), events.Options{}) //nolint:staticcheck // the provisioner records through the same API
	}
	c, err := New(deps, opts)
	if err != nil {
		return err
	}
	if err := index.Setup(context.Background(), mgr); err != nil {
		return err
	}
	err = builder.ControllerManagedBy(mgr).
		Named(ControllerName).
		For(&apisv1.NodeClaim{}, builder.WithPredicates(deletingWithFinalizer)).
		WithOptions(controller.Options{MaxConcurrentReconciles: c.opts.MaxConcurrentReconciles}).
		Complete(recovery.Reconciler(ControllerName, deps.Client, deps.Recorder, func() client.Object { return &apisv1.NodeClaim{} }, c))
	if err != nil {
		return err
	}
	return builder.ControllerManagedBy(mgr).
		Named(NodeControllerName).
		For(&corev1.Node{}, builder.WithPredicates(deletingWithFinalizer)).
		Complete(recovery.Reconciler(NodeControllerName, deps.Client, deps.Recorder, func() client.Object { return &corev1.Node{} }, c.NodeController()))
}

var deletingWithFinalizer = predicate.NewPredicateFuncs(func(o client.Object) bool {
	return !o.GetDeletionTimestamp().IsZero() && controllerutil.ContainsFinalizer(o, apisv1.TerminationFinalizer)
})

// Reconcile takes one step, or as many as it can, in the termination of a NodeClaim.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	claim := &apisv1.NodeClaim{}
	if err := c.deps.Client.Get(ctx, req.NamespacedName, claim); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if claim.DeletionTimestamp.IsZero() || !controllerutil.ContainsFinalizer(claim, apisv1.TerminationFinalizer) {
		return reconcile.Result{}, nil
	}
	// Karpenter uses the same finalizer: a claim of a NodeClass kind this provider does not
	// serve is another autoscaler's to drain and terminate.
	if !cloudprovider.IsManaged(c.deps.CloudProvider, claim) {
		return reconcile.Result{}, nil
	}
	orig := claim.DeepCopy()
	requeue, done, err := c.terminate(ctx, claim)
	if err == nil && done {
		err = c.finish(ctx, claim)
		return kube.Result(reconcile.Result{}, err)
	}
	if perr := kube.PatchNodeClaim(ctx, c.deps.Client, orig, claim); err == nil {
		err = perr
	}
	return kube.Result(reconcile.Result{RequeueAfter: requeue}, err)
}

// Reconcile deletes the NodeClaims of a Node being deleted, or, when it has none, deletes its
// instance and releases it.
func (n *NodeController) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	node := &corev1.Node{}
	if err := n.c.deps.Client.Get(ctx, req.NamespacedName, node); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if node.DeletionTimestamp.IsZero() || !controllerutil.ContainsFinalizer(node, apisv1.TerminationFinalizer) {
		return reconcile.Result{}, nil
	}
	if mine, err := owned.Node(ctx, n.c.deps.Client, n.c.deps.CloudProvider, node); err != nil || !mine {
		return reconcile.Result{}, err
	}
	requeue, err := n.c.nodeDeleted(ctx, node)
	return kube.Result(reconcile.Result{RequeueAfter: requeue}, err)
}

// now reads the clock.
func (c *Controller) now() time.Time { return c.deps.Clock.Now() }

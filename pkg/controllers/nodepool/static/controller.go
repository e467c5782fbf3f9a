package static

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-sh/tenon/internal/recovery"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/index"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/termination"
	"github.com/tenon-sh/tenon/pkg/metrics"
	"github.com/tenon-sh/tenon/pkg/snapshot"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// ControllerName names the controller (in logs and metrics, and as the source of its events).
const ControllerName = "nodepool.static"

// Event reasons, on the NodePool.
const (
	// EventNodeLimitReached: limits.nodes stops the pool short of its replicas.
	EventNodeLimitReached = "NodeLimitReached"
	// EventNoInstanceType: no instance type the pool allows has an offering to launch.
	EventNoInstanceType = "NoCompatibleInstanceTypes"
)

// DefaultResync is the default of Options.Resync.
const DefaultResync = time.Minute

// Options tune the controller. A zero field takes its default.
type Options struct {
	// Resync is the longest a static NodePool goes without being reconciled (default 1m).
	Resync time.Duration
}

// Deps are what the controller works with.
type Deps struct {
	// Client writes NodeClaims. Register defaults it to the manager's client.
	Client client.Client
	// Reader reads NodeClaims, Nodes and Pods uncached, so a claim just created, or a node just
	// tainted by a disruption command, is counted.
	// Register defaults it to the manager's API reader; New to Client.
	Reader client.Reader
	// CloudProvider lists the pool's instance types and tells which NodePools it serves.
	CloudProvider cloudprovider.CloudProvider
	// Filter, when set, marks offerings that recently failed as unavailable.
	Filter interface {
		Apply([]*catalog.InstanceType) []*catalog.InstanceType
	}
	// Clock tells the time (default: the real clock).
	Clock clock.Clock
	// Recorder records events on NodePools (default: drops them).
	Recorder record.EventRecorder
}

// Controller keeps static NodePools at their replicas.
type Controller struct {
	deps Deps
	opts Options
}

var _ reconcile.Reconciler = (*Controller)(nil)

// New returns the controller.
func New(deps Deps, opts Options) (*Controller, error) {
	if deps.Client == nil {
		return nil, errors.New("static: Deps.Client is required")
	}
	if deps.CloudProvider == nil {
		return nil, errors.New("static: Deps.CloudProvider is required")
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
	if opts.Resync <= 0 {
		opts.Resync = DefaultResync
	}
	return &Controller{deps: deps, opts: opts}, nil
}

// Register builds the controller on mgr.
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
	static := predicate.NewPredicateFuncs(func(o client.Object) bool {
		np, ok := o.(*apisv1.NodePool)
		return ok && np.IsStatic()
	})
	becameReady := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return !ready(e.ObjectOld.(*apisv1.NodePool)) && ready(e.ObjectNew.(*apisv1.NodePool))
	}}
	return builder.ControllerManagedBy(mgr).
		Named(ControllerName).
		For(&apisv1.NodePool{}, builder.WithPredicates(static, predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, becameReady))).
		Watches(&apisv1.NodeClaim{}, handler.EnqueueRequestsFromMapFunc(poolOf)).
		Complete(recovery.Reconciler(ControllerName, deps.Client, deps.Recorder, func() client.Object { return &apisv1.NodePool{} }, c))
}

// poolOf maps a NodeClaim to its NodePool.
func poolOf(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[apisv1.NodePoolLabelKey]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: name}}}
}

// ready reports whether the NodePool's Ready condition is True.
func ready(np *apisv1.NodePool) bool {
	c := np.GetCondition(apisv1.ConditionTypeReady)
	return c != nil && c.Status == metav1.ConditionTrue
}

// Reconcile creates or deletes one static NodePool's NodeClaims to reach spec.replicas. Claims
// being deleted do not count. While a disruption command is replacing one of the pool's nodes
// (its node carries karpenter.sh/disrupted and its claim is not yet deleted), the pool is left
// as it is: the command taints the candidate, then creates its replacement, then deletes the
// candidate, and a count taken between two of those steps would buy an extra claim or delete
// the replacement as surplus. Once the candidate's claim is deleted (or the command rolled back
// and the taint is gone) the count is right again.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	np := &apisv1.NodePool{}
	if err := c.deps.Client.Get(ctx, req.NamespacedName, np); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !np.DeletionTimestamp.IsZero() || !np.IsStatic() || !cloudprovider.IsManagedNodePool(c.deps.CloudProvider, np) {
		return reconcile.Result{}, nil
	}
	list := &apisv1.NodeClaimList{}
	if err := c.deps.Reader.List(ctx, list, client.MatchingLabels{apisv1.NodePoolLabelKey: np.Name}); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing the nodeclaims of nodepool %s: %w", np.Name, err)
	}
	// The nodes are read after the claims: a taint a command set before it created a
	// replacement the list shows is seen here.
	var active []*apisv1.NodeClaim
	for i := range list.Items {
		nc := &list.Items[i]
		if !nc.DeletionTimestamp.IsZero() {
			continue
		}
		disrupted, err := c.disrupted(ctx, nc)
		if err != nil {
			return reconcile.Result{}, err
		}
		if disrupted {
			return reconcile.Result{RequeueAfter: DisruptionPoll}, nil
		}
		active = append(active, nc)
	}
	want := int(*np.Spec.Replicas)
	var err error
	switch {
	case len(active) < want && !ready(np):
		// A NodePool that is not Ready (invalid, or its NodeClass not ready) cannot launch;
		// the status controller says why. It is reconciled again when it becomes Ready.
	case len(active) < want:
		err = c.scaleUp(ctx, np, want-len(active), len(list.Items))
	case len(active) > want:
		err = c.scaleDown(ctx, np, active, len(active)-want)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: c.opts.Resync}, nil
}

// DisruptionPoll is how soon a static NodePool is looked at again while a disruption command
// is replacing one of its nodes.
const DisruptionPoll = time.Second

// disrupted reports whether the claim's node carries karpenter.sh/disrupted: a disruption
// command (drift, expiration) has chosen it and is launching its replacement.
func (c *Controller) disrupted(ctx context.Context, nc *apisv1.NodeClaim) (bool, error) {
	if nc.Status.NodeName == "" {
		return false, nil
	}
	node := &corev1.Node{}
	if err := c.deps.Reader.Get(ctx, client.ObjectKey{Name: nc.Status.NodeName}, node); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("reading node %s of nodeclaim %s: %w", nc.Status.NodeName, nc.Name, err)
	}
	return slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&apisv1.DisruptedNoScheduleTaint) }), nil
}

// scaleUp creates up to n NodeClaims, as many as limits.nodes leaves over the pool's total
// claims.
func (c *Controller) scaleUp(ctx context.Context, np *apisv1.NodePool, n, total int) error {
	if q, ok := np.Spec.Limits[apisv1.ResourceNodes]; ok {
		room := int(q.Value()) - total
		if room < n {
			c.deps.Recorder.Eventf(np, corev1.EventTypeWarning, EventNodeLimitReached,
				"limits.nodes %s leaves room for %d of the %d NodeClaims needed to reach %d replicas", q.String(), max(room, 0), n, *np.Spec.Replicas)
			n = room
		}
	}
	if n <= 0 {
		return nil
	}
	claim, err := c.template(ctx, np)
	if err != nil || claim == nil {
		return err
	}
	log.FromContext(ctx).Info("creating nodeclaims to reach the replicas of a static nodepool", "nodepool", np.Name, "count", n, "replicas", *np.Spec.Replicas)
	var errs []error
	for range n {
		nc := snapshot.NodeClaim(claim, np)
		if err := c.deps.Client.Create(ctx, nc); err != nil {
			errs = append(errs, fmt.Errorf("creating a nodeclaim of static nodepool %s: %w", np.Name, err))
			continue
		}
		metrics.NodeClaimsCreated.WithLabelValues(metrics.ReasonProvisioned, np.Name, "false").Inc()
	}
	return errors.Join(errs...)
}

// template is the empty claim the pool launches: its requirements and its instance types that
// have an offering they allow, cheapest first. It is nil, with an event, when there are none.
func (c *Controller) template(ctx context.Context, np *apisv1.NodePool) (*solver.Claim, error) {
	its, err := c.deps.CloudProvider.GetInstanceTypes(ctx, np)
	if err != nil {
		return nil, fmt.Errorf("instance types of nodepool %s: %w", np.Name, err)
	}
	if c.deps.Filter != nil {
		its = c.deps.Filter.Apply(its)
	}
	cl, err := snapshot.StaticClaim(np, its)
	if err == nil && cl == nil {
		c.deps.Recorder.Eventf(np, corev1.EventTypeWarning, EventNoInstanceType,
			"no instance type of the %d the NodeClass offers has an available offering the requirements allow", len(its))
	}
	return cl, err
}

// scaleDown deletes the n of active cheapest to remove.
func (c *Controller) scaleDown(ctx context.Context, np *apisv1.NodePool, active []*apisv1.NodeClaim, n int) error {
	now := c.deps.Clock.Now()
	cs := make([]Candidate, len(active))
	for i, nc := range active {
		cs[i] = Candidate{Name: nc.Name, Launched: nc.Status.ProviderID != "", Created: nc.CreationTimestamp.Time}
		if nc.Status.NodeName == "" {
			continue
		}
		pods, err := index.PodsOnNode(ctx, c.deps.Client, nc.Status.NodeName)
		if err != nil {
			return fmt.Errorf("listing the pods of node %s: %w", nc.Status.NodeName, err)
		}
		for j := range pods {
			p := &pods[j]
			if termination.IsDaemonSetPod(p) || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			cs[i].Pods++
			if apisv1.PodDoNotDisrupt(p, now).Active {
				cs[i].DoNotDisrupt = true
			}
		}
	}
	log.FromContext(ctx).Info("deleting nodeclaims above the replicas of a static nodepool", "nodepool", np.Name, "count", n, "replicas", *np.Spec.Replicas)
	var errs []error
	for _, i := range ToRemove(cs, n) {
		if err := c.deps.Client.Delete(ctx, active[i]); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting nodeclaim %s of static nodepool %s: %w", active[i].Name, np.Name, err))
		}
	}
	return errors.Join(errs...)
}

package commitment

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
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
	tenonv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/tenon/v1alpha1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/commitment"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// ControllerName names the controller (in logs and metrics, and as the source of its events).
const ControllerName = "commitment"

// EventInvalid is the reason of the warning recorded on a Commitment that does not convert.
const EventInvalid = "CommitmentInvalid"

// Condition reasons of Active.
const (
	ReasonActive     = "Active"
	ReasonNotStarted = "NotStarted"
	ReasonEnded      = "Ended"
	ReasonInvalid    = "Invalid"
)

// Deps are what the controller needs.
type Deps struct {
	// Client reads Commitments and writes their status (default: the manager's).
	Client client.Client
	// Recorder receives EventInvalid (default: the manager's).
	Recorder record.EventRecorder
	// Store receives the valid commitments. Required.
	Store *Store
	// Cloud serves the instance types the fleet is priced with (overlays applied, not the
	// commitments: the decorated provider's inner one). Required.
	Cloud cloudprovider.CloudProvider
	// Clock defaults to the real one.
	Clock clock.Clock
}

// Options tune the controller.
type Options struct {
	// Resync is the longest between two evaluations (default 30s): commitments start and end,
	// and the fleet changes, without a change to a Commitment.
	Resync metav1.Duration
}

// Controller keeps the Store and the Commitments' status current.
type Controller struct {
	deps Deps
	opts Options
	last []commitment.Commitment
	warn map[types.UID]int64 // generation last warned about
}

var key = reconcile.Request{NamespacedName: types.NamespacedName{Name: "commitments"}}

// New returns a controller.
func New(deps Deps, opts Options) (*Controller, error) {
	if deps.Store == nil || deps.Cloud == nil || deps.Client == nil {
		return nil, fmt.Errorf("commitment controller: Store, Cloud and Client are required")
	}
	if deps.Clock == nil {
		deps.Clock = clock.RealClock{}
	}
	if opts.Resync.Duration <= 0 {
		opts.Resync.Duration = resync
	}
	return &Controller{deps: deps, opts: opts, warn: map[types.UID]int64{}}, nil
}

// Register adds the controller to the manager: it reconciles on any change to a Commitment and
// every Resync.
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
	err = builder.ControllerManagedBy(mgr).
		Named(ControllerName).
		Watches(&tenonv1alpha1.Commitment{}, all, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(recovery.Reconciler(ControllerName, deps.Client, deps.Recorder, func() client.Object { return &tenonv1alpha1.Commitment{} }, c))
	return c, err
}

// Reconcile converts every Commitment, stores the valid ones, and writes status and metrics.
func (c *Controller) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	var list tenonv1alpha1.CommitmentList
	if err := c.deps.Client.List(ctx, &list); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing commitments: %w", err)
	}
	vcpu := c.vcpuLookup(ctx)
	var valid []commitment.Commitment
	invalid := map[string]error{}
	for i := range list.Items {
		o := &list.Items[i]
		cm, err := commitment.FromAPI(o, vcpu)
		if err != nil {
			invalid[o.Name] = err
			if c.warn[o.UID] != o.Generation {
				c.warn[o.UID] = o.Generation
				c.deps.Recorder.Eventf(o, corev1.EventTypeWarning, EventInvalid, "not applied: %v", err)
			}
			continue
		}
		valid = append(valid, cm)
	}
	if !reflect.DeepEqual(valid, c.last) {
		c.last = valid
		c.deps.Store.set(valid)
	}
	book := c.deps.Store.Book()
	fleet := c.deps.Store.fleet(ctx, c.deps.Cloud)
	var bill commitment.Bill
	var util []float64
	at := map[string]int{}
	if book != nil {
		bill = book.Bill(fleet)
		util = book.Utilization(bill)
		for i, cm := range book.Commitments() {
			at[cm.Name] = i
		}
	} else {
		for _, in := range fleet {
			bill.Overage += in.Price
			if in.OnDemand {
				bill.OnDemand += in.Price
			}
		}
		bill.Total = bill.Overage
	}
	setMetrics(book, bill, util)
	now := c.deps.Clock.Now()
	var errs []error
	for i := range list.Items {
		o := &list.Items[i]
		stored := o.DeepCopy()
		cond := metav1.Condition{Type: tenonv1alpha1.ConditionActive, ObservedGeneration: o.Generation}
		o.Status.Kind = kindOf(o)
		o.Status.Utilization, o.Status.CoveredInstances = "", 0
		switch j, active := at[o.Name]; {
		case invalid[o.Name] != nil:
			cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonInvalid, invalid[o.Name].Error()
		case active:
			cond.Status, cond.Reason = metav1.ConditionTrue, ReasonActive
			o.Status.Utilization = strconv.FormatFloat(100*util[j], 'f', 1, 64) + "%"
			o.Status.CoveredInstances = int32(bill.Covered[j])
		case o.Spec.Start != nil && now.Before(o.Spec.Start.Time):
			cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonNotStarted, "starts at "+o.Spec.Start.UTC().Format("2006-01-02T15:04:05Z")
		default:
			cond.Status, cond.Reason = metav1.ConditionFalse, ReasonEnded
		}
		meta.SetStatusCondition(&o.Status.Conditions, cond)
		if equality.Semantic.DeepEqual(stored.Status, o.Status) {
			continue
		}
		if err := c.deps.Client.Status().Patch(ctx, o, client.MergeFrom(stored)); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("status of commitment %s: %w", o.Name, err))
		}
	}
	log.FromContext(ctx).V(1).Info("evaluated commitments", "commitments", len(list.Items), "invalid", len(invalid),
		"fleet", len(fleet), "fixed", bill.Fixed, "overage", bill.Overage)
	if len(errs) > 0 {
		return reconcile.Result{}, errors.Join(errs...)
	}
	return reconcile.Result{RequeueAfter: c.opts.Resync.Duration}, nil
}

// vcpuLookup finds an instance type's vCPUs among the NodePools' instance types.
func (c *Controller) vcpuLookup(ctx context.Context) func(string) int64 {
	var byName map[string]int64
	return func(name string) int64 {
		if byName == nil {
			byName = map[string]int64{}
			for _, np := range c.deps.Store.cluster.NodePools() {
				its, err := c.deps.Cloud.GetInstanceTypes(ctx, np)
				if err != nil {
					continue
				}
				for _, it := range its {
					byName[it.Name] = it.Capacity[scheduling.CPU] / 1000
				}
			}
		}
		return byName[name]
	}
}

// kindOf names what the commitment bought.
func kindOf(o *tenonv1alpha1.Commitment) string {
	switch {
	case o.Spec.ComputeSavingsPlan != nil:
		return "ComputeSavingsPlan"
	case o.Spec.EC2InstanceSavingsPlan != nil:
		return "EC2InstanceSavingsPlan"
	case o.Spec.ReservedInstances != nil:
		return "ReservedInstances"
	}
	return ""
}

package simulated

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-sh/tenon/internal/recovery"
	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
)

// Reasons of the SimNodeClass Ready condition.
const (
	ReasonResolved    = "Resolved"
	ReasonInvalidSpec = "InvalidSpec"
)

// NodeClassReconciler keeps each SimNodeClass's status up to date: Ready is True when the spec
// resolves against the catalog (False with the reason otherwise), and zones lists the zones it
// sells in. Resolving also configures the provider's model with the new generation.
type NodeClassReconciler struct {
	p *Provider
}

var _ reconcile.Reconciler = (*NodeClassReconciler)(nil)

// NodeClassReconciler returns the provider's SimNodeClass status reconciler.
func (p *Provider) NodeClassReconciler() *NodeClassReconciler { return &NodeClassReconciler{p: p} }

// Reconcile resolves one SimNodeClass and writes its status if it changed.
func (r *NodeClassReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	nc := &simv1alpha1.SimNodeClass{}
	if err := r.p.client.Get(ctx, req.NamespacedName, nc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !nc.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	r.p.mu.Lock()
	rc := r.p.useClass(nc)
	r.p.mu.Unlock()

	orig := nc.DeepCopy()
	cond := metav1.Condition{
		Type: simv1alpha1.ConditionTypeReady, Status: metav1.ConditionTrue, Reason: ReasonResolved,
		Message: "the spec resolves against the catalog", ObservedGeneration: nc.Generation,
		LastTransitionTime: metav1.NewTime(r.p.clock()),
	}
	nc.Status.Zones = rc.zones
	if rc.err != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonInvalidSpec, rc.err.Error()
		var nr *cloudprovider.NodeClassNotReadyError
		if errors.As(rc.err, &nr) {
			cond.Message = nr.Reason
		}
	}
	apimeta.SetStatusCondition(&nc.Status.Conditions, cond)
	if equality.Semantic.DeepEqual(orig.Status, nc.Status) {
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, r.p.client.Status().Patch(ctx, nc, client.MergeFrom(orig))
}

// SetupWithManager adds the provider's SimNodeClass status controller and its Kubelet to a
// manager. Build the provider with the manager's client and, as Reader, its API reader.
func (p *Provider) SetupWithManager(mgr ctrl.Manager) error {
	err := ctrl.NewControllerManagedBy(mgr).
		Named("simnodeclass").
		For(&simv1alpha1.SimNodeClass{}).
		Complete(recovery.Reconciler("simnodeclass", mgr.GetClient(), mgr.GetEventRecorderFor("simnodeclass"), //nolint:staticcheck // as the other controllers record
			func() client.Object { return &simv1alpha1.SimNodeClass{} }, p.NodeClassReconciler()))
	if err != nil {
		return err
	}
	if err := p.watchRecords(mgr); err != nil {
		return err
	}
	return mgr.Add(p.Kubelet())
}

// watchRecords tells the provider when a SimInstance is deleted.
func (p *Provider) watchRecords(mgr ctrl.Manager) error {
	inf, err := mgr.GetCache().GetInformer(context.Background(), &simv1alpha1.SimInstance{})
	if err != nil {
		return fmt.Errorf("watching SimInstances: %w", err)
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
		if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if o, ok := obj.(client.Object); ok {
			p.recordDeleted(o.GetName())
		}
	}})
	return err
}

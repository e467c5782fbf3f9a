package nodeclass

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// ReasonWaitingOnNodeClaims is the reason of the event of a deleted class whose NodeClaims
// are still there.
const ReasonWaitingOnNodeClaims = "WaitingOnNodeClaimTermination"

// ReasonCleanupFailed is the reason of the Warning event of a deleted class whose clean-up
// (its instance profile, Options.OnDelete) failed; it is retried with backoff.
const ReasonCleanupFailed = "CleanupFailed"

// finalize deletes what tenon made for a class being deleted, once no NodeClaim names it, and
// removes the finalizer.
func (c *Controller) finalize(ctx context.Context, log logr.Logger, nc *awsv1.EC2NodeClass) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(nc, TerminationFinalizer) {
		return reconcile.Result{}, nil
	}
	claims := &apisv1.NodeClaimList{}
	if err := c.opts.Client.List(ctx, claims); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing NodeClaims: %w", err)
	}
	var names []string
	for i := range claims.Items {
		if namesClass(&claims.Items[i], nc.Name) {
			names = append(names, claims.Items[i].Name)
		}
	}
	if len(names) > 0 {
		slices.Sort(names)
		shown := names
		if len(shown) > 5 {
			shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(names)-5))
		}
		c.opts.Recorder.Event(nc, corev1.EventTypeNormal, ReasonWaitingOnNodeClaims, "Waiting on NodeClaim termination for "+strings.Join(shown, ", "))
		// The deletion of a claim requeues the class; this is the backstop.
		return reconcile.Result{RequeueAfter: c.opts.RequeueInterval}, nil
	}
	if err := c.deleteProfile(ctx, log, nc); err != nil {
		c.opts.Recorder.Event(nc, corev1.EventTypeWarning, ReasonCleanupFailed, err.Error())
		return reconcile.Result{}, err
	}
	if c.opts.OnDelete != nil {
		if err := c.opts.OnDelete(ctx, nc); err != nil {
			err = fmt.Errorf("cleaning up after EC2NodeClass %s: %w", nc.Name, err)
			c.opts.Recorder.Event(nc, corev1.EventTypeWarning, ReasonCleanupFailed, err.Error())
			return reconcile.Result{}, err
		}
	}
	stored := nc.DeepCopy()
	controllerutil.RemoveFinalizer(nc, TerminationFinalizer)
	if err := c.opts.Client.Patch(ctx, nc, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) {
			return reconcile.Result{Requeue: true}, nil
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	return reconcile.Result{}, nil
}

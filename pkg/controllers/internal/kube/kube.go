package kube

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// ConflictRequeue is how soon a reconcile that lost a race (a conflict on an optimistic-lock
// patch) runs again, by which time the cache has the winner's write.
const ConflictRequeue = 100 * time.Millisecond

// PatchNodeClaim writes what changed between orig and claim: labels and annotations with a
// merge patch, then the status with a merge patch guarded by the resourceVersion, so that
// conditions another controller wrote since orig was read are not overwritten (the caller
// gets a conflict and tries again). When both change, the metadata patch is guarded by orig's
// resourceVersion too, and the status patch by the one that patch returns: a write by someone
// else before either is a conflict, never a status lost under a version this call made. A
// metadata-only change stays unguarded (a merge of labels and annotations loses nothing).
// claim is updated with what the API server returns. Finalizers are left to AddFinalizer and
// RemoveFinalizer.
func PatchNodeClaim(ctx context.Context, c client.Client, orig, claim *apisv1.NodeClaim) error {
	statusChanged := !equality.Semantic.DeepEqual(orig.Status, claim.Status)
	base := orig
	if !equality.Semantic.DeepEqual(orig.Labels, claim.Labels) || !equality.Semantic.DeepEqual(orig.Annotations, claim.Annotations) {
		patch := client.MergeFrom(orig)
		if statusChanged {
			patch = client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})
		}
		status := claim.Status.DeepCopy()
		if err := c.Patch(ctx, claim, patch); err != nil {
			return err
		}
		// The response carries the stored status; keep the one being written.
		claim.Status = *status
		base = orig.DeepCopy()
		claim.ObjectMeta.DeepCopyInto(&base.ObjectMeta)
	}
	if !statusChanged {
		return nil
	}
	return c.Status().Patch(ctx, claim, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}

// RemoveFinalizer removes finalizer from obj with a merge patch guarded by obj's
// resourceVersion (finalizers are a list: an unguarded patch could drop another writer's). A
// missing finalizer or object is not an error.
func RemoveFinalizer(ctx context.Context, c client.Client, obj client.Object, finalizer string) error {
	if !controllerutil.ContainsFinalizer(obj, finalizer) {
		return nil
	}
	orig := obj.DeepCopyObject().(client.Object)
	controllerutil.RemoveFinalizer(obj, finalizer)
	return client.IgnoreNotFound(c.Patch(ctx, obj, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})))
}

// AddFinalizer adds finalizer to obj with a merge patch guarded by obj's resourceVersion.
func AddFinalizer(ctx context.Context, c client.Client, obj client.Object, finalizer string) error {
	if controllerutil.ContainsFinalizer(obj, finalizer) {
		return nil
	}
	orig := obj.DeepCopyObject().(client.Object)
	controllerutil.AddFinalizer(obj, finalizer)
	return c.Patch(ctx, obj, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
}

// Result turns a reconcile's outcome into what controller-runtime expects: a conflict (a lost
// race, not a failure) becomes a quiet requeue after ConflictRequeue, a vanished object ends
// the reconcile, and any other error is returned for a rate-limited retry.
func Result(res reconcile.Result, err error) (reconcile.Result, error) {
	switch {
	case err == nil:
		return res, nil
	case apierrors.IsConflict(err):
		return reconcile.Result{RequeueAfter: ConflictRequeue}, nil
	case apierrors.IsNotFound(err):
		return reconcile.Result{}, nil
	default:
		return reconcile.Result{}, err
	}
}

// Soonest returns the shorter positive requeue of a and b (zero when neither is positive).
func Soonest(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	default:
		return min(a, b)
	}
}

// DefaultPositive sets *v to def when it is zero or negative: the rule every controller option
// that counts or times something follows.
func DefaultPositive[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

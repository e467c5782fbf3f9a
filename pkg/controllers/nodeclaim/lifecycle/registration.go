package lifecycle

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/index"
)

// Condition reasons of registration.
const (
	ReasonRegistered   = "Registered"
	ReasonNodeNotFound = "NodeNotFound"
)

// lastApplied is kubectl's annotation; it describes the claim, not the Node.
const lastApplied = corev1.LastAppliedConfigAnnotation

// register finds the claim's Node, syncs it and marks the claim Registered. Without a Node yet
// the claim says so and waits: the Node's creation triggers the next reconcile.
func (c *Controller) register(ctx context.Context, claim *apisv1.NodeClaim) error {
	now := c.deps.Clock.Now()
	node, err := index.NodeForProviderID(ctx, c.deps.Client, claim.Status.ProviderID)
	if err != nil {
		return err
	}
	if node == nil {
		claim.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeRegistered, Status: metav1.ConditionUnknown,
			Reason: ReasonNodeNotFound, Message: fmt.Sprintf("no Node with provider ID %s yet", claim.Status.ProviderID)}, now)
		return nil
	}
	if c.deps.BeforeRegister != nil && slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool {
		return t.MatchTaint(&apisv1.UnregisteredNoExecuteTaint)
	}) {
		c.deps.BeforeRegister(ctx, claim, node)
		// The hook may have waited: the Node read before it is likely stale by now (its
		// status is written every few seconds), and the patch below, guarded by its
		// resourceVersion, would fail and leave the taint on for another reconcile.
		if node, err = index.NodeForProviderID(ctx, c.deps.Client, claim.Status.ProviderID); err != nil || node == nil {
			return cmp.Or(err, fmt.Errorf("node with provider ID %s gone during registration", claim.Status.ProviderID))
		}
	}
	orig := node.DeepCopy()
	SyncNode(claim, node)
	if !equality.Semantic.DeepEqual(orig, node) {
		// Taints and finalizers are lists a merge patch replaces whole: guard against a
		// concurrent writer (the node lifecycle controller removes not-ready meanwhile).
		if err := c.deps.Client.Patch(ctx, node, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return err
		}
	}
	claim.Status.NodeName = node.Name
	claim.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeRegistered, Status: metav1.ConditionTrue, Reason: ReasonRegistered}, now)
	return nil
}

// SyncNode makes node what a registered Node of claim is: the claim's labels and annotations
// (kubectl's last-applied configuration excepted) with karpenter.sh/registered=true, the
// claim's taints added where missing and karpenter.sh/unregistered removed, the termination
// finalizer, and the claim as an owner. Startup taints are not touched.
func SyncNode(claim *apisv1.NodeClaim, node *corev1.Node) {
	if node.Labels == nil {
		node.Labels = map[string]string{}
	}
	for k, v := range claim.Labels {
		node.Labels[k] = v
	}
	node.Labels[apisv1.NodeRegisteredLabelKey] = "true"
	for k, v := range claim.Annotations {
		if k == lastApplied {
			continue
		}
		if node.Annotations == nil {
			node.Annotations = map[string]string{}
		}
		node.Annotations[k] = v
	}
	node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool {
		return t.MatchTaint(&apisv1.UnregisteredNoExecuteTaint)
	})
	for _, want := range claim.Spec.Taints {
		if !slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&want) }) {
			node.Spec.Taints = append(node.Spec.Taints, want)
		}
	}
	controllerutil.AddFinalizer(node, apisv1.TerminationFinalizer)
	owner := metav1.OwnerReference{
		APIVersion: apisv1.SchemeGroupVersion.String(), Kind: apisv1.NodeClaimKind,
		Name: claim.Name, UID: claim.UID, BlockOwnerDeletion: ptr.To(true),
	}
	if !slices.ContainsFunc(node.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == claim.UID }) {
		node.OwnerReferences = append(node.OwnerReferences, owner)
	}
}

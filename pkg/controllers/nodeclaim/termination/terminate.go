package termination

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/index"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/kube"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/metrics"
	tmetrics "github.com/tenon-sh/tenon/pkg/metrics"
)

// Condition and event reasons of termination.
const (
	ReasonDraining            = "Draining"
	ReasonDrained             = "Drained"
	ReasonGracePeriodExpired  = "TerminationGracePeriodExpired"
	ReasonInstanceTerminating = "InstanceTerminating"
	ReasonTerminated          = "Terminated"
	ReasonNodeDeleted         = "NodeDeleted"
)

// terminate advances the termination of claim, changing it in memory. done means the instance
// is gone and the Node deleted and released: what is left is removing the claim's finalizer.
func (c *Controller) terminate(ctx context.Context, claim *apisv1.NodeClaim) (requeue time.Duration, done bool, err error) {
	if claim.Status.ProviderID == "" {
		// Never launched (or its launch was never recorded: garbage collection reclaims such
		// an instance).
		return 0, true, nil
	}
	node, err := index.NodeForProviderID(ctx, c.deps.Client, claim.Status.ProviderID)
	if err != nil {
		return 0, false, err
	}
	deadline := c.deadline(claim)
	now := c.now()
	if !claim.IsTrue(apisv1.ConditionTypeDrained) {
		if node != nil {
			if err := c.taint(ctx, node); err != nil {
				return 0, false, err
			}
			plan, err := c.drain(ctx, claim, node, deadline)
			if err != nil {
				return 0, false, err
			}
			if !plan.Drained() {
				claim.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeDrained, Status: metav1.ConditionFalse, Reason: ReasonDraining, Message: plan.Message()}, now)
				return c.opts.DrainPollInterval, false, nil
			}
			if plan.Expired && len(plan.Waiting) > 0 {
				c.deps.Recorder.Eventf(claim, corev1.EventTypeWarning, ReasonGracePeriodExpired,
					"terminationGracePeriod ran out with %d pods left on Node %s; terminating anyway", len(plan.Waiting), node.Name)
			}
		}
		claim.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeDrained, Status: metav1.ConditionTrue, Reason: ReasonDrained}, now)
	}
	if node != nil {
		wait, err := c.awaitVolumes(ctx, claim, node, deadline, now)
		if err != nil || wait > 0 {
			return wait, false, err
		}
	}
	gone, err := c.terminateInstance(ctx, claim)
	if err != nil || !gone {
		return c.opts.InstancePollInterval, false, err
	}
	if node != nil {
		if node.DeletionTimestamp.IsZero() {
			if err := client.IgnoreNotFound(c.deps.Client.Delete(ctx, node, client.Preconditions{UID: &node.UID})); err != nil {
				return 0, false, err
			}
		}
		if err := kube.RemoveFinalizer(ctx, c.deps.Client, node, apisv1.TerminationFinalizer); err != nil {
			return 0, false, err
		}
		nodeTerminated(node)
	}
	return 0, true, nil
}

// finish removes the claim's finalizer, which lets it go, and records the termination.
func (c *Controller) finish(ctx context.Context, claim *apisv1.NodeClaim) error {
	if err := kube.RemoveFinalizer(ctx, c.deps.Client, claim, apisv1.TerminationFinalizer); err != nil {
		return err
	}
	pool := metrics.NodePool(claim)
	tmetrics.NodeClaimsTerminated.WithLabelValues(pool, claim.Labels[apisv1.CapacityTypeLabelKey], claim.Labels[apisv1.LabelZone]).Inc()
	metrics.TerminationDuration.WithLabelValues(pool).Observe(c.deps.Clock.Since(claim.DeletionTimestamp.Time).Seconds())
	c.deps.Recorder.Eventf(claim, corev1.EventTypeNormal, ReasonTerminated, "instance %s terminated", claim.Status.ProviderID)
	c.evictions.GC()
	return nil
}

// deadline returns the claim's termination time (nil when it has neither a
// terminationGracePeriod nor the karpenter.sh/node-termination-time annotation) and records it
// in that annotation. It is the earlier of the annotation already there (which another
// controller may set before deleting the claim, such as the interruption controller with a
// notice's deadline) and the deletion timestamp plus the terminationGracePeriod.
func (c *Controller) deadline(claim *apisv1.NodeClaim) *time.Time {
	var t *time.Time
	if v, ok := claim.Annotations[apisv1.NodeTerminationTimestampAnnotationKey]; ok {
		if at, err := time.Parse(time.RFC3339, v); err == nil {
			t = &at
		}
	}
	if claim.Spec.TerminationGracePeriod == nil {
		return t
	}
	grace := claim.DeletionTimestamp.Add(claim.Spec.TerminationGracePeriod.Duration)
	if t != nil && !grace.Before(*t) {
		return t
	}
	if claim.Annotations == nil {
		claim.Annotations = map[string]string{}
	}
	claim.Annotations[apisv1.NodeTerminationTimestampAnnotationKey] = grace.Format(time.RFC3339)
	return &grace
}

// taint keeps new pods off the Node.
func (c *Controller) taint(ctx context.Context, node *corev1.Node) error {
	if slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&apisv1.DisruptedNoScheduleTaint) }) {
		return nil
	}
	orig := node.DeepCopy()
	node.Spec.Taints = append(node.Spec.Taints, apisv1.DisruptedNoScheduleTaint)
	return c.deps.Client.Patch(ctx, node, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
}

// terminateInstance deletes the claim's instance and reports whether the provider no longer
// has it.
func (c *Controller) terminateInstance(ctx context.Context, claim *apisv1.NodeClaim) (bool, error) {
	err := c.deps.CloudProvider.Delete(ctx, claim)
	if cloudprovider.IsNodeClaimNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("deleting instance %s: %w", claim.Status.ProviderID, err)
	}
	if claim.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeInstanceTerminating, Status: metav1.ConditionTrue, Reason: ReasonInstanceTerminating}, c.now()) {
		c.deps.Recorder.Eventf(claim, corev1.EventTypeNormal, ReasonInstanceTerminating, "terminating instance %s", claim.Status.ProviderID)
	}
	_, err = c.deps.CloudProvider.Get(ctx, claim.Status.ProviderID)
	if cloudprovider.IsNodeClaimNotFound(err) {
		return true, nil
	}
	return false, err
}

// nodeDeleted handles a Node being deleted that holds the termination finalizer.
func (c *Controller) nodeDeleted(ctx context.Context, node *corev1.Node) (time.Duration, error) {
	claims, err := index.NodeClaimsForProviderID(ctx, c.deps.Client, node.Spec.ProviderID)
	if err != nil {
		return 0, err
	}
	if len(claims) == 0 {
		if node.Spec.ProviderID != "" {
			orphan := &apisv1.NodeClaim{Status: apisv1.NodeClaimStatus{ProviderID: node.Spec.ProviderID}}
			if err := cloudprovider.IgnoreNodeClaimNotFound(c.deps.CloudProvider.Delete(ctx, orphan)); err != nil {
				return 0, fmt.Errorf("deleting instance %s of Node %s: %w", node.Spec.ProviderID, node.Name, err)
			}
		}
		if err := kube.RemoveFinalizer(ctx, c.deps.Client, node, apisv1.TerminationFinalizer); err != nil {
			return 0, err
		}
		nodeTerminated(node)
		return 0, nil
	}
	for i := range claims {
		claim := &claims[i]
		if !claim.DeletionTimestamp.IsZero() {
			continue
		}
		if err := client.IgnoreNotFound(c.deps.Client.Delete(ctx, claim, client.Preconditions{UID: &claim.UID})); err != nil {
			return 0, err
		}
		tmetrics.Disrupted(claim, tmetrics.ReasonNodeDeleted, "", 0)
		c.deps.Recorder.Eventf(claim, corev1.EventTypeNormal, ReasonNodeDeleted, "Node %s is being deleted; deleting its NodeClaim", node.Name)
	}
	return 0, nil
}

// nodeTerminated counts a Node whose termination finalizer tenon removed.
func nodeTerminated(node *corev1.Node) {
	tmetrics.NodesTerminated.WithLabelValues(node.Labels[apisv1.NodePoolLabelKey], node.Labels[apisv1.LabelZone]).Inc()
}

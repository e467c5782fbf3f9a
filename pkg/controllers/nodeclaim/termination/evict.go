package termination

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/index"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/metrics"
)

// Event reasons on pods.
const (
	ReasonEvicted         = "Evicted"
	ReasonEvictionBlocked = "EvictionBlocked"
	ReasonDeleted         = "DeletedForTermination"
	// ReasonInvalidDoNotDisrupt (Warning): the pod's karpenter.sh/do-not-disrupt value is
	// neither "true" nor a positive duration, so it does not protect the pod from the drain.
	ReasonInvalidDoNotDisrupt = "InvalidDoNotDisruptAnnotation"
)

// drain runs one pass of draining node: it deletes the pods the deadline has caught up with
// and evicts the next group, and returns the plan it followed.
func (c *Controller) drain(ctx context.Context, claim *apisv1.NodeClaim, node *corev1.Node, deadline *time.Time) (DrainPlan, error) {
	list, err := index.PodsOnNode(ctx, c.deps.Client, node.Name)
	if err != nil {
		return DrainPlan{}, err
	}
	pods := make([]*corev1.Pod, len(list))
	for i := range list {
		pods[i] = &list[i]
	}
	now := c.now()
	for _, pod := range pods {
		if err := apisv1.PodDoNotDisrupt(pod, now).Err; err != nil {
			c.deps.Recorder.Eventf(pod, corev1.EventTypeWarning, ReasonInvalidDoNotDisrupt, "%v; the drain of NodeClaim %s ignores it", err, claim.Name)
		}
	}
	plan := PlanDrain(pods, now, deadline, c.opts.StuckPodTimeout)
	for _, d := range plan.Delete {
		if err := c.deletePod(ctx, claim, d); err != nil {
			return plan, err
		}
	}
	for _, pod := range plan.Evict {
		c.evict(ctx, claim, pod, now)
	}
	return plan, nil
}

// evict asks the Eviction API to evict pod, unless a refusal of it is still backing off. A
// refusal (HTTP 429: a PodDisruptionBudget does not allow it) is recorded as an event the
// first time and retried after a growing delay.
func (c *Controller) evict(ctx context.Context, claim *apisv1.NodeClaim, pod *corev1.Pod, now time.Time) {
	key := string(pod.UID)
	if c.evictions.IsInBackOffSinceUpdate(key, now) {
		return
	}
	eviction := &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}},
	}
	err := c.deps.Client.SubResource("eviction").Create(ctx, pod, eviction)
	switch {
	case err == nil:
		metrics.Evictions.WithLabelValues(metrics.EvictionEvicted).Inc()
		c.evictions.DeleteEntry(key)
		c.deps.Recorder.Eventf(pod, corev1.EventTypeNormal, ReasonEvicted, "evicted: NodeClaim %s is terminating", claim.Name)
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		// Gone already, or replaced by a pod of the same name (the UID precondition failed).
		c.evictions.DeleteEntry(key)
	case apierrors.IsTooManyRequests(err):
		metrics.Evictions.WithLabelValues(metrics.EvictionBlocked).Inc()
		if c.evictions.Get(key) == 0 {
			c.deps.Recorder.Eventf(pod, corev1.EventTypeWarning, ReasonEvictionBlocked, "cannot evict for the termination of NodeClaim %s: %v", claim.Name, err)
			c.deps.Recorder.Eventf(claim, corev1.EventTypeWarning, ReasonEvictionBlocked, "cannot evict pod %s/%s: %v", pod.Namespace, pod.Name, err)
		}
		c.evictions.Next(key, now)
	default:
		metrics.Evictions.WithLabelValues(metrics.EvictionError).Inc()
		log.FromContext(ctx).Error(err, "evicting a pod", "pod", client.ObjectKeyFromObject(pod))
		c.evictions.Next(key, now)
	}
}

// deletePod deletes a pod whose node's termination time has come (or is within the pod's own
// grace period).
func (c *Controller) deletePod(ctx context.Context, claim *apisv1.NodeClaim, d PodDeletion) error {
	err := c.deps.Client.Delete(ctx, d.Pod, client.GracePeriodSeconds(d.GracePeriodSeconds), client.Preconditions{UID: &d.Pod.UID})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		return err
	}
	metrics.PodDeletions.Inc()
	c.deps.Recorder.Eventf(d.Pod, corev1.EventTypeWarning, ReasonDeleted,
		"deleted with a %ds grace period: the terminationGracePeriod of NodeClaim %s runs out", d.GracePeriodSeconds, claim.Name)
	return nil
}

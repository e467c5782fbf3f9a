package interruption

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/index"
	"github.com/tenon-sh/tenon/pkg/metrics"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// handle acts on one message and returns what it did. An error means the message must be
// delivered again.
func (c *Controller) handle(ctx context.Context, m cloudprovider.InterruptionMessage) (string, error) {
	log := c.deps.Log.WithValues("message", m.ID, "kind", m.Kind, "providerID", m.ProviderID)
	if !known(m.Kind) || m.ProviderID == "" {
		log.Error(fmt.Errorf("message %q of kind %q about instance %q: %s", m.ID, m.Kind, m.ProviderID, invalid(m)),
			"dropping an invalid interruption message")
		return ActionInvalid, nil
	}
	claim, node, err := c.lookup(ctx, m.ProviderID)
	if err != nil {
		return "", err
	}
	if claim == nil {
		log.Info("no NodeClaim has the instance; dropping the message")
		return ActionUnmanaged, nil
	}
	if !cloudprovider.IsManaged(c.deps.Queue, claim) {
		log.Info("the instance's NodeClaim is of a NodeClass kind this provider does not serve; dropping the message",
			"nodeclaim", claim.Name, "nodeClassRef", claim.Spec.NodeClassRef)
		return ActionUnmanaged, nil
	}
	if m.Kind == cloudprovider.RebalanceRecommendation && !c.opts.ReplaceOnRebalance {
		c.record(claim, node, corev1.EventTypeNormal, m.Kind, fmt.Sprintf(
			"rebalance recommendation for instance %s (NodeClaim %s, %s): its risk of interruption is raised; no action (replacement on rebalance is off)",
			m.ProviderID, claim.Name, nodeNoun(node)))
		return ActionNone, nil
	}
	return ActionDrain, c.drain(ctx, m, claim, node)
}

func invalid(m cloudprovider.InterruptionMessage) string {
	if m.ProviderID == "" {
		return "it names no instance"
	}
	return "its kind is unknown"
}

// lookup finds the NodeClaim and the Node of an instance. The mirror is asked first; when it
// has no claim, the cache behind it is asked too, since the mirror's handlers may lag the
// cache for a moment (at start above all) and an instance must not be dropped as unknown for
// that.
func (c *Controller) lookup(ctx context.Context, providerID string) (*apisv1.NodeClaim, *corev1.Node, error) {
	claim, node := c.deps.Cluster.ByProviderID(providerID)
	if claim == nil {
		claims, err := index.NodeClaimsForProviderID(ctx, c.deps.Client, providerID)
		if err != nil {
			return nil, nil, fmt.Errorf("looking up the NodeClaim of %s: %w", providerID, err)
		}
		for i := range claims {
			if claim == nil || claims[i].CreationTimestamp.Before(&claim.CreationTimestamp) {
				claim = &claims[i]
			}
		}
	}
	if claim != nil && node == nil {
		n, err := index.NodeForProviderID(ctx, c.deps.Client, providerID)
		if err != nil {
			return nil, nil, fmt.Errorf("looking up the Node of %s: %w", providerID, err)
		}
		node = n
	}
	return claim, node, nil
}

// drain taints the node, marks it and its claim for deletion, sets the claim's termination
// time and deletes the claim. A spot interruption also marks the offering unavailable.
func (c *Controller) drain(ctx context.Context, m cloudprovider.InterruptionMessage, claim *apisv1.NodeClaim, node *corev1.Node) error {
	now := c.deps.Clock.Now()
	if m.Kind == cloudprovider.SpotInterruption && c.deps.Unavailable != nil {
		if o, ok := cloudprovider.LaunchedOffering(claim); ok && o.CapacityType == apisv1.CapacityTypeSpot {
			// First, so that the replacement planned below is not bought in the same place.
			c.deps.Unavailable.MarkUnavailable(o, string(m.Kind), c.opts.UnavailableTTL)
		}
	}
	names := []string{claim.Name}
	if node != nil {
		names = append(names, node.Name)
	}
	var marked []string
	for _, n := range names {
		if !c.deps.Cluster.IsMarkedForDeletion(n) {
			marked = append(marked, n)
		}
	}
	// Marked before tainted: the disruption controller's orphan cleanup leaves a marked node's
	// taint alone, and a taint it saw before the mark would be removed.
	c.deps.Cluster.MarkForDeletion(names...)
	if node != nil {
		if err := c.taint(ctx, node); err != nil {
			c.deps.Cluster.UnmarkForDeletion(marked...)
			return fmt.Errorf("tainting Node %s: %w", node.Name, err)
		}
	}
	if c.deps.Provisioner != nil {
		c.deps.Provisioner.Trigger()
	}
	by, hasDeadline := c.terminationTime(m, now)
	var deadline *time.Time
	if hasDeadline {
		deadline = &by
	}
	deleted, err := c.deleteClaim(ctx, claim, deadline)
	if err != nil {
		// The mark goes with the failure, so that nothing is planned twice for a node that is
		// not going; the redelivered message marks it again.
		c.deps.Cluster.UnmarkForDeletion(marked...)
		return fmt.Errorf("deleting NodeClaim %s: %w", claim.Name, err)
	}
	if deleted {
		pods := 0
		if node != nil {
			for _, p := range c.deps.Cluster.PodsOn(node.Name) {
				if solver.Reschedulable(p) {
					pods++
				}
			}
		}
		metrics.Disrupted(claim, metrics.SnakeCase(kindLabel(m.Kind)), "", pods)
	}
	msg := fmt.Sprintf("%s of instance %s (NodeClaim %s, %s)", describe(m.Kind), m.ProviderID, claim.Name, nodeNoun(node))
	if !m.Deadline.IsZero() {
		msg += ", due " + m.Deadline.UTC().Format(time.RFC3339)
	}
	msg += ": tainted the node, planning its pods elsewhere, draining it"
	if hasDeadline {
		msg += " by " + by.UTC().Format(time.RFC3339)
	}
	if groups := c.wholeGroupsOn(node); len(groups) > 0 {
		msg += fmt.Sprintf("; it runs pods of podgroup %s, disrupted only whole (disruptionMode All): the cloud takes this instance, so only it is replaced, and the group's other nodes are left running",
			strings.Join(groups, ", "))
	}
	c.record(claim, node, eventType(m.Kind), m.Kind, msg)
	return nil
}

// terminationTime is when the drain of an interrupted node must be over: DrainLead before
// the notice's deadline, or the deadline itself when that leaves no time, or now when the
// deadline has passed or the instance is already stopped. A rebalance recommendation, and a
// notice without a deadline, has none.
func (c *Controller) terminationTime(m cloudprovider.InterruptionMessage, now time.Time) (time.Time, bool) {
	if m.Kind == cloudprovider.RebalanceRecommendation {
		return time.Time{}, false
	}
	if m.Deadline.IsZero() {
		if m.Kind == cloudprovider.InstanceStopped {
			return now, true
		}
		return time.Time{}, false
	}
	t := m.Deadline.Add(-c.opts.DrainLead)
	if !t.After(now) {
		t = m.Deadline
	}
	if t.Before(now) {
		t = now
	}
	return t, true
}

// taint adds karpenter.sh/disrupted:NoSchedule to the Node unless it has it. The patch is
// guarded by the resourceVersion (taints are one list); a conflict is retried on a fresh read.
func (c *Controller) taint(ctx context.Context, node *corev1.Node) error {
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		cur := &corev1.Node{}
		if err := c.deps.Client.Get(ctx, client.ObjectKeyFromObject(node), cur); err != nil {
			return err
		}
		if cur.UID != node.UID || slices.ContainsFunc(cur.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&apisv1.DisruptedNoScheduleTaint) }) {
			return nil
		}
		orig := cur.DeepCopy()
		cur.Spec.Taints = append(cur.Spec.Taints, apisv1.DisruptedNoScheduleTaint)
		return c.deps.Client.Patch(ctx, cur, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	})
	return client.IgnoreNotFound(err)
}

// deleteClaim sets the claim's karpenter.sh/node-termination-time to deadline (when there is
// one and the claim has no earlier time) and deletes the claim unless it is being deleted. A
// claim that is gone, or replaced by another of the same name, is not an error.
func (c *Controller) deleteClaim(ctx context.Context, claim *apisv1.NodeClaim, deadline *time.Time) (deleted bool, _ error) {
	cur := &apisv1.NodeClaim{}
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if err := c.deps.Client.Get(ctx, client.ObjectKeyFromObject(claim), cur); err != nil {
			return err
		}
		if cur.UID != claim.UID || deadline == nil || !earlier(*deadline, cur.Annotations[apisv1.NodeTerminationTimestampAnnotationKey]) {
			return nil
		}
		orig := cur.DeepCopy()
		if cur.Annotations == nil {
			cur.Annotations = map[string]string{}
		}
		cur.Annotations[apisv1.NodeTerminationTimestampAnnotationKey] = deadline.UTC().Format(time.RFC3339)
		return c.deps.Client.Patch(ctx, cur, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil || cur.UID != claim.UID || !cur.DeletionTimestamp.IsZero() {
		return false, client.IgnoreNotFound(err)
	}
	err = c.deps.Client.Delete(ctx, cur, client.Preconditions{UID: &cur.UID})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return false, nil // gone, or replaced by a claim of the same name
	}
	return err == nil, err
}

// earlier reports whether t is before the time an annotation value holds (an absent or
// unreadable value holds none).
func earlier(t time.Time, annotation string) bool {
	if annotation == "" {
		return true
	}
	at, err := time.Parse(time.RFC3339, annotation)
	return err != nil || t.Truncate(time.Second).Before(at)
}

// record records an event on the claim and, when there is one, the node.
func (c *Controller) record(claim *apisv1.NodeClaim, node *corev1.Node, eventtype string, kind cloudprovider.InterruptionKind, msg string) {
	c.deps.Recorder.Event(claim, eventtype, string(kind), msg)
	if node != nil {
		c.deps.Recorder.Event(node, eventtype, string(kind), msg)
	}
}

func eventType(k cloudprovider.InterruptionKind) string {
	if k == cloudprovider.RebalanceRecommendation {
		return corev1.EventTypeNormal
	}
	return corev1.EventTypeWarning
}

func describe(k cloudprovider.InterruptionKind) string {
	switch k {
	case cloudprovider.SpotInterruption:
		return "spot interruption"
	case cloudprovider.ScheduledMaintenance:
		return "scheduled maintenance"
	case cloudprovider.InstanceStopped:
		return "stop"
	case cloudprovider.RebalanceRecommendation:
		return "rebalance recommendation"
	}
	return string(k)
}

func nodeNoun(node *corev1.Node) string {
	if node == nil {
		return "no Node yet"
	}
	return "Node " + node.Name
}

// wholeGroupsOn names the PodGroups disrupted only whole that have pods on the node, sorted.
func (c *Controller) wholeGroupsOn(node *corev1.Node) []string {
	if node == nil {
		return nil
	}
	whole := c.deps.Cluster.WholeGroups()
	var out []string
	for _, p := range c.deps.Cluster.PodsOn(node.Name) {
		if g := solver.GangOf(p); g != "" && slices.Contains(whole, g) && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	slices.Sort(out)
	return out
}

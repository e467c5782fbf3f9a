package termination

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/index"
)

// Reasons of the VolumesDetached condition and its events, as Karpenter names them.
const (
	ReasonVolumesDetached          = "VolumesDetached"
	ReasonAwaitingVolumeDetachment = "AwaitingVolumeDetachment"
	ReasonGracePeriodElapsed       = "TerminationGracePeriodElapsed"
)

// awaitVolumes decides whether the instance may be deleted as far as volumes go: once the
// drain is over, the Node's VolumeAttachments of persistent volumes must be gone (so that a
// StatefulSet's EBS volume is detached before its instance goes and can attach to the pod's new
// node), unless they belong to pods the drain leaves on the node. It sets the VolumesDetached
// condition: True when none is left, Unknown (AwaitingVolumeDetachment, with an event on the
// Node) while it waits, False (TerminationGracePeriodElapsed, with a warning on the claim) when
// the termination time passed first; the wait has no other end, as in Karpenter. wait is how
// long to wait before looking again, zero when the instance may go.
func (c *Controller) awaitVolumes(ctx context.Context, claim *apisv1.NodeClaim, node *corev1.Node, deadline *time.Time, now time.Time) (wait time.Duration, err error) {
	if cond := claim.GetCondition(apisv1.ConditionTypeVolumesDetached); cond != nil && cond.Status != metav1.ConditionUnknown {
		return 0, nil
	}
	pending, err := c.pendingVolumeAttachments(ctx, node, now)
	if err != nil {
		return 0, err
	}
	if len(pending) == 0 {
		claim.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeVolumesDetached, Status: metav1.ConditionTrue, Reason: ReasonVolumesDetached}, now)
		return 0, nil
	}
	names := strings.Join(pending[:min(len(pending), 5)], ", ")
	if len(pending) > 5 {
		names += fmt.Sprintf(" and %d more", len(pending)-5)
	}
	if deadline != nil && now.After(*deadline) {
		if claim.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeVolumesDetached, Status: metav1.ConditionFalse, Reason: ReasonGracePeriodElapsed,
			Message: "the termination time passed with VolumeAttachments left: " + names}, now) {
			c.deps.Recorder.Eventf(claim, corev1.EventTypeWarning, ReasonGracePeriodElapsed,
				"terminationGracePeriod ran out with %d VolumeAttachments left on Node %s (%s); terminating anyway", len(pending), node.Name, names)
		}
		return 0, nil
	}
	msg := fmt.Sprintf("waiting for %d VolumeAttachments to be deleted: %s", len(pending), names)
	claim.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeVolumesDetached, Status: metav1.ConditionUnknown, Reason: ReasonAwaitingVolumeDetachment, Message: msg}, now)
	c.deps.Recorder.Eventf(node, corev1.EventTypeNormal, ReasonAwaitingVolumeDetachment, "Node %s is %s", node.Name, msg)
	return c.opts.DrainPollInterval, nil
}

// pendingVolumeAttachments names, sorted, the VolumeAttachments on node that the termination
// waits for: those of a persistent volume, except the volumes of pods the drain does not wait
// for (DaemonSet and static pods, pods tolerating the disrupted taint, pods stuck terminating),
// which stay attached until the instance goes.
func (c *Controller) pendingVolumeAttachments(ctx context.Context, node *corev1.Node, now time.Time) ([]string, error) {
	list := &storagev1.VolumeAttachmentList{}
	if err := c.deps.Client.List(ctx, list, client.MatchingFields{index.VolumeAttachmentNodeName: node.Name}); err != nil {
		return nil, fmt.Errorf("listing VolumeAttachments of Node %s: %w", node.Name, err)
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	pods, err := index.PodsOnNode(ctx, c.deps.Client, node.Name)
	if err != nil {
		return nil, err
	}
	var staying []string // persistent volumes of pods the drain leaves
	for i := range pods {
		pod := &pods[i]
		if WaitsFor(pod, now, c.opts.StuckPodTimeout) {
			continue
		}
		for _, v := range pod.Spec.Volumes {
			if v.PersistentVolumeClaim == nil {
				continue
			}
			pvc := &corev1.PersistentVolumeClaim{}
			err := c.deps.Client.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: v.PersistentVolumeClaim.ClaimName}, pvc)
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("reading PersistentVolumeClaim %s/%s: %w", pod.Namespace, v.PersistentVolumeClaim.ClaimName, err)
			}
			if pvc.Spec.VolumeName != "" {
				staying = append(staying, pvc.Spec.VolumeName)
			}
		}
	}
	var out []string
	for _, va := range list.Items {
		pv := va.Spec.Source.PersistentVolumeName
		if pv == nil || slices.Contains(staying, *pv) {
			continue
		}
		out = append(out, va.Name)
	}
	slices.Sort(out)
	return out, nil
}

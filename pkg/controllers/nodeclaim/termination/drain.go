package termination

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// The drain order, as Karpenter documents it: non-critical pods are evicted first and
// critical ones (system-cluster-critical, system-node-critical) only once the non-critical are
// gone, so that the services they depend on outlive them. DaemonSet pods, which Karpenter
// evicts last of all, are not evicted: they stay until the Node goes, which is last.
const (
	groupNonCritical = iota
	groupCritical
	groups
)

// Kubernetes' system-critical priority classes and the priority from which a pod counts as
// critical.
const (
	systemClusterCritical  = "system-cluster-critical"
	systemNodeCritical     = "system-node-critical"
	systemCriticalPriority = 2_000_000_000
)

// PodDeletion is a pod to delete directly, with the grace period it gets.
type PodDeletion struct {
	Pod                *corev1.Pod
	GracePeriodSeconds int64
}

// DrainPlan is what one pass of a drain does.
type DrainPlan struct {
	// Evict are the pods to evict now: those of the first group (in drain order) that still
	// has pods, minus the ones terminating already and those annotated do-not-disrupt.
	Evict []*corev1.Pod
	// Delete are the pods the terminationGracePeriod deadline leaves no more than their own
	// grace period: they are deleted, PodDisruptionBudgets and do-not-disrupt notwithstanding.
	Delete []PodDeletion
	// Waiting are the pods the drain waits for (evicted, terminating, blocked or protected).
	Waiting []*corev1.Pod
	// Expired says the deadline has passed: the drain is over whatever is left.
	Expired bool
}

// Drained reports whether the node may go: no pod is waited for, or the deadline passed.
func (p *DrainPlan) Drained() bool { return len(p.Waiting) == 0 || p.Expired }

// Message summarises what the drain waits for.
func (p *DrainPlan) Message() string {
	if p.Drained() {
		return ""
	}
	names := make([]string, 0, min(len(p.Waiting), 5))
	for _, pod := range p.Waiting[:min(len(p.Waiting), 5)] {
		names = append(names, pod.Namespace+"/"+pod.Name)
	}
	more := ""
	if len(p.Waiting) > len(names) {
		more = fmt.Sprintf(" and %d more", len(p.Waiting)-len(names))
	}
	return fmt.Sprintf("waiting for %d pods to leave: %s%s", len(p.Waiting), strings.Join(names, ", "), more)
}

// PlanDrain decides one pass of draining a node with these pods at now. deadline, when not
// nil, is the node's termination time (deletion + terminationGracePeriod); stuckAfter is how
// long past its deletion timestamp a terminating pod is still waited for.
func PlanDrain(pods []*corev1.Pod, now time.Time, deadline *time.Time, stuckAfter time.Duration) DrainPlan {
	plan := DrainPlan{Expired: deadline != nil && !now.Before(*deadline)}
	var evictable [groups][]*corev1.Pod
	var present [groups]bool
	for _, pod := range pods {
		if !WaitsFor(pod, now, stuckAfter) {
			continue
		}
		plan.Waiting = append(plan.Waiting, pod)
		if deadline != nil {
			if d, ok := expiring(pod, now, *deadline); ok {
				plan.Delete = append(plan.Delete, d)
				continue
			}
		}
		if IsDoNotDisrupt(pod, now) {
			continue // waited for, never evicted, and holds up no group
		}
		g := groupOf(pod)
		present[g] = true
		if pod.DeletionTimestamp == nil {
			evictable[g] = append(evictable[g], pod)
		}
	}
	for g := range groups {
		if present[g] {
			plan.Evict = evictable[g]
			break
		}
	}
	return plan
}

// expiring returns the deletion of pod when the deadline leaves it no more than its own
// grace period, unless it is terminating already and will be gone by the deadline.
func expiring(pod *corev1.Pod, now, deadline time.Time) (PodDeletion, bool) {
	grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	if now.Before(deadline.Add(-time.Duration(grace) * time.Second)) {
		return PodDeletion{}, false
	}
	if pod.DeletionTimestamp != nil && !pod.DeletionTimestamp.After(deadline) {
		return PodDeletion{}, false
	}
	remaining := int64(math.Ceil(deadline.Sub(now).Seconds()))
	return PodDeletion{Pod: pod, GracePeriodSeconds: max(0, min(grace, remaining))}, true
}

// WaitsFor reports whether a drain waits for pod to leave. It does not for pods that have
// finished (Succeeded or Failed), DaemonSet pods, static (mirror) pods, pods that tolerate the
// karpenter.sh/disrupted taint (as NoSchedule or NoExecute) and so may stay on a node being
// disrupted, and pods terminating for longer than stuckAfter past their deletion timestamp
// (whose kubelet is gone).
func WaitsFor(pod *corev1.Pod, now time.Time, stuckAfter time.Duration) bool {
	switch {
	case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
		return false
	case IsDaemonSetPod(pod), IsMirrorPod(pod), ToleratesDisruption(pod):
		return false
	case pod.DeletionTimestamp != nil && now.Sub(pod.DeletionTimestamp.Time) > stuckAfter:
		return false
	}
	return true
}

// IsDaemonSetPod reports whether a DaemonSet controls pod.
func IsDaemonSetPod(pod *corev1.Pod) bool {
	for _, r := range pod.OwnerReferences {
		if r.Controller != nil && *r.Controller && r.Kind == "DaemonSet" && strings.HasPrefix(r.APIVersion, "apps/") {
			return true
		}
	}
	return false
}

// IsMirrorPod reports whether pod is the API server's mirror of a static pod: the kubelet
// owns it and the API cannot remove it.
func IsMirrorPod(pod *corev1.Pod) bool {
	if _, ok := pod.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return true
	}
	return slices.ContainsFunc(pod.OwnerReferences, func(r metav1.OwnerReference) bool { return r.Kind == "Node" && r.APIVersion == "v1" })
}

// ToleratesDisruption reports whether pod tolerates the karpenter.sh/disrupted taint with
// effect NoSchedule or NoExecute.
func ToleratesDisruption(pod *corev1.Pod) bool {
	for _, effect := range []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute} {
		taint := corev1.Taint{Key: apisv1.DisruptedTaintKey, Effect: effect}
		for i := range pod.Spec.Tolerations {
			if pod.Spec.Tolerations[i].ToleratesTaint(logr.Discard(), &taint, false) {
				return true
			}
		}
	}
	return false
}

// IsDoNotDisrupt reports whether pod's karpenter.sh/do-not-disrupt annotation protects it at
// now ("true", or a duration since the pod started that has not run out; see
// apisv1.PodDoNotDisrupt): it is not evicted, and the drain waits for it to finish or for its
// protection to run out, until the terminationGracePeriod does.
func IsDoNotDisrupt(pod *corev1.Pod, now time.Time) bool {
	return apisv1.PodDoNotDisrupt(pod, now).Active
}

// IsCritical reports whether pod belongs to the system-critical priority classes.
func IsCritical(pod *corev1.Pod) bool {
	switch pod.Spec.PriorityClassName {
	case systemClusterCritical, systemNodeCritical:
		return true
	}
	return pod.Spec.Priority != nil && *pod.Spec.Priority >= systemCriticalPriority
}

func groupOf(pod *corev1.Pod) int {
	if IsCritical(pod) {
		return groupCritical
	}
	return groupNonCritical
}

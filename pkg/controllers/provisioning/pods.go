package provisioning

import (
	corev1 "k8s.io/api/core/v1"
)

// IsProvisionable reports whether a pod is one the provisioner should find room for: not bound,
// not finished or being deleted, marked Unschedulable by kube-scheduler, not nominated to a node
// by kube-scheduler's preemption, not a DaemonSet or static (mirror) pod, and scheduled by one of
// schedulers.
func IsProvisionable(p *corev1.Pod, schedulers []string) bool {
	if p.Spec.NodeName != "" || p.DeletionTimestamp != nil || p.Status.NominatedNodeName != "" {
		return false
	}
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return false
	}
	if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return false
	}
	for _, r := range p.OwnerReferences {
		if r.Kind == "DaemonSet" {
			return false
		}
	}
	if len(schedulers) > 0 {
		name := p.Spec.SchedulerName
		if name == "" {
			name = corev1.DefaultSchedulerName
		}
		found := false
		for _, s := range schedulers {
			found = found || s == name
		}
		if !found {
			return false
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}

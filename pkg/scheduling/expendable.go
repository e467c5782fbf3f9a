package scheduling

import corev1 "k8s.io/api/core/v1"

// DefaultExpendableCutoff is the default of --expendable-pods-priority-cutoff, Cluster
// Autoscaler's: pods of a priority below it are expendable.
const DefaultExpendableCutoff int32 = -10

// Priority returns a pod's priority: spec.priority, which admission resolves from its
// PriorityClass, 0 when unset.
func Priority(p *corev1.Pod) int32 {
	if p.Spec.Priority == nil {
		return 0
	}
	return *p.Spec.Priority
}

// Expendable reports whether a pod's priority is below cutoff: tenon buys no capacity for an
// expendable pod (it runs in the room other pods leave, and kube-scheduler preempts it first),
// and a node whose only pods are expendable counts as empty.
func Expendable(p *corev1.Pod, cutoff int32) bool { return Priority(p) < cutoff }

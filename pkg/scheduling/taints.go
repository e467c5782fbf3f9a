package scheduling

import (
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
)

// Toleration comparisons (Gt, Lt) are accepted: the API server only admits such tolerations where
// kube-scheduler honours them.
const tolerationComparisons = true

// Tolerates reports whether tolerations tolerate taint.
func Tolerates(tolerations []corev1.Toleration, taint *corev1.Taint) bool {
	for i := range tolerations {
		if tolerations[i].ToleratesTaint(logr.Discard(), taint, tolerationComparisons) {
			return true
		}
	}
	return false
}

// UntoleratedTaint returns the first taint that keeps a pod with these tolerations off a node
// (effect NoSchedule or NoExecute, not tolerated), or nil. PreferNoSchedule taints never keep a
// pod off a node.
func UntoleratedTaint(tolerations []corev1.Toleration, taints []corev1.Taint) *corev1.Taint {
	for i := range taints {
		t := &taints[i]
		if t.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !Tolerates(tolerations, t) {
			return t
		}
	}
	return nil
}

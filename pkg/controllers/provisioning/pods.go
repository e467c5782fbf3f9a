package provisioning

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/tenon-sh/tenon/pkg/controllers/internal/solverinput"
)

// IsProvisionable reports whether a pod is one the provisioner should find room for: not bound,
// not finished or being deleted, marked Unschedulable by kube-scheduler, not nominated to a node
// by kube-scheduler's preemption, not a DaemonSet or static (mirror) pod, and scheduled by one of
// schedulers.
func IsProvisionable(p *corev1.Pod, schedulers []string) bool {
	return solverinput.IsProvisionable(p, schedulers)
}

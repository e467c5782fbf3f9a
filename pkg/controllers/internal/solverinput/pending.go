package solverinput

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/snapshot"
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

// Rejected is a pending pod that cannot be planned for, and why.
type Rejected struct {
	Pod *corev1.Pod
	Err error
}

// Pending returns the backlog the provisioner plans for now: the provisionable pods not
// promised to a NodeClaim (the snapshot has them there) and the pods of nodes marked for
// deletion, each with its volumes' topology as required node
// affinity. Pods that cannot be planned for (they select a NodePool that does not exist, or a
// volume claim or StorageClass is missing) come back as rejected, with the reason; an error
// reading the API server is returned as the reason too, so one pod never hides the rest.
// Expendable pods (priority below the cutoff) come back apart: no capacity is bought for them.
func (s *Source) Pending(ctx context.Context, pools map[string]*apisv1.NodePool) (valid []*corev1.Pod, rejected []Rejected, expendable []*corev1.Pod) {
	var pending []*corev1.Pod
	// Pods promised to a NodeClaim are held by it in the snapshot (state.Cluster.Promise).
	promised := s.Cluster.Promised()
	for _, pod := range s.Cluster.Pods() {
		if promised(pod) {
			continue
		}
		if IsProvisionable(pod, s.Schedulers) || s.nominatedToNoNode(pod) {
			pending = append(pending, pod)
		}
	}
	pending = append(pending, s.Cluster.PodsToReschedule()...)
	cutoff := s.ExpendableCutoff()
	for _, pod := range pending {
		if scheduling.Expendable(pod, cutoff) {
			expendable = append(expendable, pod)
			continue
		}
		p, err := s.validate(ctx, pod, pools)
		if err != nil {
			rejected = append(rejected, Rejected{Pod: pod, Err: err})
			continue
		}
		valid = append(valid, p)
	}
	return valid, rejected, expendable
}

// nominatedToNoNode reports whether a pod would be provisionable but for a nominated node the
// cluster does not have (a nomination outlived by its node), or one tenon made that has gone
// stale (the pod did not fit there): it needs room again.
func (s *Source) nominatedToNoNode(p *corev1.Pod) bool {
	nnn := p.Status.NominatedNodeName
	if nnn == "" {
		return false
	}
	cp := *p
	cp.Status.NominatedNodeName = ""
	if !IsProvisionable(&cp, s.Schedulers) {
		return false
	}
	if s.StaleNomination != nil && s.StaleNomination(p) {
		return true
	}
	for _, n := range s.Cluster.Nodes() {
		if n.Name == nnn {
			return false
		}
	}
	return true
}

// ExpendableCutoff returns the priority below which pods are expendable.
func (s *Source) ExpendableCutoff() int32 {
	if s.ExpendablePriorityCutoff == nil {
		return scheduling.DefaultExpendableCutoff
	}
	return *s.ExpendablePriorityCutoff
}

// validate returns the pod to plan for (with its volumes' topology as node affinity) or why it
// cannot be planned for.
func (s *Source) validate(ctx context.Context, pod *corev1.Pod, pools map[string]*apisv1.NodePool) (*corev1.Pod, error) {
	if name, ok := pod.Spec.NodeSelector[apisv1.NodePoolLabelKey]; ok {
		if _, exists := pools[name]; !exists {
			return nil, fmt.Errorf("it selects nodepool %q, which does not exist", name)
		}
	}
	return snapshot.PendingPod(pod, storage{ctx, s.Reader})
}

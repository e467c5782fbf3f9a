package scheduling

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// PodNodeRequirements returns the alternatives a pod accepts for its node: its node selector
// intersected with each term of its required node affinity (the terms are ORed). A pod without
// required node affinity has one alternative. A pod whose terms are all empty has none: it can
// match no node, as in kube-scheduler.
func PodNodeRequirements(pod *corev1.Pod) ([]Requirements, error) {
	var base Requirements
	for k, v := range pod.Spec.NodeSelector {
		// Aliases of one label ("beta.kubernetes.io/arch", "kubernetes.io/arch") are intersected.
		base = base.Add(In(NormalizeKey(k), v))
	}
	aff := pod.Spec.Affinity
	if aff == nil || aff.NodeAffinity == nil || aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return []Requirements{base}, nil
	}
	terms := aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	out := make([]Requirements, 0, len(terms))
	for i, term := range terms {
		reqs, ok, err := FromNodeSelectorTerm(term)
		if err != nil {
			return nil, fmt.Errorf("pod %s/%s: required node affinity term %d: %w", pod.Namespace, pod.Name, i, err)
		}
		if ok {
			out = append(out, base.Intersect(reqs))
		}
	}
	return out, nil
}

// WeightedRequirements is one preferred node-affinity term and its weight.
type WeightedRequirements struct {
	Weight       int32
	Requirements Requirements
}

// PodPreferredNodeRequirements returns a pod's preferred node-affinity terms, heaviest first
// (stable for equal weights). Empty terms are dropped: they match no node.
func PodPreferredNodeRequirements(pod *corev1.Pod) ([]WeightedRequirements, error) {
	aff := pod.Spec.Affinity
	if aff == nil || aff.NodeAffinity == nil {
		return nil, nil
	}
	var out []WeightedRequirements
	for i, t := range aff.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		reqs, ok, err := FromNodeSelectorTerm(t.Preference)
		if err != nil {
			return nil, fmt.Errorf("pod %s/%s: preferred node affinity term %d: %w", pod.Namespace, pod.Name, i, err)
		}
		if ok {
			out = append(out, WeightedRequirements{Weight: t.Weight, Requirements: reqs})
		}
	}
	// Insertion sort keeps equal weights in manifest order; there are only a handful of terms.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Weight > out[j-1].Weight; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, nil
}

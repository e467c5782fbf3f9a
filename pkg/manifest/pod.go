package manifest

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"
)

// Built-in priority classes, which every API server has.
var systemPriorities = map[string]int32{
	"system-node-critical":    2000001000,
	"system-cluster-critical": 2000000000,
}

const (
	defaultNamespace          = metav1.NamespaceDefault
	defaultGracePeriodSeconds = 30
	// defaultTolerationSeconds is how long the DefaultTolerationSeconds admission plugin lets a
	// pod stay on a node that is not ready or unreachable.
	defaultTolerationSeconds = 300
)

// DefaultPod applies to pod, in place, what the API server sets when it creates a pod and that
// bears on where and whether the pod runs:
//
//   - metadata.namespace "default", status.phase Pending;
//   - each container's requests default to its limits where only limits are set, and
//     pod-level requests (spec.resources) default from the containers' requests and the
//     pod-level limits, as the PodLevelResources defaulting does;
//   - container ports default to protocol TCP and, on the host network, to a host port equal
//     to the container port;
//   - schedulerName default-scheduler, restartPolicy Always, terminationGracePeriodSeconds 30;
//   - priority and preemptionPolicy resolved from priorityClassName: the system classes, the
//     Set's PriorityClasses, or the Set's global default class (priority 0 without one); an
//     unknown class leaves them unset;
//   - for a pod naming one of the Set's RuntimeClasses, the class's overhead as the pod's, its
//     scheduling node selector merged into the pod's and its tolerations added (the RuntimeClass
//     admission plugin);
//   - NoExecute tolerations of node.kubernetes.io/not-ready and node.kubernetes.io/unreachable
//     for 300 seconds unless the pod tolerates them (the DefaultTolerationSeconds plugin);
//   - matchLabelKeys (and mismatchLabelKeys) merged into the label selectors of topology
//     spread constraints and pod (anti-)affinity terms, with the values of the pod's labels.
//
// DefaultPod is idempotent. s may be nil, which knows only the system priority classes.
func (s *Set) DefaultPod(pod *corev1.Pod) {
	if pod.Namespace == "" {
		pod.Namespace = defaultNamespace
	}
	if pod.Status.Phase == "" {
		pod.Status.Phase = corev1.PodPending
	}
	spec := &pod.Spec
	for i := range spec.InitContainers {
		defaultRequests(&spec.InitContainers[i].Resources)
	}
	for i := range spec.Containers {
		defaultRequests(&spec.Containers[i].Resources)
	}
	defaultPodLevelResources(pod)
	defaultPorts(spec.InitContainers, spec.HostNetwork)
	defaultPorts(spec.Containers, spec.HostNetwork)
	if spec.SchedulerName == "" {
		spec.SchedulerName = corev1.DefaultSchedulerName
	}
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptr.To[int64](defaultGracePeriodSeconds)
	}
	if spec.Priority == nil {
		s.defaultPriority(spec)
	}
	s.admitRuntimeClass(spec)
	defaultTolerations(spec)
	mergeLabelKeys(pod)
}

// defaultRequests sets the requests of resources that only have a limit to that limit.
func defaultRequests(r *corev1.ResourceRequirements) {
	if r.Limits == nil {
		return
	}
	if r.Requests == nil {
		r.Requests = corev1.ResourceList{}
	}
	for name, limit := range r.Limits {
		if _, ok := r.Requests[name]; !ok {
			r.Requests[name] = limit.DeepCopy()
		}
	}
}

// defaultPorts sets the protocol of ports to TCP and, on the host network, their host port to
// the container port.
func defaultPorts(containers []corev1.Container, hostNetwork bool) {
	for i := range containers {
		for j := range containers[i].Ports {
			p := &containers[i].Ports[j]
			if p.Protocol == "" {
				p.Protocol = corev1.ProtocolTCP
			}
			if hostNetwork && p.HostPort == 0 {
				p.HostPort = p.ContainerPort
			}
		}
	}
}

// defaultPodLevelResources defaults pod-level huge page limits from the containers' limits,
// then pod-level requests from the containers' requests (CPU and memory) and from pod-level
// limits.
func defaultPodLevelResources(pod *corev1.Pod) {
	r := pod.Spec.Resources
	if r == nil || len(r.Requests) == 0 && len(r.Limits) == 0 {
		return
	}
	containers := &corev1.Pod{Spec: corev1.PodSpec{Containers: pod.Spec.Containers, InitContainers: pod.Spec.InitContainers}}
	limits := r.Limits
	if limits == nil {
		limits = corev1.ResourceList{}
	}
	for name, q := range resourcehelper.AggregateContainerLimits(containers, resourcehelper.PodResourcesOptions{}) {
		if _, requested := r.Requests[name]; hugePages(name) && resourcehelper.IsSupportedPodLevelResource(name) && !requested {
			if _, ok := limits[name]; !ok {
				limits[name] = q
			}
		}
	}
	if len(limits) > 0 {
		r.Limits = limits
	}
	requests := r.Requests
	if requests == nil {
		requests = corev1.ResourceList{}
	}
	for name, q := range resourcehelper.AggregateContainerRequests(containers, resourcehelper.PodResourcesOptions{}) {
		if _, ok := requests[name]; !ok && resourcehelper.IsSupportedPodLevelResource(name) && !hugePages(name) {
			requests[name] = q
		}
	}
	for name, q := range r.Limits {
		if _, ok := requests[name]; !ok && resourcehelper.IsSupportedPodLevelResource(name) {
			requests[name] = q.DeepCopy()
		}
	}
	if len(requests) > 0 {
		r.Requests = requests
	}
}

// defaultPriority resolves the priority of a pod as the Priority admission plugin does.
func (s *Set) defaultPriority(spec *corev1.PodSpec) {
	var class *schedulingv1.PriorityClass
	if s != nil {
		for _, pc := range s.PriorityClasses {
			if spec.PriorityClassName == "" && pc.GlobalDefault && (class == nil || pc.Value < class.Value) ||
				spec.PriorityClassName != "" && pc.Name == spec.PriorityClassName {
				class = pc
			}
		}
	}
	lower := corev1.PreemptLowerPriority
	switch value, system := systemPriorities[spec.PriorityClassName]; {
	case system:
		spec.Priority, spec.PreemptionPolicy = ptr.To(value), &lower
	case class != nil:
		spec.PriorityClassName = class.Name
		policy := lower
		if class.PreemptionPolicy != nil {
			policy = *class.PreemptionPolicy
		}
		spec.Priority, spec.PreemptionPolicy = ptr.To(class.Value), &policy
	case spec.PriorityClassName == "":
		spec.Priority, spec.PreemptionPolicy = ptr.To[int32](0), &lower
	}
}

// defaultTolerations adds the tolerations the DefaultTolerationSeconds plugin adds.
func defaultTolerations(spec *corev1.PodSpec) {
	for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
		tolerated := slices.ContainsFunc(spec.Tolerations, func(t corev1.Toleration) bool {
			return (t.Key == key || t.Key == "") && (t.Effect == corev1.TaintEffectNoExecute || t.Effect == "")
		})
		if !tolerated {
			spec.Tolerations = append(spec.Tolerations, corev1.Toleration{
				Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute,
				TolerationSeconds: ptr.To[int64](defaultTolerationSeconds),
			})
		}
	}
}

// mergeLabelKeys merges matchLabelKeys and mismatchLabelKeys into label selectors, as the API
// server does when it creates a pod. A nil selector selects nothing and stays nil.
func mergeLabelKeys(pod *corev1.Pod) {
	for i := range pod.Spec.TopologySpreadConstraints {
		c := &pod.Spec.TopologySpreadConstraints[i]
		mergeKeys(c.LabelSelector, c.MatchLabelKeys, metav1.LabelSelectorOpIn, pod.Labels)
	}
	a := pod.Spec.Affinity
	if a == nil {
		return
	}
	var terms []*corev1.PodAffinityTerm
	collect := func(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm) {
		for i := range required {
			terms = append(terms, &required[i])
		}
		for i := range preferred {
			terms = append(terms, &preferred[i].PodAffinityTerm)
		}
	}
	if a.PodAffinity != nil {
		collect(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if a.PodAntiAffinity != nil {
		collect(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	for _, t := range terms {
		mergeKeys(t.LabelSelector, t.MatchLabelKeys, metav1.LabelSelectorOpIn, pod.Labels)
		mergeKeys(t.LabelSelector, t.MismatchLabelKeys, metav1.LabelSelectorOpNotIn, pod.Labels)
	}
}

func mergeKeys(sel *metav1.LabelSelector, keys []string, op metav1.LabelSelectorOperator, podLabels map[string]string) {
	if sel == nil {
		return
	}
	for _, key := range keys {
		value, ok := podLabels[key]
		if !ok {
			continue
		}
		req := metav1.LabelSelectorRequirement{Key: key, Operator: op, Values: []string{value}}
		present := slices.ContainsFunc(sel.MatchExpressions, func(r metav1.LabelSelectorRequirement) bool {
			return r.Key == req.Key && r.Operator == req.Operator && slices.Equal(r.Values, req.Values)
		})
		if !present {
			sel.MatchExpressions = append(sel.MatchExpressions, req)
		}
	}
}

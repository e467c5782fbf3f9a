package manifest

import (
	"reflect"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestJobPodCount(t *testing.T) {
	for _, c := range []struct {
		parallelism, completions *int32
		suspend                  bool
		want                     int
	}{
		{nil, nil, false, 1},
		{ptr.To[int32](4), nil, false, 4},
		{nil, ptr.To[int32](10), false, 1},
		{ptr.To[int32](4), ptr.To[int32](10), false, 4},
		{ptr.To[int32](10), ptr.To[int32](3), false, 3},
		{ptr.To[int32](0), nil, false, 0},
		{ptr.To[int32](4), nil, true, 0},
	} {
		spec := &batchv1.JobSpec{Parallelism: c.parallelism, Completions: c.completions, Suspend: &c.suspend}
		if got := jobPodCount(spec); got != c.want {
			t.Errorf("parallelism %v completions %v suspend %v: %d pods, want %d", ptrString(c.parallelism), ptrString(c.completions), c.suspend, got, c.want)
		}
	}
}

func ptrString(p *int32) any {
	if p == nil {
		return "nil"
	}
	return *p
}

func q(s string) resource.Quantity { return resource.MustParse(s) }

func TestDefaultPod(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a", "version": "2"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "a", Image: "a",
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{"cpu": q("100m")},
					Limits:   corev1.ResourceList{"cpu": q("1"), "memory": q("1Gi")},
				},
				Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
			}},
			InitContainers: []corev1.Container{{Name: "init", Image: "i", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": q("2")}}}},
			Tolerations:    []corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists}},
			Affinity: &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: corev1.PodAffinityTerm{
					TopologyKey: "zone", LabelSelector: &metav1.LabelSelector{}, MatchLabelKeys: []string{"version", "missing"},
				}}},
			}},
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", MatchLabelKeys: []string{"app"}}},
		},
	}
	(*Set)(nil).DefaultPod(pod)
	c := pod.Spec.Containers[0]
	if !reflect.DeepEqual(c.Resources.Requests, corev1.ResourceList{"cpu": q("100m"), "memory": q("1Gi")}) {
		t.Errorf("requests = %v: given requests kept, missing ones from limits", c.Resources.Requests)
	}
	if r := pod.Spec.InitContainers[0].Resources.Requests; r.Cpu().String() != "2" {
		t.Errorf("init container requests = %v", r)
	}
	if c.Ports[0].Protocol != corev1.ProtocolTCP || c.Ports[0].HostPort != 0 {
		t.Errorf("port = %+v: TCP, and no host port off the host network", c.Ports[0])
	}
	if pod.Namespace != "default" || pod.Spec.RestartPolicy != corev1.RestartPolicyAlways || *pod.Spec.TerminationGracePeriodSeconds != 30 ||
		*pod.Spec.Priority != 0 || *pod.Spec.PreemptionPolicy != corev1.PreemptLowerPriority {
		t.Errorf("defaults: %+v", pod.Spec)
	}
	var keys []string
	for _, tol := range pod.Spec.Tolerations {
		keys = append(keys, tol.Key)
	}
	if !reflect.DeepEqual(keys, []string{corev1.TaintNodeUnreachable, corev1.TaintNodeNotReady}) {
		t.Errorf("tolerations = %v: only not-ready is added, unreachable is already tolerated", keys)
	}
	term := pod.Spec.Affinity.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm
	if e := term.LabelSelector.MatchExpressions; len(e) != 1 || e[0].Key != "version" || e[0].Values[0] != "2" {
		t.Errorf("affinity matchLabelKeys merged into %+v", e)
	}
	if pod.Spec.TopologySpreadConstraints[0].LabelSelector != nil {
		t.Error("a nil label selector selects nothing and stays nil")
	}
	again := pod.DeepCopy()
	(*Set)(nil).DefaultPod(again)
	if !reflect.DeepEqual(pod, again) {
		t.Error("DefaultPod is not idempotent")
	}
}

func TestDefaultPodLevelResources(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		Resources: &corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": q("4"), "memory": q("8Gi")}},
		Containers: []corev1.Container{
			{Name: "a", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": q("1")}}},
			{Name: "b", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": q("500m")}}},
		},
	}}
	(*Set)(nil).DefaultPod(pod)
	if r := pod.Spec.Resources.Requests; r.Cpu().String() != "1500m" || r.Memory().String() != "8Gi" {
		t.Errorf("pod-level requests = %v: CPU from the containers, memory from the pod limit", r)
	}
}

func TestPriorityClasses(t *testing.T) {
	never := corev1.PreemptNever
	set := &Set{PriorityClasses: []*schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "batch"}, Value: 10, GlobalDefault: true, PreemptionPolicy: &never},
		{ObjectMeta: metav1.ObjectMeta{Name: "low-default"}, Value: 5, GlobalDefault: true},
		{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000},
	}}
	for class, want := range map[string]int32{"": 5, "high": 1000, "system-cluster-critical": 2000000000} {
		pod := &corev1.Pod{Spec: corev1.PodSpec{PriorityClassName: class}}
		set.DefaultPod(pod)
		if *pod.Spec.Priority != want {
			t.Errorf("class %q: priority %d, want %d", class, *pod.Spec.Priority, want)
		}
		if class == "" && pod.Spec.PriorityClassName != "low-default" {
			t.Errorf("the lowest global default class is named on the pod: %q", pod.Spec.PriorityClassName)
		}
	}
	pod := &corev1.Pod{Spec: corev1.PodSpec{PriorityClassName: "unknown"}}
	set.DefaultPod(pod)
	if pod.Spec.Priority != nil {
		t.Errorf("unknown class gave priority %d", *pod.Spec.Priority)
	}
}

func TestNames(t *testing.T) {
	long := strings.Repeat("a", 70)
	if got := generateName(long+"-", "x"); len(got) != 63 || !strings.HasPrefix(got, long[:58]) {
		t.Errorf("generateName of a long base = %q", got)
	}
	if got := indexedJobPodPrefix(long, 12); len(got) != 58 || !strings.HasSuffix(got, "-12-") {
		t.Errorf("indexedJobPodPrefix = %q", got)
	}
	n := newNamer()
	seen := map[string]bool{}
	for i := range 2000 {
		name := n.generate("ns", "w-", "same seed")
		if seen[name] {
			t.Fatalf("name %s given twice (draw %d)", name, i)
		}
		seen[name] = true
	}
	n.reserve("ns", generateName("x-", "seed#0"))
	if got := n.generate("ns", "x-", "seed"); got == generateName("x-", "seed#0") {
		t.Error("a reserved name was generated")
	}
	if uidFor("Pod", "a", "b") != uidFor("Pod", "a", "b") || uidFor("Pod", "a", "b") == uidFor("Pod", "a", "c") {
		t.Error("uids are not derived from the object's identity")
	}
}

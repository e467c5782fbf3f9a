package solver

import (
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

var (
	awsOnce sync.Once
	awsCat  *catalog.Catalog
	awsErr  error
)

// aws returns the embedded us-east-1 catalog.
func aws(t testing.TB) *catalog.Catalog {
	t.Helper()
	awsOnce.Do(func() { awsCat, awsErr = catalog.Load("us-east-1") })
	if awsErr != nil {
		t.Fatal(awsErr)
	}
	return awsCat
}

// types picks named instance types from the catalog.
func types(t testing.TB, names ...string) []*catalog.InstanceType {
	t.Helper()
	var out []*catalog.InstanceType
	for _, n := range names {
		it, ok := aws(t).Get(n)
		if !ok {
			t.Fatalf("no instance type %s", n)
		}
		out = append(out, it)
	}
	return out
}

func onDemand(reqs ...scheduling.Requirement) scheduling.Requirements {
	return scheduling.NewRequirements(append(reqs, scheduling.In(apisv1.CapacityTypeLabelKey, apisv1.CapacityTypeOnDemand))...)
}

func nodePool(name string, its []*catalog.InstanceType, reqs scheduling.Requirements, opts ...func(*NodePool)) NodePool {
	np := NodePool{Name: name, Requirements: reqs, InstanceTypes: its, NodeLimit: -1}
	for _, o := range opts {
		o(&np)
	}
	return np
}

type podOpt func(*corev1.Pod)

var podSeq int

func pod(cpu, mem string, opts ...podOpt) *corev1.Pod {
	podSeq++
	req := corev1.ResourceList{}
	if cpu != "" {
		req[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		req[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d", podSeq), Namespace: "default", Labels: map[string]string{}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: req}}}},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func pods(n int, cpu, mem string, opts ...podOpt) []*corev1.Pod {
	out := make([]*corev1.Pod, n)
	for i := range out {
		out[i] = pod(cpu, mem, opts...)
	}
	return out
}

func gpus(n int) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests[scheduling.ResourceNvidiaGPU] = *resource.NewQuantity(int64(n), resource.DecimalSI)
	}
}

func named(name string) podOpt { return func(p *corev1.Pod) { p.Name = name } }

func labelled(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		for i := 0; i < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

func nodeSelector(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		if p.Spec.NodeSelector == nil {
			p.Spec.NodeSelector = map[string]string{}
		}
		for i := 0; i < len(kv); i += 2 {
			p.Spec.NodeSelector[kv[i]] = kv[i+1]
		}
	}
}

func tolerate(key string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists})
	}
}

func spread(key string, maxSkew int32, when corev1.UnsatisfiableConstraintAction, sel map[string]string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, corev1.TopologySpreadConstraint{
			MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: when, LabelSelector: &metav1.LabelSelector{MatchLabels: sel},
		})
	}
}

func affinity(p *corev1.Pod) *corev1.Affinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &corev1.Affinity{}
	}
	return p.Spec.Affinity
}

func podAffinity(key string, sel map[string]string) podOpt {
	return func(p *corev1.Pod) {
		a := affinity(p)
		if a.PodAffinity == nil {
			a.PodAffinity = &corev1.PodAffinity{}
		}
		a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
			corev1.PodAffinityTerm{TopologyKey: key, LabelSelector: &metav1.LabelSelector{MatchLabels: sel}})
	}
}

func antiAffinity(key string, sel map[string]string) podOpt {
	return func(p *corev1.Pod) {
		a := affinity(p)
		if a.PodAntiAffinity == nil {
			a.PodAntiAffinity = &corev1.PodAntiAffinity{}
		}
		a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
			corev1.PodAffinityTerm{TopologyKey: key, LabelSelector: &metav1.LabelSelector{MatchLabels: sel}})
	}
}

func preferredAntiAffinity(key string, weight int32, sel map[string]string) podOpt {
	return func(p *corev1.Pod) {
		a := affinity(p)
		if a.PodAntiAffinity == nil {
			a.PodAntiAffinity = &corev1.PodAntiAffinity{}
		}
		a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
			corev1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: key, LabelSelector: &metav1.LabelSelector{MatchLabels: sel}}})
	}
}

func preferredNode(weight int32, key string, values ...string) podOpt {
	return func(p *corev1.Pod) {
		a := affinity(p)
		if a.NodeAffinity == nil {
			a.NodeAffinity = &corev1.NodeAffinity{}
		}
		a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
			corev1.PreferredSchedulingTerm{Weight: weight, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}}}})
	}
}

func requiredNode(terms ...[]corev1.NodeSelectorRequirement) podOpt {
	return func(p *corev1.Pod) {
		a := affinity(p)
		if a.NodeAffinity == nil {
			a.NodeAffinity = &corev1.NodeAffinity{}
		}
		ns := &corev1.NodeSelector{}
		for _, t := range terms {
			ns.NodeSelectorTerms = append(ns.NodeSelectorTerms, corev1.NodeSelectorTerm{MatchExpressions: t})
		}
		a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = ns
	}
}

func hostPort(port int32) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, corev1.ContainerPort{ContainerPort: port, HostPort: port})
	}
}

func solveOK(t testing.TB, snap *Snapshot) *Plan {
	t.Helper()
	plan, err := Solve(snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(snap, plan); err != nil {
		t.Fatalf("plan violates a constraint: %v", err)
	}
	return plan
}

func claimTypes(c *Claim) []string {
	var out []string
	for _, it := range c.InstanceTypes {
		out = append(out, it.Name)
	}
	return out
}

package ctrltest

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// Dur parses a duration for a spec field.
func Dur(s string) *metav1.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return &metav1.Duration{Duration: d}
}

// FastSpec is a SimNodeClass spec with short delays: boot 200ms, registration 100ms, device
// plugin 500ms.
func FastSpec() simv1alpha1.SimNodeClassSpec {
	return simv1alpha1.SimNodeClassSpec{BootDelay: Dur("200ms"), RegistrationDelay: Dur("100ms"), DevicePluginDelay: Dur("500ms")}
}

// NodeClass creates a SimNodeClass.
func (e *Env) NodeClass(t *testing.T, name string, spec simv1alpha1.SimNodeClassSpec) *simv1alpha1.SimNodeClass {
	t.Helper()
	nc := &simv1alpha1.SimNodeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
	if err := e.Client.Create(context.Background(), nc); err != nil {
		t.Fatal(err)
	}
	return nc
}

// Req is a requirement.
func Req(key string, op corev1.NodeSelectorOperator, values ...string) apisv1.NodeSelectorRequirementWithMinValues {
	return apisv1.NodeSelectorRequirementWithMinValues{Key: key, Operator: op, Values: values}
}

// NodeClassRef refers to a SimNodeClass.
func NodeClassRef(name string) *apisv1.NodeClassReference {
	return &apisv1.NodeClassReference{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind, Name: name}
}

// NewClaim returns a NodeClaim of NodePool pool for the SimNodeClass nodeClass, requesting
// 500m CPU, with reqs as requirements.
func NewClaim(name, pool, nodeClass string, reqs ...apisv1.NodeSelectorRequirementWithMinValues) *apisv1.NodeClaim {
	return &apisv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{apisv1.NodePoolLabelKey: pool}},
		Spec: apisv1.NodeClaimSpec{
			Requirements: reqs,
			NodeClassRef: NodeClassRef(nodeClass),
			Resources:    apisv1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}},
		},
	}
}

// Create creates obj, failing t on error.
func (e *Env) Create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := e.Client.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// Namespace creates a namespace for a test's pods.
func (e *Env) Namespace(t *testing.T, name string) {
	t.Helper()
	e.Create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
}

// NewPod returns a pod in namespace ns pinned to the Node called node by nodeSelector
// (kubernetes.io/hostname), requesting 100m CPU, tolerating every taint whose key is in
// tolerate, with a 1s termination grace period.
func NewPod(ns, name, node string, tolerate ...string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{corev1.LabelHostname: node},
			TerminationGracePeriodSeconds: new(int64(1)),
			Containers: []corev1.Container{{
				Name: "app", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
			}},
		},
	}
	for _, key := range tolerate {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists})
	}
	return pod
}

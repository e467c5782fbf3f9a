package lifecycle_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/lifecycle"
)

func TestCheckInitialized(t *testing.T) {
	gpu := corev1.ResourceName("nvidia.com/gpu")
	startup := corev1.Taint{Key: "example.com/startup", Effect: corev1.TaintEffectNoSchedule}
	claim := func(mut func(*apisv1.NodeClaim)) *apisv1.NodeClaim {
		c := &apisv1.NodeClaim{}
		c.Spec.StartupTaints = []corev1.Taint{startup}
		c.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
		if mut != nil {
			mut(c)
		}
		return c
	}
	node := func(mut func(*corev1.Node)) *corev1.Node {
		n := &corev1.Node{}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
		n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "a", Effect: corev1.TaintEffectNoSchedule}}
		if mut != nil {
			mut(n)
		}
		return n
	}
	withGPU := func(c *apisv1.NodeClaim) { c.Status.Allocatable[gpu] = resource.MustParse("1") }
	for _, tc := range []struct {
		name   string
		claim  *apisv1.NodeClaim
		node   *corev1.Node
		reason string
	}{
		{"ready", claim(nil), node(nil), ""},
		{"no Ready condition", claim(nil), node(func(n *corev1.Node) { n.Status.Conditions = nil }), lifecycle.ReasonNodeNotReady},
		{"Ready False", claim(nil), node(func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }), lifecycle.ReasonNodeNotReady},
		{"startup taint left", claim(nil), node(func(n *corev1.Node) {
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: startup.Key, Value: "x", Effect: startup.Effect})
		}), lifecycle.ReasonStartupTaintsExist},
		{"startup taint with another effect is not it", claim(nil), node(func(n *corev1.Node) {
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: startup.Key, Effect: corev1.TaintEffectNoExecute})
		}), ""},
		{"not-ready taint", claim(nil), node(func(n *corev1.Node) {
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule})
		}), lifecycle.ReasonEphemeralTaintsExist},
		{"unreachable taint", claim(nil), node(func(n *corev1.Node) {
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute})
		}), lifecycle.ReasonEphemeralTaintsExist},
		{"unregistered taint", claim(nil), node(func(n *corev1.Node) {
			n.Spec.Taints = append(n.Spec.Taints, apisv1.UnregisteredNoExecuteTaint)
		}), lifecycle.ReasonEphemeralTaintsExist},
		{"expected GPU missing", claim(withGPU), node(nil), lifecycle.ReasonResourcesNotRegistered},
		{"expected GPU zero", claim(withGPU), node(func(n *corev1.Node) { n.Status.Allocatable[gpu] = resource.MustParse("0") }), lifecycle.ReasonResourcesNotRegistered},
		{"expected GPU registered", claim(withGPU), node(func(n *corev1.Node) { n.Status.Allocatable[gpu] = resource.MustParse("1") }), ""},
		{"requested GPU missing", claim(func(c *apisv1.NodeClaim) {
			c.Spec.Resources.Requests = corev1.ResourceList{gpu: resource.MustParse("1")}
		}), node(nil), lifecycle.ReasonResourcesNotRegistered},
		{"zero request needs nothing", claim(func(c *apisv1.NodeClaim) {
			c.Spec.Resources.Requests = corev1.ResourceList{gpu: resource.MustParse("0")}
		}), node(nil), ""},
		{"native resources are not waited for", claim(func(c *apisv1.NodeClaim) {
			c.Status.Allocatable[corev1.ResourceMemory] = resource.MustParse("8Gi")
			c.Status.Allocatable["hugepages-2Mi"] = resource.MustParse("1Gi")
		}), node(nil), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reason, msg := lifecycle.CheckInitialized(tc.claim, tc.node)
			if reason != tc.reason {
				t.Errorf("reason %q (%s), want %q", reason, msg, tc.reason)
			}
			if (reason == "") != (msg == "") {
				t.Errorf("reason %q with message %q", reason, msg)
			}
		})
	}
}

func TestIsExtendedResource(t *testing.T) {
	for name, want := range map[corev1.ResourceName]bool{
		"nvidia.com/gpu": true, "aws.amazon.com/neuron": true, "vpc.amazonaws.com/efa": true,
		"cpu": false, "memory": false, "hugepages-1Gi": false, "kubernetes.io/something": false,
		"example.kubernetes.io/x": false, "requests.nvidia.com/gpu": false,
	} {
		if got := lifecycle.IsExtendedResource(name); got != want {
			t.Errorf("IsExtendedResource(%s) = %v, want %v", name, got, want)
		}
	}
}

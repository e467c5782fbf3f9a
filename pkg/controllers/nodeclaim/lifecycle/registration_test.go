package lifecycle_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/lifecycle"
)

func TestSyncNode(t *testing.T) {
	claim := &apisv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name: "c", UID: "uid-1",
			Labels:      map[string]string{apisv1.NodePoolLabelKey: "pool", "team": "a"},
			Annotations: map[string]string{"note": "x", corev1.LastAppliedConfigAnnotation: "{}"},
		},
		Spec: apisv1.NodeClaimSpec{
			Taints:        []corev1.Taint{{Key: "dedicated", Value: "a", Effect: corev1.TaintEffectNoSchedule}},
			StartupTaints: []corev1.Taint{{Key: "startup", Effect: corev1.TaintEffectNoSchedule}},
		},
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{corev1.LabelHostname: "n"}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{
			apisv1.UnregisteredNoExecuteTaint,
			{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule},
		}},
	}
	lifecycle.SyncNode(claim, node)
	for k, v := range map[string]string{apisv1.NodePoolLabelKey: "pool", "team": "a", apisv1.NodeRegisteredLabelKey: "true", corev1.LabelHostname: "n"} {
		if node.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, node.Labels[k], v)
		}
	}
	if node.Annotations["note"] != "x" {
		t.Errorf("annotations %v", node.Annotations)
	}
	if _, ok := node.Annotations[corev1.LastAppliedConfigAnnotation]; ok {
		t.Error("kubectl's last-applied configuration was copied onto the Node")
	}
	var taints []string
	for _, tn := range node.Spec.Taints {
		taints = append(taints, tn.ToString())
	}
	if want := []string{corev1.TaintNodeNotReady + ":NoSchedule", "dedicated=a:NoSchedule"}; !slices.Equal(taints, want) {
		t.Errorf("taints %v, want %v (unregistered removed, claim taint added, startup taint not added)", taints, want)
	}
	if !slices.Contains(node.Finalizers, apisv1.TerminationFinalizer) {
		t.Errorf("finalizers %v", node.Finalizers)
	}
	if len(node.OwnerReferences) != 1 || node.OwnerReferences[0].UID != "uid-1" || node.OwnerReferences[0].Kind != apisv1.NodeClaimKind {
		t.Errorf("owner references %+v", node.OwnerReferences)
	}

	// A second sync changes nothing: the startup taint a DaemonSet removed stays removed.
	before := node.DeepCopy()
	lifecycle.SyncNode(claim, node)
	if len(node.Spec.Taints) != len(before.Spec.Taints) || len(node.Finalizers) != 1 || len(node.OwnerReferences) != 1 {
		t.Errorf("second sync changed the Node: %+v", node)
	}
}

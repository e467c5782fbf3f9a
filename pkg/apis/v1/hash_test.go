package v1_test

import (
	"testing"
	"time"

	v1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func hashedNodePool() *v1.NodePool {
	np := &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	np.Spec.Template.Labels = map[string]string{"team": "a"}
	np.Spec.Template.Spec = v1.NodeClaimTemplateSpec{
		Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{"spot"}}},
		NodeClassRef: &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
		Taints: []corev1.Taint{
			{Key: "b", Effect: corev1.TaintEffectNoSchedule},
			{Key: "a", Value: "x", Effect: corev1.TaintEffectNoExecute},
		},
		ExpireAfter: v1.NewNillableDuration(720 * time.Hour),
	}
	return np
}

// The hash is stamped on NodeClaims, so an accidental change to it drifts every node in every
// cluster. If this test fails because the algorithm changed on purpose, bump
// NodePoolHashVersion and update the value.
func TestHashIsStable(t *testing.T) {
	const golden = "12551065067303167985"
	if got := hashedNodePool().Hash(); got != golden {
		t.Errorf("Hash() = %s, want %s (bump NodePoolHashVersion if the change is intended)", got, golden)
	}
}

func TestHashIgnoresWhatMustNotDrift(t *testing.T) {
	base := hashedNodePool().Hash()
	for name, mutate := range map[string]func(*v1.NodePool){
		"requirements": func(np *v1.NodePool) {
			np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, v1.NodeSelectorRequirementWithMinValues{Key: v1.LabelZone, Operator: corev1.NodeSelectorOpExists})
		},
		"budgets":            func(np *v1.NodePool) { np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0"}} },
		"consolidation":      func(np *v1.NodePool) { np.Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyBalanced },
		"limits":             func(np *v1.NodePool) { np.Spec.Limits = v1.Limits(resources("cpu", "10")) },
		"weight":             func(np *v1.NodePool) { w := int32(5); np.Spec.Weight = &w },
		"status":             func(np *v1.NodePool) { n := int64(3); np.Status.Nodes = &n },
		"taint order":        func(np *v1.NodePool) { ts := np.Spec.Template.Spec.Taints; ts[0], ts[1] = ts[1], ts[0] },
		"empty annotations":  func(np *v1.NodePool) { np.Spec.Template.Annotations = map[string]string{} },
		"empty startupTaint": func(np *v1.NodePool) { np.Spec.Template.Spec.StartupTaints = []corev1.Taint{} },
	} {
		np := hashedNodePool()
		mutate(np)
		if got := np.Hash(); got != base {
			t.Errorf("changing %s changed the hash", name)
		}
	}
}

func TestHashDetectsDrift(t *testing.T) {
	base := hashedNodePool().Hash()
	for name, mutate := range map[string]func(*v1.NodePool){
		"a label":       func(np *v1.NodePool) { np.Spec.Template.Labels["team"] = "b" },
		"an annotation": func(np *v1.NodePool) { np.Spec.Template.Annotations = map[string]string{"a": "b"} },
		"a taint":       func(np *v1.NodePool) { np.Spec.Template.Spec.Taints[0].Value = "y" },
		"a startup taint": func(np *v1.NodePool) {
			np.Spec.Template.Spec.StartupTaints = []corev1.Taint{{Key: "s", Effect: corev1.TaintEffectNoSchedule}}
		},
		"the NodeClass": func(np *v1.NodePool) { np.Spec.Template.Spec.NodeClassRef.Name = "other" },
		"expireAfter":   func(np *v1.NodePool) { np.Spec.Template.Spec.ExpireAfter = v1.NillableDuration{} },
		"the termination grace period": func(np *v1.NodePool) {
			np.Spec.Template.Spec.TerminationGracePeriod = &metav1.Duration{Duration: time.Hour}
		},
	} {
		np := hashedNodePool()
		mutate(np)
		if got := np.Hash(); got == base {
			t.Errorf("changing %s did not change the hash", name)
		}
	}
}

func TestHashDoesNotModifyTheNodePool(t *testing.T) {
	np := hashedNodePool()
	np.Hash()
	if np.Spec.Template.Spec.Taints[0].Key != "b" || len(np.Spec.Template.Spec.Requirements) != 1 {
		t.Errorf("Hash modified the NodePool: %+v", np.Spec.Template.Spec)
	}
}

package v1_test

import (
	"reflect"
	"testing"
	"time"

	v1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestToNodeClaim(t *testing.T) {
	np := hashedNodePool()
	np.Spec.Template.Annotations = map[string]string{"a": "b"}
	np.Spec.Template.Spec.TerminationGracePeriod = &metav1.Duration{Duration: time.Hour}
	nc := np.Spec.Template.ToNodeClaim()
	tmpl := np.Spec.Template
	want := v1.NodeClaimSpec{
		Taints: tmpl.Spec.Taints, StartupTaints: tmpl.Spec.StartupTaints, Requirements: tmpl.Spec.Requirements,
		NodeClassRef: tmpl.Spec.NodeClassRef, TerminationGracePeriod: tmpl.Spec.TerminationGracePeriod, ExpireAfter: tmpl.Spec.ExpireAfter,
	}
	if !reflect.DeepEqual(nc.Spec, want) || !reflect.DeepEqual(nc.Labels, tmpl.Labels) || !reflect.DeepEqual(nc.Annotations, tmpl.Annotations) {
		t.Errorf("ToNodeClaim = %+v", nc)
	}
}

func TestSmallAccessors(t *testing.T) {
	minValues := 2
	r := v1.NodeSelectorRequirementWithMinValues{Key: "k", Operator: v1.NodeSelectorOpGte, Values: []string{"3"}, MinValues: &minValues}
	got := r.NodeSelectorRequirement()
	if !reflect.DeepEqual(got, corev1.NodeSelectorRequirement{Key: "k", Operator: "Gte", Values: []string{"3"}}) {
		t.Errorf("NodeSelectorRequirement = %+v", got)
	}
	got.Values[0] = "4"
	if r.Values[0] != "3" {
		t.Error("NodeSelectorRequirement shares its values with the requirement")
	}
	ref := v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	if ref.GroupKind() != (schema.GroupKind{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass"}) {
		t.Errorf("GroupKind = %v", ref.GroupKind())
	}
	np := &v1.NodePool{}
	if np.IsStatic() {
		t.Error("a NodePool without replicas is static")
	}
	replicas := int64(0)
	np.Spec.Replicas = &replicas
	if !np.IsStatic() {
		t.Error("a NodePool with replicas 0 is not static")
	}
}

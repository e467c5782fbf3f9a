package validation_test

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tenon-sh/tenon/pkg/apis/crds"
	v1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/apis/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// nodePool is a valid NodePool built in Go, without TypeMeta, as a controller would build it.
func nodePool() *v1.NodePool {
	return &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: v1.NodePoolSpec{
			Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
				NodeClassRef: &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
				Requirements: []v1.NodeSelectorRequirementWithMinValues{{
					Key: v1.CapacityTypeLabelKey, Operator: "In", Values: []string{"on-demand"},
				}},
				ExpireAfter: v1.NewNillableDuration(24 * time.Hour),
			}},
			Disruption: v1.Disruption{ConsolidateAfter: v1.NewNillableDuration(0)},
		},
	}
}

func unstructuredNodePool() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "karpenter.sh/v1",
		"kind":       "NodePool",
		"metadata":   map[string]interface{}{"name": "default"},
		"spec": map[string]interface{}{"template": map[string]interface{}{"spec": map[string]interface{}{
			"nodeClassRef": map[string]interface{}{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
			"requirements": []interface{}{map[string]interface{}{"key": "kubernetes.io/arch", "operator": "Exists"}},
		}}},
	}}
}

func TestDefaultTypedKeepsTypeMetaAndSetFields(t *testing.T) {
	np := nodePool()
	if err := validation.Default(np); err != nil {
		t.Fatal(err)
	}
	if !np.GetObjectKind().GroupVersionKind().Empty() {
		t.Errorf("TypeMeta set to %v; want it left empty", np.TypeMeta)
	}
	d := np.Spec.Disruption
	if d.ConsolidationPolicy != v1.ConsolidationPolicyWhenEmptyOrUnderutilized || !reflect.DeepEqual(d.Budgets, []v1.Budget{{Nodes: "10%"}}) {
		t.Errorf("disruption = %+v; want the schema defaults", d)
	}
	if e := np.Spec.Template.Spec.ExpireAfter; e.IsNever() || *e.Duration != 24*time.Hour {
		t.Errorf("expireAfter = %v; want the given 24h kept", e)
	}
	if np.Name != "default" || np.Spec.Template.Spec.NodeClassRef.Name != "default" {
		t.Errorf("fields lost: %+v", np)
	}
}

func TestDefaultUnstructuredInPlace(t *testing.T) {
	u := unstructuredNodePool()
	if err := validation.Default(u); err != nil {
		t.Fatal(err)
	}
	got, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "expireAfter")
	policy, _, _ := unstructured.NestedString(u.Object, "spec", "disruption", "consolidationPolicy")
	if got != "720h" || policy != "WhenEmptyOrUnderutilized" {
		t.Errorf("expireAfter %q, consolidationPolicy %q; want 720h and WhenEmptyOrUnderutilized", got, policy)
	}
}

func TestValidateCreate(t *testing.T) {
	for _, c := range []struct {
		name   string
		mutate func(*v1.NodePool)
		want   string
	}{
		{"valid", func(*v1.NodePool) {}, ""},
		{"weight below minimum", func(np *v1.NodePool) { np.Spec.Weight = ptr.To[int32](0) }, "spec.weight: Invalid value: 0: spec.weight in body should be greater than or equal to 1"},
		{"CEL rule", func(np *v1.NodePool) {
			np.Spec.Replicas = ptr.To[int64](2)
			np.Spec.Weight = ptr.To[int32](10)
		}, "a static NodePool (replicas set) cannot have a weight"},
		{"restricted label", func(np *v1.NodePool) {
			np.Spec.Template.Labels = map[string]string{"karpenter.sh/nodepool": "x"}
		}, "karpenter.sh/nodepool is restricted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			np := nodePool()
			c.mutate(np)
			before := np.DeepCopy()
			errs := validation.Validate(np, nil)
			if !reflect.DeepEqual(before, np) {
				t.Error("Validate changed its argument")
			}
			checkErrs(t, errs, c.want)
		})
	}
}

func TestValidateUnstructured(t *testing.T) {
	u := unstructuredNodePool()
	before := u.DeepCopy()
	if errs := validation.Validate(u, nil); len(errs) > 0 {
		t.Fatalf("valid NodePool refused: %v", errs)
	}
	if !reflect.DeepEqual(before, u) {
		t.Error("Validate changed its argument")
	}
	if err := unstructured.SetNestedField(u.Object, "x", "spec", "template", "spec", "kubelet"); err != nil {
		t.Fatal(err)
	}
	checkErrs(t, validation.Validate(u, nil), `unknown field "spec.template.spec.kubelet"`)
}

func TestValidateUpdateRunsTransitionRules(t *testing.T) {
	old := nodePool()
	np := nodePool()
	np.Spec.Template.Spec.NodeClassRef.Group = "example.com"
	checkErrs(t, validation.Validate(np, old), "nodeClassRef.group cannot be changed")

	np = nodePool()
	np.Spec.Replicas = ptr.To[int64](1)
	checkErrs(t, validation.Validate(np, old), "cannot switch between static")
	// The same object is valid on create: the rule only compares with the old object.
	checkErrs(t, validation.Validate(np, nil), "")
	np.Spec.Template.Spec.NodeClassRef.Name = "other"
	checkErrs(t, validation.Validate(np, np), "")
}

func TestValidateNodeClaim(t *testing.T) {
	nc := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "default-abcde"},
		Spec: v1.NodeClaimSpec{
			NodeClassRef: &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
			Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: "kubernetes.io/arch", Operator: "Gt", Values: []string{"x"}}},
			ExpireAfter:  v1.NewNillableDuration(time.Hour),
		},
	}
	checkErrs(t, validation.Validate(nc, nil), "must have exactly one value, a non-negative integer")
}

func TestUnknownKind(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "example.com/v1", "kind": "Widget"}}
	if err := validation.Default(u); !errors.Is(err, validation.ErrNoCRD) {
		t.Errorf("Default = %v; want ErrNoCRD", err)
	}
	checkErrs(t, validation.Validate(u, nil), `kind: Invalid value: "Widget": no CustomResourceDefinition for Widget in example.com/v1`)
	if _, err := validation.For(schema.GroupVersionKind{Group: "karpenter.sh", Version: "v1beta1", Kind: "NodePool"}); !errors.Is(err, validation.ErrNoCRD) {
		t.Errorf("For(karpenter.sh/v1beta1 NodePool) = %v; want ErrNoCRD", err)
	}
	checkErrs(t, validation.Validate(nodePool(), &v1.NodeClaim{}), "old object is a karpenter.sh/v1, Kind=NodeClaim")
}

func TestEveryEmbeddedCRDHasAValidator(t *testing.T) {
	all, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range all {
		for _, version := range crd.Spec.Versions {
			gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: version.Name, Kind: crd.Spec.Names.Kind}
			v, err := validation.For(gvk)
			if err != nil {
				t.Errorf("%s: %v", gvk, err)
				continue
			}
			if v.GroupVersionKind() != gvk || v.Namespaced() != (crd.Spec.Scope == "Namespaced") {
				t.Errorf("For(%s) = %s, namespaced %v", gvk, v.GroupVersionKind(), v.Namespaced())
			}
		}
		if _, err := validation.ForGroupKind(schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}); err != nil {
			t.Error(err)
		}
	}
}

func TestNewValidatorUnknownVersion(t *testing.T) {
	crd, err := crds.Get("nodepools.karpenter.sh")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := validation.NewValidator(crd, "v9"); err == nil || !strings.Contains(err.Error(), "does not serve version v9") {
		t.Errorf("NewValidator(v9) = %v", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			np := nodePool()
			np.Spec.Weight = ptr.To(int32(i % 2)) // weight 0 is invalid
			errs := validation.Validate(np, nil)
			if (i%2 == 0) != (len(errs) > 0) {
				t.Errorf("weight %d: %v", i%2, errs)
			}
		}()
	}
	wg.Wait()
}

func checkErrs(t *testing.T, errs field.ErrorList, want string) {
	t.Helper()
	switch {
	case want == "" && len(errs) > 0:
		t.Errorf("refused a valid object: %v", errs.ToAggregate())
	case want != "" && len(errs) == 0:
		t.Errorf("accepted an invalid object; want %q", want)
	case want != "" && !strings.Contains(errs.ToAggregate().Error(), want):
		t.Errorf("errors %v do not contain %q", errs.ToAggregate(), want)
	}
}

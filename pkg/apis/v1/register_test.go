package v1_test

import (
	"testing"

	v1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestAddToScheme(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for kind, obj := range map[string]runtime.Object{
		v1.NodePoolKind: &v1.NodePool{}, v1.NodePoolListKind: &v1.NodePoolList{},
		v1.NodeClaimKind: &v1.NodeClaim{}, v1.NodeClaimListKind: &v1.NodeClaimList{},
	} {
		gvks, _, err := scheme.ObjectKinds(obj)
		if err != nil || len(gvks) != 1 || gvks[0] != v1.SchemeGroupVersion.WithKind(kind) {
			t.Errorf("%s: kinds %v, %v", kind, gvks, err)
		}
	}
	if got := v1.Resource("nodepools").String(); got != "nodepools.karpenter.sh" {
		t.Errorf("Resource = %s", got)
	}
}

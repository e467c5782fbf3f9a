package manifest_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenon-sh/tenon/pkg/apis/apitest"
	"github.com/tenon-sh/tenon/pkg/manifest"
)

// A valid EC2NodeClass loads, with the CRD's defaults applied, among the kinds kept as they are.
func TestEC2NodeClassLoadsWithDefaults(t *testing.T) {
	set, err := manifest.Parse("nodeclass.yaml", []byte(apitest.BaseEC2NodeClass))
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Other) != 1 || set.Other[0].GetKind() != "EC2NodeClass" {
		t.Fatalf("loaded %d other objects", len(set.Other))
	}
	tokens, _, _ := unstructured.NestedString(set.Other[0].Object, "spec", "metadataOptions", "httpTokens")
	if tokens != "required" {
		t.Errorf("metadataOptions.httpTokens = %q, want the default required", tokens)
	}
}

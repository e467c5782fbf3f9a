package crds_test

import (
	"fmt"
	"testing"

	"github.com/tenon-sh/tenon/pkg/apis/apitest"
	"github.com/tenon-sh/tenon/pkg/apis/crds"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// The API server must accept every embedded CRD: structural schemas, valid defaults, CEL rules
// that compile and stay within the cost budget.
func TestCRDsAreAccepted(t *testing.T) {
	all, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 2 {
		t.Fatalf("only %d CRDs embedded", len(all))
	}
	for _, crd := range all {
		if errs := apitest.ValidateCRD(crd); len(errs) > 0 {
			t.Errorf("%s: %v", crd.Name, errs.ToAggregate())
		}
	}
}

// columns returns the printer columns of the CRD named name, after checking that it serves one
// version, is cluster-scoped and is in the category "karpenter" (tenon's own kinds in "tenon").
func columns(t *testing.T, name string) string {
	t.Helper()
	crd, err := crds.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	category := "[karpenter]"
	if crd.Spec.Group == "tenon.sh" {
		category = "[tenon]"
	}
	if len(crd.Spec.Versions) != 1 || crd.Spec.Scope != apiextensionsv1.ClusterScoped || fmt.Sprint(crd.Spec.Names.Categories) != category {
		t.Errorf("%s: versions %d, scope %s, categories %v", name, len(crd.Spec.Versions), crd.Spec.Scope, crd.Spec.Names.Categories)
	}
	s := ""
	for _, c := range crd.Spec.Versions[0].AdditionalPrinterColumns {
		s += fmt.Sprintf("%s:%d:%s ", c.Name, c.Priority, c.JSONPath)
	}
	return s
}

func TestPrinterColumns(t *testing.T) {
	for name, want := range map[string]string{
		"nodepools.karpenter.sh": "NodeClass:0:.spec.template.spec.nodeClassRef.name Nodes:0:.status.nodes " +
			`Ready:0:.status.conditions[?(@.type=="Ready")].status Age:0:.metadata.creationTimestamp Weight:0:.spec.weight ` +
			"CPU:1:.status.resources.cpu Memory:1:.status.resources.memory ",
		"nodeclaims.karpenter.sh": `Type:0:.metadata.labels.node\.kubernetes\.io/instance-type Capacity:0:.metadata.labels.karpenter\.sh/capacity-type ` +
			`Zone:0:.metadata.labels.topology\.kubernetes\.io/zone Node:0:.status.nodeName Ready:0:.status.conditions[?(@.type=="Ready")].status ` +
			`Age:0:.metadata.creationTimestamp ImageID:1:.status.imageID ID:1:.status.providerID NodePool:1:.metadata.labels.karpenter\.sh/nodepool ` +
			`NodeClass:1:.spec.nodeClassRef.name Drifted:1:.status.conditions[?(@.type=="Drifted")].status `,
		"ec2nodeclasses.karpenter.k8s.aws": `Ready:0:.status.conditions[?(@.type=="Ready")].status Age:0:.metadata.creationTimestamp Role:1:.spec.role `,
		"commitments.tenon.sh": `Kind:0:.status.kind Utilization:0:.status.utilization Active:0:.status.conditions[?(@.type=="Active")].status ` +
			"Age:0:.metadata.creationTimestamp ",
	} {
		if got := columns(t, name); got != want {
			t.Errorf("%s columns:\n got %s\nwant %s", name, got, want)
		}
	}
}

func TestGetUnknown(t *testing.T) {
	if _, err := crds.Get("widgets.example.com"); err == nil {
		t.Error("Get of an unknown CRD succeeded")
	}
}

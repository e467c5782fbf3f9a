package kube_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-sh/tenon/internal/controlplane"
	"github.com/tenon-sh/tenon/internal/controlplane/testenv"
	"github.com/tenon-sh/tenon/pkg/apis/crds"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/kube"
)

// A controller reads a claim, another writer sets a condition, then the controller patches a
// label and a condition from its stale copy: the other writer's condition must not be lost
// (PatchNodeClaim returns a conflict instead). A metadata-only change from a stale copy still
// goes through, and so does a metadata and status change from a fresh one.
func TestPatchNodeClaimKeepsAConcurrentStatusWrite(t *testing.T) {
	ctx := context.Background()
	all, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	cp := testenv.Start(t, controlplane.Options{CRDs: all})
	scheme := runtime.NewScheme()
	if err := apisv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cp.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	claim := &apisv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "patch", Labels: map[string]string{apisv1.NodePoolLabelKey: "default"}},
		Spec: apisv1.NodeClaimSpec{
			NodeClassRef: &apisv1.NodeClassReference{Group: "sim.tenon.sh", Kind: "SimNodeClass", Name: "default"},
			Requirements: []apisv1.NodeSelectorRequirementWithMinValues{{Key: apisv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{apisv1.CapacityTypeOnDemand}}},
		},
	}
	if err := c.Create(ctx, claim); err != nil {
		t.Fatal(err)
	}
	now := time.Now()

	stale := claim.DeepCopy() // the controller's read
	other := claim.DeepCopy()
	other.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeDrifted, Status: metav1.ConditionTrue, Reason: "NodePoolDrifted"}, now)
	if err := c.Status().Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	mine := stale.DeepCopy()
	mine.Labels["touched"] = "1"
	mine.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeLaunched, Status: metav1.ConditionTrue, Reason: "Launched"}, now)
	err = kube.PatchNodeClaim(ctx, c, stale, mine)
	got := &apisv1.NodeClaim{}
	if gerr := c.Get(ctx, client.ObjectKeyFromObject(claim), got); gerr != nil {
		t.Fatal(gerr)
	}
	if !got.IsTrue(apisv1.ConditionTypeDrifted) {
		t.Fatalf("the other writer's Drifted condition was overwritten (PatchNodeClaim returned %v): conditions %+v", err, got.Status.Conditions)
	}
	if !apierrors.IsConflict(err) && !got.IsTrue(apisv1.ConditionTypeLaunched) {
		t.Fatalf("PatchNodeClaim returned %v but did not write Launched: conditions %+v", err, got.Status.Conditions)
	}

	// A metadata-only change from a stale copy merges.
	mine = stale.DeepCopy()
	mine.Labels["meta-only"] = "1"
	if err := kube.PatchNodeClaim(ctx, c, stale, mine); err != nil {
		t.Fatalf("metadata-only patch from a stale copy: %v", err)
	}
	// From a fresh copy, both are written, and the other writer's condition stays.
	fresh := &apisv1.NodeClaim{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(claim), fresh); err != nil {
		t.Fatal(err)
	}
	mine = fresh.DeepCopy()
	mine.Labels["fresh"] = "1"
	mine.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeLaunched, Status: metav1.ConditionTrue, Reason: "Launched"}, now)
	if err := kube.PatchNodeClaim(ctx, c, fresh, mine); err != nil {
		t.Fatalf("patch from a fresh copy: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(claim), got); err != nil {
		t.Fatal(err)
	}
	if !got.IsTrue(apisv1.ConditionTypeDrifted) || !got.IsTrue(apisv1.ConditionTypeLaunched) ||
		got.Labels["fresh"] != "1" || got.Labels["meta-only"] != "1" {
		t.Errorf("after the fresh patch: labels %v conditions %+v", got.Labels, got.Status.Conditions)
	}
}

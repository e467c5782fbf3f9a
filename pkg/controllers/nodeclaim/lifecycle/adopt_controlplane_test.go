package lifecycle_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/ctrltest"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/lifecycle"
)

// A NodeClaim Karpenter stamped (karpenter.sh/nodepool-hash-version v3) gets tenon's hash of
// its NodePool and version tenon-v1, with an Adopted event, so that a later change to the
// NodePool drifts it; one Karpenter had already found Drifted keeps Karpenter's hash, so it
// stays drifted. A claim whose NodePool does not exist is left as it is until the NodePool
// appears.
func testAdopt(t *testing.T, e *ctrltest.Env) {
	ctx := context.Background()
	e.NodeClass(t, "adopt", ctrltest.FastSpec())
	const karpenterHash = "6971421302419733321"
	karpenterClaim := func(name string) *apisv1.NodeClaim {
		c := ctrltest.NewClaim(name, "adopt-pool", "adopt",
			ctrltest.Req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large"),
			ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand))
		c.Annotations = map[string]string{apisv1.NodePoolHashAnnotationKey: karpenterHash, apisv1.NodePoolHashVersionAnnotationKey: "v3"}
		return c
	}
	fresh, drifted := karpenterClaim("adopt-fresh"), karpenterClaim("adopt-drifted")
	e.Create(t, fresh)
	e.Create(t, drifted)
	// Karpenter found this one drifted before it stopped. (Written once the claim is
	// Initialized, when the controller no longer writes its status.)
	e.WaitCondition(t, drifted.Name, apisv1.ConditionTypeInitialized)
	ctrltest.Eventually(t, "the Drifted condition written", func() (bool, string) {
		c := e.Claim(t, drifted.Name)
		c.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeDrifted, Status: metav1.ConditionTrue, Reason: "NodePoolDrifted"}, time.Now())
		if err := e.Client.Status().Update(ctx, c); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	// No NodePool yet: nothing to stamp.
	e.WaitCondition(t, fresh.Name, apisv1.ConditionTypeInitialized)
	if got := e.Claim(t, fresh.Name).Annotations; got[apisv1.NodePoolHashVersionAnnotationKey] != "v3" || got[apisv1.NodePoolHashAnnotationKey] != karpenterHash {
		t.Errorf("a claim whose NodePool is missing was re-stamped: %v", got)
	}

	pool := &apisv1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "adopt-pool"},
		Spec: apisv1.NodePoolSpec{Template: apisv1.NodeClaimTemplate{Spec: apisv1.NodeClaimTemplateSpec{
			NodeClassRef: ctrltest.NodeClassRef("adopt"),
			Requirements: []apisv1.NodeSelectorRequirementWithMinValues{ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand)},
		}}},
	}
	e.Create(t, pool)
	for _, name := range []string{fresh.Name, drifted.Name} { // a change to each claim reconciles it again
		ctrltest.Eventually(t, "claim "+name+" touched", func() (bool, string) {
			c := e.Claim(t, name)
			c.Labels["touched"] = "1"
			if err := e.Client.Update(ctx, c); err != nil {
				return false, err.Error()
			}
			return true, ""
		})
	}
	for name, wantHash := range map[string]string{fresh.Name: pool.Hash(), drifted.Name: karpenterHash} {
		ctrltest.Eventually(t, "claim "+name+" re-stamped", func() (bool, string) {
			a := e.Claim(t, name).Annotations
			return a[apisv1.NodePoolHashVersionAnnotationKey] == apisv1.NodePoolHashVersion && a[apisv1.NodePoolHashAnnotationKey] == wantHash,
				fmt.Sprintf("annotations %v, want hash %s", a, wantHash)
		})
		e.WaitEvent(t, name, lifecycle.ReasonAdopted)
	}
	if pool.Hash() == karpenterHash {
		t.Fatal("tenon's hash of the NodePool is Karpenter's: the test shows nothing")
	}
}

package garbagecollection_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/ctrltest"
)

// TestVanishedInstanceIsCollected deletes the SimInstance of a Ready claim by hand, as an
// instance terminated outside tenon: the provider reports the instance gone at once, its Node
// goes, and garbage collection deletes the claim at one of its next (300ms) passes, instead of
// the Node and claim staying Ready until the instance next changes state (a running instance:
// never).
func TestVanishedInstanceIsCollected(t *testing.T) {
	e := ctrltest.Start(t)
	m := e.StartManager(t, ctrltest.FastOptions())
	e.NodeClass(t, "vanish", ctrltest.FastSpec())
	e.Create(t, onDemand("hand-deleted", "vanish"))
	claim := e.WaitCondition(t, "hand-deleted", apisv1.ConditionTypeInitialized)
	node := claim.Status.NodeName
	_, _, id, err := cloud.ParseProviderID(claim.Status.ProviderID)
	if err != nil {
		t.Fatal(err)
	}

	if err := e.Client.Delete(context.Background(), &simv1alpha1.SimInstance{ObjectMeta: metav1.ObjectMeta{Name: id}}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Eventually(t, "the provider reports the vanished instance gone", func() (bool, string) {
		_, err := m.Provider.Get(context.Background(), claim.Status.ProviderID)
		return cloudprovider.IsNodeClaimNotFound(err), errString(err)
	})
	e.WaitGone(t, "", node, &corev1.Node{})
	e.WaitGone(t, "", "hand-deleted", &apisv1.NodeClaim{})
}

func errString(err error) string {
	if err == nil {
		return "found"
	}
	return err.Error()
}

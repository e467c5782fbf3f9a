package garbagecollection_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/ctrltest"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/garbagecollection"
)

// TestOnControlPlane runs the collector, with the other controllers, against a real control
// plane with the simulated cloud: passes every 300ms, a 1s grace period.
func TestOnControlPlane(t *testing.T) {
	e := ctrltest.Start(t)
	m := e.StartManager(t, ctrltest.FastOptions())
	e.NodeClass(t, "gc", ctrltest.FastSpec())
	spec := ctrltest.FastSpec()
	spec.RegistrationDelay = ctrltest.Dur("1h")
	e.NodeClass(t, "gc-unregistered", spec)
	t.Run("parallel", func(t *testing.T) {
		t.Run("OrphanInstance", func(t *testing.T) { t.Parallel(); testOrphanInstance(t, e, m) })
		t.Run("InstanceGone", func(t *testing.T) { t.Parallel(); testInstanceGone(t, e, m) })
	})
}

func onDemand(name, nodeClass string) *apisv1.NodeClaim {
	return ctrltest.NewClaim(name, "default", nodeClass,
		ctrltest.Req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large"),
		ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand))
}

// An instance launched for a claim that was never created is deleted once the grace period
// has passed; the instance of a live claim is kept.
func testOrphanInstance(t *testing.T, e *ctrltest.Env, m *ctrltest.Manager) {
	ctx := context.Background()
	e.Create(t, onDemand("kept-1", "gc"))
	kept := e.WaitCondition(t, "kept-1", apisv1.ConditionTypeInitialized)

	began := time.Now()
	ghost, err := m.Provider.Create(ctx, onDemand("ghost-1", "gc"))
	if err != nil {
		t.Fatal(err)
	}
	ctrltest.Eventually(t, "the orphan instance is deleted", func() (bool, string) {
		_, err := m.Provider.Get(ctx, ghost.Status.ProviderID)
		return cloudprovider.IsNodeClaimNotFound(err), fmt.Sprint(err)
	})
	if elapsed := time.Since(began); elapsed < time.Second {
		t.Errorf("the orphan was deleted %v after its launch, within the 1s grace period", elapsed)
	}
	e.WaitEvent(t, ghostNode(t, ghost), garbagecollection.ReasonOrphanInstance)
	e.WaitGone(t, "", ghostNode(t, ghost), &corev1.Node{})

	if _, err := m.Provider.Get(ctx, kept.Status.ProviderID); err != nil {
		t.Errorf("the instance of a live claim was collected: %v", err)
	}
	if c := e.Claim(t, "kept-1"); c == nil || !c.DeletionTimestamp.IsZero() {
		t.Error("a live claim was deleted")
	}
}

// ghostNode is the name of the Node the simulated cloud registers for an instance: its ID.
func ghostNode(t *testing.T, claim *apisv1.NodeClaim) string {
	t.Helper()
	id := claim.Status.ProviderID
	for i := len(id) - 1; i >= 0; i-- {
		if id[i] == '/' {
			return id[i+1:]
		}
	}
	t.Fatalf("provider ID %q", id)
	return ""
}

// A launched claim whose instance is removed behind tenon's back is deleted.
func testInstanceGone(t *testing.T, e *ctrltest.Env, m *ctrltest.Manager) {
	ctx := context.Background()
	e.Create(t, onDemand("vanish-1", "gc-unregistered"))
	claim := e.WaitCondition(t, "vanish-1", apisv1.ConditionTypeLaunched)
	if err := m.Provider.Delete(ctx, claim); err != nil {
		t.Fatal(err)
	}
	e.WaitEvent(t, claim.Name, garbagecollection.ReasonInstanceGone)
	e.WaitGone(t, "", claim.Name, &apisv1.NodeClaim{})
}

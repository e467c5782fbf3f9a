package garbagecollection_test

import (
	"context"
	"errors"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/ctrltest"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/garbagecollection"
)

// TestInstanceOfClaimBeingLaunchedIsKept holds a claim in the window between its instance's
// launch and the write of its status.providerID: the instance is launched through the
// simulated provider for the claim, while the stored claim refers to a SimNodeClass that does
// not exist, so the lifecycle controller never records a provider ID. A garbage collection
// pass an hour after the launch (far past the grace period, as when a loaded machine delays
// the status write) must keep the instance, which the claim holds by name, and the claim.
func TestInstanceOfClaimBeingLaunchedIsKept(t *testing.T) {
	ctx := context.Background()
	e := ctrltest.Start(t)
	opts := ctrltest.FastOptions()
	opts.GC.Interval = time.Hour // only the pass below runs
	clk := clocktesting.NewFakeClock(time.Now().Add(time.Hour))
	var gc *garbagecollection.Collector
	opts.Setup = func(mgr manager.Manager, m *ctrltest.Manager) error {
		var err error
		gc, err = garbagecollection.New(garbagecollection.Deps{
			Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), CloudProvider: m.Provider, Clock: clk,
		}, garbagecollection.Options{})
		return err
	}
	m := e.StartManager(t, opts)
	e.NodeClass(t, "gc-launching", ctrltest.FastSpec())

	e.Create(t, onDemand("launching-1", "gc-absent"))
	var inst *apisv1.NodeClaim
	var err error
	ctrltest.Eventually(t, "the SimNodeClass is ready to launch", func() (bool, string) {
		inst, err = m.Provider.Create(ctx, onDemand("launching-1", "gc-launching"))
		var notReady *cloudprovider.NodeClassNotReadyError
		if errors.As(err, &notReady) {
			return false, err.Error()
		}
		return true, ""
	})
	if err != nil {
		t.Fatal(err)
	}
	ctrltest.Eventually(t, "the lifecycle controller has seen the claim", func() (bool, string) {
		c := e.Claim(t, "launching-1")
		return c != nil && c.GetCondition(apisv1.ConditionTypeLaunched) != nil, "no Launched condition"
	})
	if c := e.Claim(t, "launching-1"); c.Status.ProviderID != "" {
		t.Fatalf("the claim has provider ID %q; the test needs it unwritten", c.Status.ProviderID)
	}

	if err := gc.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Provider.Get(ctx, inst.Status.ProviderID); err != nil {
		t.Errorf("the instance of a claim being launched was collected: %v", err)
	}
	if c := e.Claim(t, "launching-1"); c == nil || !c.DeletionTimestamp.IsZero() {
		t.Error("the claim being launched was deleted")
	}
}

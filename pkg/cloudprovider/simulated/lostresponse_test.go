package simulated_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated"
)

// faultMode says how the provider's writes of SimInstances fail while a test has them fail.
type faultMode int32

const (
	noFault faultMode = iota
	// lostResponse: a write is applied, then answered with a timeout (as a launch whose response
	// was lost); deletes fail without being applied.
	lostResponse
	// refused: every write fails without being applied.
	refused
)

// faultyClient is the env's client with the provider's SimInstance writes failing as mode says.
func (e *env) faultyClient(t *testing.T, mode *atomic.Int32) client.Client {
	t.Helper()
	base, err := client.NewWithWatch(e.cp.RESTConfig(), client.Options{Scheme: e.scheme})
	if err != nil {
		t.Fatal(err)
	}
	timeout := func(obj client.Object) error {
		return apierrors.NewTimeoutError(fmt.Sprintf("writing SimInstance %s (injected)", obj.GetName()), 0)
	}
	isInstance := func(obj client.Object) bool { _, ok := obj.(*simv1alpha1.SimInstance); return ok }
	return interceptor.NewClient(base, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			switch m := faultMode(mode.Load()); {
			case !isInstance(obj) || m == noFault:
				return c.Create(ctx, obj, opts...)
			case m == lostResponse:
				if err := c.Create(ctx, obj, opts...); err != nil {
					return err
				}
			}
			return timeout(obj)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			if isInstance(obj) && faultMode(mode.Load()) != noFault {
				return timeout(obj)
			}
			return c.Delete(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if isInstance(obj) && faultMode(mode.Load()) == refused {
				return timeout(obj)
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
}

// TestRetriedLaunchAfterAFailedRecordLaunchesOnce: when recording a launch fails — applied with
// its response lost, or refused — the claim's retried Create returns the instance already
// launched and records it, rather than launching a second instance for the claim.
func TestRetriedLaunchAfterAFailedRecordLaunchesOnce(t *testing.T) {
	e := startEnv(t)
	e.nodeClass(t, "lost", fastSpec())
	for _, tc := range []struct {
		name string
		mode faultMode
	}{{"LostResponse", lostResponse}, {"Refused", refused}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			var mode atomic.Int32
			p, err := simulated.New(simulated.Options{Client: e.faultyClient(t, &mode)})
			if err != nil {
				t.Fatal(err)
			}
			claim := e.claim(t, "lost-"+map[faultMode]string{lostResponse: "response", refused: "refused"}[tc.mode], "lost",
				req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand))

			mode.Store(int32(tc.mode))
			if _, err := p.Create(ctx, claim); !apierrors.IsTimeout(errors.Unwrap(err)) && !apierrors.IsTimeout(err) {
				t.Fatalf("Create with its record failing: %v, want the injected timeout", err)
			}
			mode.Store(int32(noFault))
			got, err := p.Create(ctx, claim)
			if err != nil {
				t.Fatalf("retried Create: %v", err)
			}
			again, err := p.Create(ctx, claim)
			if err != nil || again.Status.ProviderID != got.Status.ProviderID {
				t.Fatalf("third Create: %v, %s (want %s)", err, again.Status.ProviderID, got.Status.ProviderID)
			}
			var list simv1alpha1.SimInstanceList
			if err := e.client.List(ctx, &list, client.MatchingLabels{simv1alpha1.NodeClaimLabelKey: claim.Name}); err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != 1 {
				var ids []string
				for _, si := range list.Items {
					ids = append(ids, si.Name)
				}
				t.Fatalf("claim %s has %d SimInstances %v, want 1", claim.Name, len(list.Items), ids)
			}
			id := instanceID(t, got.Status.ProviderID)
			if si := list.Items[0]; si.Name != id || si.Status.Phase == "" {
				t.Errorf("SimInstance %s phase %q, want %s with its status written", si.Name, si.Status.Phase, id)
			}
			views, err := p.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, v := range views {
				if v.Name == claim.Name {
					n++
				}
			}
			if n != 1 {
				t.Errorf("provider lists %d instances for claim %s, want 1", n, claim.Name)
			}
			if err := p.Delete(ctx, got); err != nil {
				t.Fatal(err)
			}
		})
	}
}

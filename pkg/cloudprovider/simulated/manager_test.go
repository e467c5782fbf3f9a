package simulated_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-sh/tenon/internal/controlplane/testenv"
	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated"
)

func keyOf(name string) types.NamespacedName { return types.NamespacedName{Name: name} }

func reconcileRequest(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: keyOf(name)}
}

// testManager wires the provider into a controller-runtime manager with its cached client, as
// the controller binary does: the SimNodeClass gets its status, and the manager's Kubelet
// registers and removes the Node.
func testManager(t *testing.T, e *env) {
	mgr, err := ctrl.NewManager(e.cp.RESTConfig(), testenv.ManagerOptions(e.scheme))
	if err != nil {
		t.Fatal(err)
	}
	p, err := simulated.New(simulated.Options{Client: mgr.GetClient(), Reader: mgr.GetAPIReader()})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})

	e.nodeClass(t, "managed", fastSpec())
	eventually(t, "the SimNodeClass becomes Ready", func() (bool, string) {
		nc := &simv1alpha1.SimNodeClass{}
		if err := e.client.Get(ctx, keyOf("managed"), nc); err != nil {
			return false, err.Error()
		}
		for _, c := range nc.Status.Conditions {
			if c.Type == simv1alpha1.ConditionTypeReady {
				return c.Status == "True" && len(nc.Status.Zones) == 6, fmt.Sprintf("%+v %v", c, nc.Status.Zones)
			}
		}
		return false, "no Ready condition"
	})
	got, err := p.Create(ctx, e.claim(t, "managed-1", "managed", req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand)))
	if err != nil {
		t.Fatal(err)
	}
	id := instanceID(t, got.Status.ProviderID)
	e.waitNode(t, id)
	if err := p.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	e.waitNodeGone(t, id)
}

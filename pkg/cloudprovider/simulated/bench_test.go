package simulated_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated"
)

// BenchmarkGetInstanceTypes measures the call every provisioning batch makes: the whole
// us-east-1 catalog with a capacity pool and a reservation, the SimNodeClass read from a
// client. (The model's cloud.BenchmarkInstanceTypes measures refreshing the view after
// launches.)
func BenchmarkGetInstanceTypes(b *testing.B) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apisv1.AddToScheme, simv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			b.Fatal(err)
		}
	}
	nc := &simv1alpha1.SimNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "bench"}, Spec: simv1alpha1.SimNodeClassSpec{
		CapacityPools: []simv1alpha1.CapacityPool{{InstanceType: "m5.large", Capacity: 1 << 20}},
		Reservations:  []simv1alpha1.Reservation{{ID: "cr-1", InstanceType: "c5.large", Zone: "us-east-1a", Count: 1 << 20}},
	}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(nc).
		WithStatusSubresource(&simv1alpha1.SimNodeClass{}, &simv1alpha1.SimInstance{}).Build()
	p, err := simulated.New(simulated.Options{Client: c})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	np := nodePool("bench")
	if _, err := p.GetInstanceTypes(ctx, np); err != nil {
		b.Fatal(err)
	}
	b.Run("steady", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.GetInstanceTypes(ctx, np); err != nil {
				b.Fatal(err)
			}
		}
	})
}

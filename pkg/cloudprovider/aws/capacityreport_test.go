package aws

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-sh/tenon/internal/controlplane/testenv"
	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/lifecycle"
	"github.com/tenon-sh/tenon/pkg/metrics"
)

// iceAround makes m5.large on-demand out of capacity in every zone and returns a claim that
// may also take m5.xlarge: its fleet tries the cheaper m5.large first, finds none, and
// launches an m5.xlarge.
func (e *env) iceAround(t *testing.T, name, class string) *apisv1.NodeClaim {
	t.Helper()
	for _, sn := range e.Subnets(t) {
		e.Server.SetInsufficientCapacity("m5.large", sn.Zone, apisv1.CapacityTypeOnDemand, true)
	}
	return claim(name, class, req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.large", "m5.xlarge"),
		req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand))
}

// A fleet that launched around offerings without capacity hands them to the caller's capacity
// report, and leaves marking them to it; a caller without one gets them marked in the
// provider's cache, with Karpenter's availability gauge at 0.
func testFleetReportsTheOfferingsItLaunchedAround(t *testing.T, e *env) {
	e.nodeClass(t, "around", nil)
	var heard []cloudprovider.Offering
	rctx := cloudprovider.WithCapacityReport(ctx, func(o []cloudprovider.Offering) { heard = append(heard, o...) })
	out, err := e.p.Create(rctx, e.iceAround(t, "around-1", "around"))
	if err != nil || out.Labels[corev1.LabelInstanceTypeStable] != "m5.xlarge" {
		t.Fatalf("Create = %v, %v; want an m5.xlarge", out.Labels[corev1.LabelInstanceTypeStable], err)
	}
	if len(heard) == 0 {
		t.Fatal("the report heard nothing of the m5.large offerings the fleet found without capacity")
	}
	for _, o := range heard {
		if o.InstanceType != "m5.large" || o.CapacityType != apisv1.CapacityTypeOnDemand {
			t.Errorf("the report heard %v, which had capacity or was not tried", o)
		}
	}
	if n := e.unavailable.Len(); n != 0 {
		t.Errorf("the provider marked %d offerings itself though the caller reported them", n)
	}

	if _, err := e.p.Create(ctx, e.iceAround(t, "around-2", "around")); err != nil {
		t.Fatal(err)
	}
	for _, o := range heard {
		if !e.unavailable.IsUnavailable(o.InstanceType, o.Zone, o.CapacityType) {
			t.Errorf("without a report %v is not marked in the provider's cache", o)
		}
		if v := testutil.ToFloat64(cloudprovider.OfferingAvailable.WithLabelValues(o.InstanceType, o.CapacityType, o.Zone)); v != 0 {
			t.Errorf("%s %v marked: gauge %v, want 0", metrics.InstanceTypeLabel, o, v)
		}
	}
}

// The lifecycle controller, over the AWS provider, marks the offerings a fleet launched around
// and names them in the claim's InsufficientCapacity event, in the format the chaos tests
// read, while the claim keeps the instance it launched.
func testLifecycleRecordsTheOfferingsAFleetLaunchedAround(t *testing.T, api *apiServer) {
	e := newEnv(t, api)
	e.nodeClass(t, "lc-around", nil)
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apisv1.AddToScheme, awsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	mgr, err := ctrl.NewManager(api.cfg, testenv.ManagerOptions(scheme))
	if err != nil {
		t.Fatal(err)
	}
	if err := lifecycle.Register(mgr, lifecycle.Deps{CloudProvider: e.p, UnavailableOfferings: e.unavailable}, lifecycle.Options{}); err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() { cancel(); <-done })

	c := e.iceAround(t, "lc-around-1", "lc-around")
	if err := api.client.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.client.Delete(context.Background(), c) })
	var msg string
	deadline := time.Now().Add(60 * time.Second)
	for msg == "" {
		if time.Now().After(deadline) {
			t.Fatal("no InsufficientCapacity event about lc-around-1 within 60s")
		}
		var evs corev1.EventList
		if err := api.client.List(ctx, &evs); err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs.Items {
			if ev.InvolvedObject.Name == c.Name && ev.Reason == lifecycle.ReasonInsufficientCapacity {
				msg = ev.Message
				if ev.Type != corev1.EventTypeWarning {
					t.Errorf("event type %s, want Warning", ev.Type)
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	want := "NodeClaim lc-around-1: insufficient capacity for m5.large/"
	if !strings.HasPrefix(msg, want) || !strings.Contains(msg, "unavailable for 3m0s; launched m5.xlarge/") {
		t.Fatalf("event %q, want it to begin %q and say the m5.xlarge launched", msg, want)
	}
	_, list, _ := strings.Cut(msg, "insufficient capacity for ")
	list, _, _ = strings.Cut(list, ";")
	for _, o := range strings.Split(list, ", ") {
		p := strings.Split(o, "/")
		if len(p) != 3 || p[0] != "m5.large" || p[2] != apisv1.CapacityTypeOnDemand {
			t.Fatalf("the event names %q, not an m5.large on-demand offering: %q", o, msg)
		}
		if !e.unavailable.IsUnavailable(p[0], p[1], p[2]) {
			t.Errorf("%s is named but not marked unavailable", o)
		}
	}
	got := &apisv1.NodeClaim{}
	deadline = time.Now().Add(30 * time.Second)
	for got.Status.ProviderID == "" {
		if time.Now().After(deadline) {
			t.Fatalf("the claim has no provider ID: %+v", got.Status)
		}
		if err := api.client.Get(ctx, client.ObjectKeyFromObject(c), got); err != nil {
			t.Fatalf("the claim that launched: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if insts := e.Server.Instances(); len(insts) != 1 || insts[0].ProviderID != got.Status.ProviderID {
		t.Fatalf("endpoint instances %s, claim %s", fmt.Sprint(insts), got.Status.ProviderID)
	}
}

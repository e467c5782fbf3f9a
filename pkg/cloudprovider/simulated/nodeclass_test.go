package simulated_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated"
)

var anyCapacity = req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpExists)

func testNodeClassReadiness(t *testing.T, e *env) {
	ctx := context.Background()
	p, _ := e.provider(t, nil)
	if _, err := p.Create(ctx, e.claim(t, "ready-1", "missing", anyCapacity)); !cloudprovider.IsNodeClassNotReady(err) {
		t.Errorf("Create with a missing SimNodeClass: %v", err)
	}
	if _, err := p.GetInstanceTypes(ctx, nodePool("missing")); !cloudprovider.IsNodeClassNotReady(err) {
		t.Errorf("GetInstanceTypes with a missing SimNodeClass: %v", err)
	}
	wrong := nodePool("missing")
	wrong.Spec.Template.Spec.NodeClassRef.Kind = "EC2NodeClass"
	if _, err := p.GetInstanceTypes(ctx, wrong); !cloudprovider.IsNodeClassNotReady(err) || !strings.Contains(err.Error(), "EC2NodeClass") {
		t.Errorf("GetInstanceTypes with another provider's kind: %v", err)
	}
	bad := fastSpec()
	bad.Zones = []string{"us-west-2a"}
	e.nodeClass(t, "bad-zone", bad)
	if _, err := p.Create(ctx, e.claim(t, "ready-2", "bad-zone", anyCapacity)); !cloudprovider.IsNodeClassNotReady(err) || !strings.Contains(err.Error(), "us-west-2a") {
		t.Errorf("Create with a zone outside the region: %v", err)
	}
	e.nodeClass(t, "good", simv1alpha1.SimNodeClassSpec{})
	r := p.NodeClassReconciler()
	for name, want := range map[string]string{
		"bad-zone": `False InvalidSpec catalog: zone "us-west-2a" is not in us-east-1 []`,
		"good":     "True Resolved the spec resolves against the catalog [us-east-1a us-east-1b us-east-1c us-east-1d us-east-1e us-east-1f]",
	} {
		if _, err := r.Reconcile(ctx, reconcileRequest(name)); err != nil {
			t.Fatal(err)
		}
		nc := &simv1alpha1.SimNodeClass{}
		if err := e.client.Get(ctx, keyOf(name), nc); err != nil {
			t.Fatal(err)
		}
		c := nc.Status.Conditions
		if len(c) != 1 || c[0].Type != "Ready" || c[0].ObservedGeneration != nc.Generation {
			t.Fatalf("%s conditions %+v", name, c)
		}
		if got := fmt.Sprintf("%s %s %s %v", c[0].Status, c[0].Reason, c[0].Message, nc.Status.Zones); got != want {
			t.Errorf("%s status: %s\nwant %s", name, got, want)
		}
		if nc.Spec.Region != "us-east-1" || nc.Spec.BootDelay == nil || nc.Spec.RootVolumeSize == nil {
			t.Errorf("%s was not defaulted: %+v", name, nc.Spec)
		}
	}
}

func testDrift(t *testing.T, e *env) {
	ctx := context.Background()
	p, _ := e.provider(t, nil)
	spec := fastSpec()
	spec.Zones = []string{"us-east-1a", "us-east-1b"}
	nc := e.nodeClass(t, "drift", spec)
	claim := e.claim(t, "drift-1", "drift", req(apisv1.LabelZone, corev1.NodeSelectorOpIn, "us-east-1b"),
		req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand))
	got, err := p.Create(ctx, claim)
	if err != nil {
		t.Fatal(err)
	}
	update := func(change func(*simv1alpha1.SimNodeClassSpec)) {
		t.Helper()
		if err := e.client.Get(ctx, keyOf(nc.Name), nc); err != nil {
			t.Fatal(err)
		}
		change(&nc.Spec)
		if err := e.client.Update(ctx, nc); err != nil {
			t.Fatal(err)
		}
	}
	check := func(want cloudprovider.DriftReason) {
		t.Helper()
		if reason, err := p.IsDrifted(ctx, got); err != nil || reason != want {
			t.Errorf("IsDrifted = %q, %v; want %q", reason, err, want)
		}
	}
	check("")
	update(func(s *simv1alpha1.SimNodeClassSpec) { s.BootDelay = dur("5s"); s.CapacityPools = nil })
	check("")
	update(func(s *simv1alpha1.SimNodeClassSpec) { s.Labels = map[string]string{"example.com/new": "x"} })
	check(simulated.DriftNodeClass)
	update(func(s *simv1alpha1.SimNodeClassSpec) { s.Labels = nil; s.Zones = []string{"us-east-1a"} })
	check(simulated.DriftZone)
	rv := resource.MustParse("40Gi")
	update(func(s *simv1alpha1.SimNodeClassSpec) { s.Zones = nil; s.RootVolumeSize = &rv })
	check(simulated.DriftNodeClass)
	if err := p.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	check("")
}

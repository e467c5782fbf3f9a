package simulated_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
)

func testSpotInterruption(t *testing.T, e *env) {
	ctx := context.Background()
	clk := &clock{}
	p, _ := e.provider(t, clk.Now)
	e.nodeClass(t, "spot", fastSpec())
	got, err := p.Create(ctx, e.claim(t, "spot-1", "spot",
		req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large"),
		req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeSpot)))
	if err != nil {
		t.Fatal(err)
	}
	id := instanceID(t, got.Status.ProviderID)
	e.waitNode(t, id)
	at := clk.Now()
	if err := p.Interrupt(ctx, got.Status.ProviderID, cloudprovider.SpotInterruption, at); err != nil {
		t.Fatal(err)
	}
	msgs, err := p.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].Kind != cloudprovider.SpotInterruption || msgs[0].ProviderID != got.Status.ProviderID ||
		msgs[0].Deadline.Sub(msgs[0].Received) != 2*time.Minute {
		t.Fatalf("messages %+v", msgs)
	}
	eventually(t, "the SimInstance records the interruption", func() (bool, string) {
		si, err := e.simInstance(id)
		if err != nil {
			return false, err.Error()
		}
		in := si.Status.Interruption
		return in != nil && in.Kind == "SpotInterruption" && in.Injected && in.Deadline.Time.Equal(msgs[0].Deadline), fmt.Sprintf("%+v", in)
	})
	if _, err := e.node(id); err != nil {
		t.Fatalf("the node went before the deadline: %v", err)
	}
	clk.Skip(2*time.Minute + time.Second)
	e.waitNodeGone(t, id)
	msgs, err = p.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, m := range msgs {
		kinds = append(kinds, string(m.Kind))
	}
	if fmt.Sprint(kinds) != "[SpotInterruption InstanceStopped]" {
		t.Errorf("messages after the deadline: %v", kinds)
	}
	for _, m := range msgs {
		if err := p.Done(ctx, m.ID); err != nil {
			t.Fatal(err)
		}
	}
	if msgs, _ := p.Receive(ctx); len(msgs) != 0 {
		t.Errorf("messages after Done: %+v", msgs)
	}
	if err := p.Delete(ctx, got); !cloudprovider.IsNodeClaimNotFound(err) {
		t.Errorf("Delete of the reclaimed instance: %v", err)
	}
}

func testListWithoutNodeClaim(t *testing.T, e *env) {
	ctx := context.Background()
	p, _ := e.provider(t, nil)
	e.nodeClass(t, "orphan", fastSpec())
	claim := e.claim(t, "orphan-1", "orphan", req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand))
	began := time.Now().Add(-time.Second)
	got, err := p.Create(ctx, claim)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.client.Delete(ctx, claim); err != nil {
		t.Fatal(err)
	}
	list, err := p.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(list, func(c *apisv1.NodeClaim) bool { return c.Status.ProviderID == got.Status.ProviderID })
	if i < 0 {
		t.Fatal("an instance whose NodeClaim is gone is not listed")
	}
	if c := list[i]; c.Name != "orphan-1" || c.CreationTimestamp.Time.Before(began) || c.Labels[apisv1.NodePoolLabelKey] != "default" {
		t.Errorf("listed %s created %v labels %v", c.Name, c.CreationTimestamp, c.Labels)
	}
	if err := p.Delete(ctx, list[i]); err != nil {
		t.Fatal(err)
	}
}

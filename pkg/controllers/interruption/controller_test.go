package interruption

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/index"
	"github.com/tenon-sh/tenon/pkg/state"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeClient is an in-memory client with the field indexes the controller looks instances up
// by, holding no objects: every instance is unknown to it.
func fakeClient(t *testing.T) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := apisv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).
		WithIndex(&apisv1.NodeClaim{}, index.NodeClaimProviderID, func(o client.Object) []string { return []string{o.(*apisv1.NodeClaim).Status.ProviderID} }).
		WithIndex(&corev1.Node{}, index.NodeProviderID, func(o client.Object) []string { return []string{o.(*corev1.Node).Spec.ProviderID} }).
		Build()
}

func newTestController(t *testing.T, q cloudprovider.InterruptionQueue, clk *clocktesting.FakeClock, opts Options) *Controller {
	t.Helper()
	deps := Deps{Queue: q, Cluster: state.NewCluster(clk), Client: fakeClient(t)}
	if clk != nil {
		deps.Clock = clk
	}
	c, err := New(deps, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func msg(id, providerID string, kind cloudprovider.InterruptionKind) cloudprovider.InterruptionMessage {
	return cloudprovider.InterruptionMessage{ID: id, Kind: kind, ProviderID: providerID, Received: t0, Deadline: t0.Add(2 * time.Minute)}
}

func ids(ms []cloudprovider.InterruptionMessage) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func TestNewRequiresItsDependencies(t *testing.T) {
	for name, deps := range map[string]Deps{
		"Queue":   {Cluster: state.NewCluster(nil), Client: fakeClient(t)},
		"Cluster": {Queue: newQueue(nil), Client: fakeClient(t)},
		"Client":  {Queue: newQueue(nil), Cluster: state.NewCluster(nil)},
	} {
		if _, err := New(deps, Options{}); err == nil {
			t.Errorf("New without %s succeeded", name)
		}
	}
}

// admit hands out each message once at a time, one per instance, holds back a failed one
// until its retry is due, never hands out an acknowledged one again, and forgets messages the
// queue no longer returns.
func TestAdmit(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	q := newQueue(nil)
	c := newTestController(t, q, clk, Options{PollInterval: time.Second})
	a1, a2 := msg("a1", "sim://r/z/i-a", cloudprovider.RebalanceRecommendation), msg("a2", "sim://r/z/i-a", cloudprovider.SpotInterruption)
	b := msg("b", "sim://r/z/i-b", cloudprovider.SpotInterruption)
	all := []cloudprovider.InterruptionMessage{a1, a2, b}

	if got := ids(c.admit(all)); len(got) != 2 || got[0] != "a1" || got[1] != "b" {
		t.Fatalf("first admit %v, want [a1 b]: one message per instance at a time", got)
	}
	if got := c.admit(all); len(got) != 0 {
		t.Fatalf("admitted %v while the first ones are busy", ids(got))
	}
	// a1 is acknowledged (its instance is unknown); b fails because its acknowledgement fails.
	q.failDone["b"] = 5
	ctx := context.Background()
	c.process(ctx, a1)
	c.process(ctx, b)
	if q.ackCount("a1") != 1 || q.ackCount("b") != 0 {
		t.Fatalf("acknowledged a1 %d times, b %d times; want 1 and 0", q.ackCount("a1"), q.ackCount("b"))
	}
	if got := ids(c.admit(all)); len(got) != 1 || got[0] != "a2" {
		t.Fatalf("second admit %v, want [a2]: a1 is done and b waits for its retry", got)
	}
	c.process(ctx, a2)
	clk.Step(999 * time.Millisecond)
	if got := c.admit(all); len(got) != 0 {
		t.Fatalf("admitted %v before b's retry was due", ids(got))
	}
	clk.Step(time.Millisecond)
	if got := ids(c.admit(all)); len(got) != 1 || got[0] != "b" {
		t.Fatalf("admit at the retry %v, want [b]", got)
	}
	c.process(ctx, b) // fails again: the next retry is two polls away
	clk.Step(1500 * time.Millisecond)
	if got := c.admit(all); len(got) != 0 {
		t.Fatalf("admitted %v 1.5s after the second failure, want the retry after 2s", ids(got))
	}
	clk.Step(500 * time.Millisecond)
	if got := ids(c.admit(all)); len(got) != 1 || got[0] != "b" {
		t.Fatalf("admit at the second retry %v, want [b]", got)
	}
	c.process(ctx, b)

	// Messages the queue stops returning are forgotten after a while; the busy are kept.
	clk.Step(forgetAfter + time.Second)
	c.admit(nil)
	c.mu.Lock()
	left := len(c.messages)
	c.mu.Unlock()
	if left != 0 {
		t.Errorf("%d messages remembered after the queue stopped returning them", left)
	}
}

func TestRetryDelay(t *testing.T) {
	c := newTestController(t, newQueue(nil), nil, Options{PollInterval: time.Second})
	for failures, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 8 * time.Second, 5: retryMax, 50: retryMax} {
		if got := c.retryDelay(failures); got != want {
			t.Errorf("after %d failures: %v, want %v", failures, got, want)
		}
	}
	slow := newTestController(t, newQueue(nil), nil, Options{PollInterval: time.Minute})
	if got := slow.retryDelay(3); got != time.Minute {
		t.Errorf("with a 1m poll interval the retry comes after %v, want 1m (no sooner than a poll)", got)
	}
}

func TestTerminationTime(t *testing.T) {
	c := newTestController(t, newQueue(nil), nil, Options{DrainLead: 15 * time.Second})
	now := t0
	for _, tc := range []struct {
		name     string
		kind     cloudprovider.InterruptionKind
		deadline time.Time
		want     time.Time
		has      bool
	}{
		{"spot: the lead before the deadline", cloudprovider.SpotInterruption, now.Add(2 * time.Minute), now.Add(105 * time.Second), true},
		{"maintenance: the lead before the deadline", cloudprovider.ScheduledMaintenance, now.Add(10 * time.Minute), now.Add(10*time.Minute - 15*time.Second), true},
		{"less time left than the lead: the deadline", cloudprovider.SpotInterruption, now.Add(10 * time.Second), now.Add(10 * time.Second), true},
		{"the deadline passed: now", cloudprovider.SpotInterruption, now.Add(-time.Second), now, true},
		{"stopped without a deadline: now", cloudprovider.InstanceStopped, time.Time{}, now, true},
		{"no deadline: none", cloudprovider.ScheduledMaintenance, time.Time{}, time.Time{}, false},
		{"rebalance: none", cloudprovider.RebalanceRecommendation, now.Add(time.Minute), time.Time{}, false},
	} {
		got, has := c.terminationTime(cloudprovider.InterruptionMessage{Kind: tc.kind, Deadline: tc.deadline}, now)
		if has != tc.has || !got.Equal(tc.want) {
			t.Errorf("%s: %v %v, want %v %v", tc.name, got, has, tc.want, tc.has)
		}
	}
}

func TestEarlier(t *testing.T) {
	at := t0.Add(90 * time.Second)
	for _, tc := range []struct {
		annotation string
		want       bool
	}{
		{"", true},
		{"garbage", true},
		{at.Add(time.Second).Format(time.RFC3339), true},
		{at.Format(time.RFC3339), false},
		{at.Add(-time.Second).Format(time.RFC3339), false},
	} {
		if got := earlier(at.Add(300*time.Millisecond), tc.annotation); got != tc.want {
			t.Errorf("earlier than %q: %v, want %v", tc.annotation, got, tc.want)
		}
	}
}

// Start polls, acknowledges what it handled, survives a failing receive, and returns when its
// context ends.
func TestStartAcknowledgesAndStops(t *testing.T) {
	q := newQueue(nil)
	q.receiveErr = errors.New("the queue is unavailable")
	c := newTestController(t, q, nil, Options{PollInterval: 10 * time.Millisecond, Workers: 2})
	unmanaged0, invalid0, errs0 := actions(string(cloudprovider.SpotInterruption), ActionUnmanaged), actions("unknown", ActionInvalid), testutil.ToFloat64(ReceiveErrors)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for testutil.ToFloat64(ReceiveErrors) == errs0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	q.mu.Lock()
	q.receiveErr = nil
	q.mu.Unlock()
	q.add(msg("gone", "sim://r/z/i-gone", cloudprovider.SpotInterruption), msg("odd", "sim://r/z/i-odd", "Meteor"))
	for (q.ackCount("gone") == 0 || q.ackCount("odd") == 0) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start returned %v", err)
	}
	if testutil.ToFloat64(ReceiveErrors) == errs0 {
		t.Error("the failed receive was not counted")
	}
	if q.ackCount("gone") != 1 || q.ackCount("odd") != 1 {
		t.Fatalf("acknowledged the unknown instance's message %d times and the odd one %d times, want once each", q.ackCount("gone"), q.ackCount("odd"))
	}
	if d := actions(string(cloudprovider.SpotInterruption), ActionUnmanaged) - unmanaged0; d != 1 {
		t.Errorf("counted %v unmanaged messages, want 1", d)
	}
	if d := actions("unknown", ActionInvalid) - invalid0; d != 1 {
		t.Errorf("counted %v invalid messages, want 1", d)
	}
}

// A spot interruption of an instance whose NodeClaim is another autoscaler's (its nodeClassRef
// is an EC2NodeClass while the simulated provider runs) is dropped as unmanaged: the claim is
// not deleted and its node not drained.
func TestHandleLeavesAnotherAutoscalersClaimAlone(t *testing.T) {
	c := newTestController(t, newQueue(nil), clocktesting.NewFakeClock(t0), Options{})
	const id = "aws:///us-east-1a/i-0123456789abcdef0"
	claim := &apisv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "karpenter-default-abc"},
		Spec:       apisv1.NodeClaimSpec{NodeClassRef: &apisv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}},
		Status:     apisv1.NodeClaimStatus{ProviderID: id},
	}
	ctx := context.Background()
	if err := c.deps.Client.Create(ctx, claim); err != nil {
		t.Fatal(err)
	}
	action, err := c.handle(ctx, msg("m", id, cloudprovider.SpotInterruption))
	if err != nil || action != ActionUnmanaged {
		t.Fatalf("handle = %q, %v; want %q", action, err, ActionUnmanaged)
	}
	got := &apisv1.NodeClaim{}
	if err := c.deps.Client.Get(ctx, client.ObjectKeyFromObject(claim), got); err != nil || got.DeletionTimestamp != nil {
		t.Errorf("Karpenter's claim after the message: %v, deleting %v", err, got.DeletionTimestamp)
	}
}

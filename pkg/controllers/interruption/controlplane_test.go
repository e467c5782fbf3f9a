package interruption

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/ctrltest"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/index"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/termination"
	"github.com/tenon-sh/tenon/pkg/events"
	"github.com/tenon-sh/tenon/pkg/state"
)

// harness is a control plane with the NodeClaim controllers and the simulated provider
// running; the tests build interruption controllers on it and drive them poll by poll.
type harness struct {
	e        *ctrltest.Env
	m        *ctrltest.Manager
	cluster  *state.Cluster
	client   *failingClient
	recorder *events.Recorder
	triggers *counting
}

// TestOnControlPlane runs the controller against a real API server with the simulated cloud.
// The cases run one after another: they read process-wide metrics.
func TestOnControlPlane(t *testing.T) {
	e := ctrltest.Start(t)
	h := &harness{e: e, triggers: &counting{}}
	opts := ctrltest.FastOptions()
	opts.Setup = func(mgr manager.Manager, _ *ctrltest.Manager) error {
		h.cluster = state.NewCluster(clock.RealClock{})
		if err := h.cluster.Register(context.Background(), mgr.GetCache()); err != nil {
			return err
		}
		h.client = &failingClient{Client: mgr.GetClient(), failures: map[string]int{}, deletes: map[string]int{}}
		h.recorder = events.New(mgr.GetEventRecorderFor(ControllerName), events.Options{}) //nolint:staticcheck // as Register does
		return index.Setup(context.Background(), mgr)
	}
	h.m = e.StartManager(t, opts)
	spec := ctrltest.FastSpec()
	spec.Zones = []string{"us-east-1a", "us-east-1b"}
	e.NodeClass(t, "intr", spec)
	maint := ctrltest.FastSpec()
	maint.Interruptions = simv1alpha1.Interruptions{MaintenanceNotice: ctrltest.Dur("12s")}
	e.NodeClass(t, "maint", maint)
	e.Namespace(t, "intr")

	t.Run("SpotInterruption", func(t *testing.T) { testSpotInterruption(t, h) })
	t.Run("FailureIsRedelivered", func(t *testing.T) { testFailureRedelivered(t, h) })
	t.Run("UnmanagedAndInvalid", func(t *testing.T) { testUnmanagedAndInvalid(t, h) })
	t.Run("DrainEndsBeforeDeadline", func(t *testing.T) { testDrainBeforeDeadline(t, h) })
	t.Run("InstanceStopped", func(t *testing.T) { testInstanceStopped(t, h) })
	t.Run("RebalanceRecommendation", func(t *testing.T) { testRebalance(t, h) })
}

// controller returns a new controller (a restarted process remembers nothing) on q.
func (h *harness) controller(t *testing.T, q cloudprovider.InterruptionQueue, opts Options) *Controller {
	t.Helper()
	c, err := New(Deps{
		Queue: q, Cluster: h.cluster, Client: h.client, Unavailable: h.m.Unavailable,
		Provisioner: h.triggers, Recorder: h.recorder,
	}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// launch creates a NodeClaim of m5.large of the capacity type on the node class and waits
// until it is initialized and the mirror has it and its Node; it returns the claim.
func (h *harness) launch(t *testing.T, name, class, capacityType string) *apisv1.NodeClaim {
	t.Helper()
	claim := ctrltest.NewClaim(name, "default", class,
		ctrltest.Req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large"),
		ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, capacityType))
	h.e.Create(t, claim)
	claim = h.e.WaitCondition(t, name, apisv1.ConditionTypeInitialized)
	ctrltest.Eventually(t, "the mirror has NodeClaim "+name+" and its Node", func() (bool, string) {
		c, n := h.cluster.ByProviderID(claim.Status.ProviderID)
		return c != nil && n != nil, fmt.Sprintf("claim %v node %v", c != nil, n != nil)
	})
	return claim
}

// heldPod creates a pod on the node that the drain waits for (do-not-disrupt) and waits until
// it runs.
func (h *harness) heldPod(t *testing.T, name, node string) {
	t.Helper()
	pod := ctrltest.NewPod("intr", name, node)
	pod.Annotations = map[string]string{apisv1.DoNotDisruptAnnotationKey: "true"}
	h.e.Create(t, pod)
	h.e.PodRunning(t, "intr", name, node)
}

func tainted(n *corev1.Node) int {
	count := 0
	for _, t := range n.Spec.Taints {
		if t.MatchTaint(&apisv1.DisruptedNoScheduleTaint) {
			count++
		}
	}
	return count
}

// receive polls once and returns the message of the kind about the claim's instance that the
// queue delivered, failing t when it delivered none.
func receive(t *testing.T, c *Controller, q *testQueue, claim *apisv1.NodeClaim, kind cloudprovider.InterruptionKind) cloudprovider.InterruptionMessage {
	t.Helper()
	pollOnce(context.Background(), c)
	m, ok := q.lastReceived(claim.Status.ProviderID, kind)
	if !ok {
		t.Fatalf("the queue delivered no %s message about %s", kind, claim.Status.ProviderID)
	}
	return m
}

func testSpotInterruption(t *testing.T, h *harness) {
	ctx := context.Background()
	claim := h.launch(t, "spot-1", "intr", apisv1.CapacityTypeSpot)
	node := claim.Status.NodeName
	h.heldPod(t, "spot-held", node)
	kind := string(cloudprovider.SpotInterruption)
	received0, drained0, triggers0 := received(kind), actions(kind, ActionDrain), h.triggers.n.Load()

	at := time.Now()
	if err := h.m.Provider.Interrupt(ctx, claim.Status.ProviderID, cloudprovider.SpotInterruption, at); err != nil {
		t.Fatal(err)
	}
	q := newQueue(h.m.Provider)
	c := h.controller(t, q, Options{DrainLead: 15 * time.Second})
	m := receive(t, c, q, claim, cloudprovider.SpotInterruption)
	if q.ackCount(m.ID) != 1 {
		t.Fatalf("the message was acknowledged %d times, want once", q.ackCount(m.ID))
	}
	if want := at.Truncate(time.Microsecond).Add(2 * time.Minute); !m.Deadline.Equal(want) {
		t.Fatalf("the notice's deadline is %v, want two minutes after the interruption (%v)", m.Deadline, want)
	}

	got := h.e.Claim(t, claim.Name)
	if got == nil || got.DeletionTimestamp.IsZero() {
		t.Fatal("the interrupted NodeClaim is not being deleted")
	}
	wantBy := m.Deadline.Add(-15 * time.Second).UTC().Format(time.RFC3339)
	if v := got.Annotations[apisv1.NodeTerminationTimestampAnnotationKey]; v != wantBy {
		t.Errorf("termination time %q, want %q (15s before the deadline)", v, wantBy)
	}
	if n := h.e.Node(t, node); n == nil || tainted(n) != 1 {
		t.Errorf("the Node is not tainted %s once: %+v", apisv1.DisruptedNoScheduleTaint.ToString(), n)
	}
	if !h.cluster.IsMarkedForDeletion(claim.Name) || !h.cluster.IsMarkedForDeletion(node) {
		t.Error("the NodeClaim and its Node are not marked for deletion in the mirror")
	}
	if h.triggers.n.Load() == triggers0 {
		t.Error("the provisioner was not asked to plan the replacement")
	}
	zone := claim.Labels[apisv1.LabelZone]
	if !h.m.Unavailable.IsUnavailable("m5.large", zone, apisv1.CapacityTypeSpot) {
		t.Errorf("the interrupted offering m5.large/%s/spot is not marked unavailable", zone)
	}
	if h.m.Unavailable.IsUnavailable("m5.large", zone, apisv1.CapacityTypeOnDemand) {
		t.Errorf("the on-demand offering m5.large/%s was marked unavailable too", zone)
	}
	for _, name := range []string{claim.Name, node} {
		ev := h.e.WaitEvent(t, name, kind)
		if ev.Type != corev1.EventTypeWarning || !contains(ev.Message, claim.Name, node, m.Deadline.UTC().Format(time.RFC3339), wantBy) {
			t.Errorf("event on %s: %s %q; want a warning naming the claim, the node, the deadline and the termination time", name, ev.Type, ev.Message)
		}
	}
	if d := received(kind) - received0; d != 1 {
		t.Errorf("counted %v spot interruptions received, want 1", d)
	}
	if d := actions(kind, ActionDrain) - drained0; d != 1 {
		t.Errorf("counted %v drains, want 1", d)
	}

	// Acknowledged: the next poll has nothing to do.
	pollOnce(ctx, c)
	if _, ok := q.lastReceived(claim.Status.ProviderID, cloudprovider.SpotInterruption); ok {
		t.Error("the queue delivered the acknowledged message again")
	}

	// Delivered again to a restarted controller (as after a crash between acting and
	// acknowledging): nothing more happens.
	q.add(m)
	restarted := h.controller(t, q, Options{DrainLead: 15 * time.Second})
	pollOnce(ctx, restarted)
	if q.ackCount(m.ID) != 2 {
		t.Fatalf("the redelivered message was acknowledged %d times in all, want 2", q.ackCount(m.ID))
	}
	if n := h.client.deleteCount(claim.Name); n != 1 {
		t.Errorf("the NodeClaim was deleted %d times, want once", n)
	}
	if again := h.e.Claim(t, claim.Name); again == nil || again.Annotations[apisv1.NodeTerminationTimestampAnnotationKey] != wantBy {
		t.Errorf("the redelivery changed the claim: %+v", again)
	}
	if n := h.e.Node(t, node); n == nil || tainted(n) != 1 {
		t.Errorf("after the redelivery the Node carries the taint %d times, want once", tainted(n))
	}
	if evs := h.e.Events(t, claim.Name, kind); len(evs) != 1 || evs[0].Count != 1 {
		t.Errorf("events on the claim after the redelivery: %+v; want one, sent once", evs)
	}

	// The do-not-disrupt pod holds the drain until its termination time; once it goes, the
	// node and the claim go.
	deletePod(t, h, "spot-held")
	h.e.WaitGone(t, "", claim.Name, &apisv1.NodeClaim{})
	h.e.WaitGone(t, "", node, &corev1.Node{})
	if h.cluster.IsMarkedForDeletion(claim.Name) || h.cluster.IsMarkedForDeletion(node) {
		t.Error("the mirror still marks the deleted NodeClaim or Node")
	}
}

func deletePod(t *testing.T, h *harness, name string) {
	t.Helper()
	pod := &corev1.Pod{}
	if !h.e.Get(t, "intr", name, pod) {
		return
	}
	if err := h.e.Client.Delete(context.Background(), pod, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	h.e.WaitGone(t, "intr", name, &corev1.Pod{})
}

func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// A failure leaves the message in the queue; it is retried after a delay and acknowledged
// once the action succeeds, and the failed attempt leaves no deletion mark behind.
func testFailureRedelivered(t *testing.T, h *harness) {
	ctx := context.Background()
	claim := h.launch(t, "fail-1", "intr", apisv1.CapacityTypeOnDemand)
	node := claim.Status.NodeName
	kind := string(cloudprovider.ScheduledMaintenance)
	failures0, drained0 := failures(kind), actions(kind, ActionDrain)
	h.client.failDeletes(claim.Name, 2)
	if err := h.m.Provider.Interrupt(ctx, claim.Status.ProviderID, cloudprovider.ScheduledMaintenance, time.Now()); err != nil {
		t.Fatal(err)
	}
	q := newQueue(h.m.Provider)
	c := h.controller(t, q, Options{PollInterval: 2 * time.Second})
	m := receive(t, c, q, claim, cloudprovider.ScheduledMaintenance)
	if q.ackCount(m.ID) != 0 {
		t.Fatal("a message whose handling failed was acknowledged")
	}
	if d := failures(kind) - failures0; d != 1 {
		t.Errorf("counted %v failures, want 1", d)
	}
	if h.cluster.IsMarkedForDeletion(claim.Name) || h.cluster.IsMarkedForDeletion(node) {
		t.Error("the failed attempt left the NodeClaim or Node marked for deletion")
	}
	if got := h.e.Claim(t, claim.Name); got == nil || !got.DeletionTimestamp.IsZero() {
		t.Fatal("the NodeClaim is being deleted although the delete failed")
	}
	// The message is still in the queue, and is retried once its delay has passed, not on
	// every poll.
	pollOnce(ctx, c)
	if _, ok := q.lastReceived(claim.Status.ProviderID, cloudprovider.ScheduledMaintenance); !ok {
		t.Fatal("the queue no longer delivers the message that failed")
	}
	if n := h.client.deleteCount(claim.Name); n != 1 {
		t.Fatalf("the delete was tried %d times right after the failure, want once (the retry waits)", n)
	}
	ctrltest.Eventually(t, "the message is acknowledged after the failures", func() (bool, string) {
		pollOnce(ctx, c)
		return q.ackCount(m.ID) == 1, fmt.Sprintf("%d deletes tried", h.client.deleteCount(claim.Name))
	})
	if n := h.client.deleteCount(claim.Name); n != 3 {
		t.Errorf("the delete was tried %d times, want 3 (two failures, one success)", n)
	}
	if d := failures(kind) - failures0; d != 2 {
		t.Errorf("counted %v failures, want 2", d)
	}
	if d := actions(kind, ActionDrain) - drained0; d != 1 {
		t.Errorf("counted %v drains, want 1", d)
	}
	h.e.WaitGone(t, "", claim.Name, &apisv1.NodeClaim{})
	h.e.WaitGone(t, "", node, &corev1.Node{})
}

// Messages about instances no NodeClaim has, and malformed ones, are acknowledged and counted.
func testUnmanagedAndInvalid(t *testing.T, h *harness) {
	spot := string(cloudprovider.SpotInterruption)
	unmanaged0, invalidKind0, noInstance0 := actions(spot, ActionUnmanaged), actions("unknown", ActionInvalid), actions(spot, ActionInvalid)
	q := newQueue(nil)
	q.add(
		cloudprovider.InterruptionMessage{ID: "stranger", Kind: cloudprovider.SpotInterruption, ProviderID: "sim://us-east-1/us-east-1a/i-00000000000000000", Received: time.Now()},
		cloudprovider.InterruptionMessage{ID: "odd-kind", Kind: "Meteor", ProviderID: "sim://us-east-1/us-east-1a/i-00000000000000001"},
		cloudprovider.InterruptionMessage{ID: "no-instance", Kind: cloudprovider.SpotInterruption},
	)
	c := h.controller(t, q, Options{})
	pollOnce(context.Background(), c)
	for _, id := range []string{"stranger", "odd-kind", "no-instance"} {
		if q.ackCount(id) != 1 {
			t.Errorf("message %s acknowledged %d times, want once", id, q.ackCount(id))
		}
	}
	if d := actions(spot, ActionUnmanaged) - unmanaged0; d != 1 {
		t.Errorf("counted %v messages about unmanaged instances, want 1", d)
	}
	if d := actions("unknown", ActionInvalid) - invalidKind0; d != 1 {
		t.Errorf("counted %v messages of unknown kinds, want 1", d)
	}
	if d := actions(spot, ActionInvalid) - noInstance0; d != 1 {
		t.Errorf("counted %v messages naming no instance, want 1", d)
	}
}

// With a notice of 12s and a lead of 6s, the drain waits for a do-not-disrupt pod until 6s
// after the notice, less the pod's own grace period, and the node is gone before the deadline.
func testDrainBeforeDeadline(t *testing.T, h *harness) {
	ctx := context.Background()
	claim := h.launch(t, "maint-1", "maint", apisv1.CapacityTypeOnDemand)
	node := claim.Status.NodeName
	h.heldPod(t, "maint-held", node)
	at := time.Now()
	if err := h.m.Provider.Interrupt(ctx, claim.Status.ProviderID, cloudprovider.ScheduledMaintenance, at); err != nil {
		t.Fatal(err)
	}
	q := newQueue(h.m.Provider)
	c := h.controller(t, q, Options{DrainLead: 6 * time.Second})
	m := receive(t, c, q, claim, cloudprovider.ScheduledMaintenance)
	if want := at.Truncate(time.Microsecond).Add(12 * time.Second); !m.Deadline.Equal(want) {
		t.Fatalf("deadline %v, want %v", m.Deadline, want)
	}
	var gone time.Time
	ctrltest.Eventually(t, "the NodeClaim and Node are gone", func() (bool, string) {
		if h.e.Claim(t, claim.Name) != nil || h.e.Node(t, node) != nil {
			return false, "still there"
		}
		gone = time.Now()
		return true, ""
	})
	if !gone.Before(m.Deadline) {
		t.Errorf("the node was gone at %v, after the notice's deadline %v", gone, m.Deadline)
	}
	ev := h.e.WaitEvent(t, "maint-held", termination.ReasonDeleted)
	// Deleted 1s (its grace period) before the termination time, at+5s; event times have
	// whole seconds.
	if earliest := at.Add(4 * time.Second); ev.FirstTimestamp.Time.Before(earliest) {
		t.Errorf("the do-not-disrupt pod was deleted at %v, before its grace period before the termination time (%v)", ev.FirstTimestamp.Time, earliest)
	}
}

// An instance already stopped is drained at once: nothing on it can run any more.
func testInstanceStopped(t *testing.T, h *harness) {
	claim := h.launch(t, "stopped-1", "intr", apisv1.CapacityTypeOnDemand)
	node := claim.Status.NodeName
	h.heldPod(t, "stopped-held", node)
	q := newQueue(nil)
	q.add(cloudprovider.InterruptionMessage{ID: "stopped-1", Kind: cloudprovider.InstanceStopped, ProviderID: claim.Status.ProviderID, Received: time.Now()})
	c := h.controller(t, q, Options{})
	pollOnce(context.Background(), c)
	if q.ackCount("stopped-1") != 1 {
		t.Fatal("the message was not acknowledged")
	}
	h.e.WaitEvent(t, "stopped-held", termination.ReasonDeleted)
	h.e.WaitGone(t, "", claim.Name, &apisv1.NodeClaim{})
	h.e.WaitGone(t, "", node, &corev1.Node{})
	ev := h.e.WaitEvent(t, node, string(cloudprovider.InstanceStopped))
	if ev.Type != corev1.EventTypeWarning {
		t.Errorf("the event on the node is %s, want a warning", ev.Type)
	}
}

// A rebalance recommendation is only recorded by default; with ReplaceOnRebalance the node is
// replaced, within its own terminationGracePeriod (no deadline is set).
func testRebalance(t *testing.T, h *harness) {
	ctx := context.Background()
	claim := h.launch(t, "rebalance-1", "intr", apisv1.CapacityTypeSpot)
	node := claim.Status.NodeName
	kind := string(cloudprovider.RebalanceRecommendation)
	none0, drained0 := actions(kind, ActionNone), actions(kind, ActionDrain)
	if err := h.m.Provider.Interrupt(ctx, claim.Status.ProviderID, cloudprovider.RebalanceRecommendation, time.Now()); err != nil {
		t.Fatal(err)
	}
	q := newQueue(h.m.Provider)
	m := receive(t, h.controller(t, q, Options{}), q, claim, cloudprovider.RebalanceRecommendation)
	if q.ackCount(m.ID) != 1 {
		t.Fatal("the recommendation was not acknowledged")
	}
	ev := h.e.WaitEvent(t, claim.Name, kind)
	if ev.Type != corev1.EventTypeNormal || !strings.Contains(ev.Message, "no action") {
		t.Errorf("event %s %q, want a normal event saying nothing was done", ev.Type, ev.Message)
	}
	h.e.WaitEvent(t, node, kind)
	if got := h.e.Claim(t, claim.Name); got == nil || !got.DeletionTimestamp.IsZero() {
		t.Fatal("a rebalance recommendation deleted the NodeClaim by default")
	}
	if n := h.e.Node(t, node); n == nil || tainted(n) != 0 || h.cluster.IsMarkedForDeletion(node) {
		t.Error("a rebalance recommendation tainted or marked the node by default")
	}
	if d := actions(kind, ActionNone) - none0; d != 1 {
		t.Errorf("counted %v recommendations without action, want 1", d)
	}
	if h.m.Unavailable.IsUnavailable("m5.large", claim.Labels[apisv1.LabelZone], apisv1.CapacityTypeSpot) {
		t.Error("a rebalance recommendation marked the offering unavailable")
	}

	h.heldPod(t, "rebalance-held", node)
	if err := h.m.Provider.Interrupt(ctx, claim.Status.ProviderID, cloudprovider.RebalanceRecommendation, time.Now().Add(10*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	q = newQueue(h.m.Provider)
	c := h.controller(t, q, Options{ReplaceOnRebalance: true})
	ctrltest.Eventually(t, "the second recommendation is handled", func() (bool, string) {
		pollOnce(ctx, c)
		return actions(kind, ActionDrain)-drained0 == 1, ""
	})
	got := h.e.Claim(t, claim.Name)
	if got == nil || got.DeletionTimestamp.IsZero() {
		t.Fatal("with ReplaceOnRebalance the NodeClaim is not being deleted")
	}
	if v, ok := got.Annotations[apisv1.NodeTerminationTimestampAnnotationKey]; ok {
		t.Errorf("a recommendation set a termination time %q; it has no deadline", v)
	}
	if n := h.e.Node(t, node); n == nil || tainted(n) != 1 {
		t.Error("with ReplaceOnRebalance the node is not tainted")
	}
	deletePod(t, h, "rebalance-held")
	h.e.WaitGone(t, "", claim.Name, &apisv1.NodeClaim{})
	h.e.WaitGone(t, "", node, &corev1.Node{})
}

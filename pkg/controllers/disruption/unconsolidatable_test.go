package disruption

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/disruption"
)

// An Unconsolidatable event goes to a node and its NodeClaim at most once per
// UnconsolidatableInterval, however many passes skip them meanwhile; after the interval the
// next skip records it again.
func TestUnconsolidatableEventsAreRecordedOncePerInterval(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	rec := record.NewFakeRecorder(100)
	c := &Controller{deps: Deps{Clock: clk, Recorder: rec}, unconsolidatable: map[types.UID]time.Time{}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "node-uid"}}
	claim := &apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c1", UID: "claim-uid"}}
	view := &View{Nodes: map[string]*corev1.Node{"n1": node}, Claims: map[string]*apisv1.NodeClaim{"n1": claim}}
	skip := disruption.Skip{Node: "n1", Reason: disruption.SkipUnschedulable, Message: "1 of its pods would fit nowhere"}

	events := func() int {
		n := 0
		for {
			select {
			case <-rec.Events:
				n++
			default:
				return n
			}
		}
	}
	c.recordUnconsolidatable(view, skip)
	if got := events(); got != 2 {
		t.Fatalf("first skip: %d events, want 2 (node and nodeclaim)", got)
	}
	for _, step := range []time.Duration{10 * time.Second, 5 * time.Minute, 9*time.Minute + 49*time.Second} { // up to 14m59s
		clk.Step(step)
		c.recordUnconsolidatable(view, skip)
		if got := events(); got != 0 {
			t.Fatalf("%s after the first event: %d events, want none within %s", clk.Since(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)), got, UnconsolidatableInterval)
		}
	}
	clk.Step(time.Second) // 15m: the interval is over
	c.recordUnconsolidatable(view, skip)
	if got := events(); got != 2 {
		t.Fatalf("after %s: %d events, want 2 again", UnconsolidatableInterval, got)
	}
	if len(c.unconsolidatable) != 2 {
		t.Fatalf("%d objects remembered, want 2 (old entries are dropped)", len(c.unconsolidatable))
	}
}

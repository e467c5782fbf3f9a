package interruption

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated"
)

// testQueue is an InterruptionQueue of messages added by the test, in front of an optional
// real one; it can fail acknowledgements and remembers the ones that succeeded.
type testQueue struct {
	inner cloudprovider.InterruptionQueue

	mu         sync.Mutex
	extra      []cloudprovider.InterruptionMessage
	failDone   map[string]int // message ID → acknowledgements still to fail
	acked      []string
	receiveErr error
	received   []cloudprovider.InterruptionMessage // what the last Receive returned
}

func newQueue(inner cloudprovider.InterruptionQueue) *testQueue {
	return &testQueue{inner: inner, failDone: map[string]int{}}
}

func (q *testQueue) add(ms ...cloudprovider.InterruptionMessage) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.extra = append(q.extra, ms...)
}

func (q *testQueue) Receive(ctx context.Context) ([]cloudprovider.InterruptionMessage, error) {
	q.mu.Lock()
	err := q.receiveErr
	out := slices.Clone(q.extra)
	q.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if q.inner != nil {
		ms, err := q.inner.Receive(ctx)
		if err != nil {
			return nil, err
		}
		out = append(ms, out...)
	}
	q.mu.Lock()
	q.received = out
	q.mu.Unlock()
	return out, nil
}

// NodeClasses are the simulated provider's: the queue stands in front of its messages.
func (q *testQueue) NodeClasses() []schema.GroupKind { return simulated.NodeClasses }

func (q *testQueue) Done(ctx context.Context, id string) error {
	q.mu.Lock()
	if q.failDone[id] > 0 {
		q.failDone[id]--
		q.mu.Unlock()
		return errors.New("the queue is unavailable")
	}
	q.acked = append(q.acked, id)
	q.extra = slices.DeleteFunc(q.extra, func(m cloudprovider.InterruptionMessage) bool { return m.ID == id })
	q.mu.Unlock()
	if q.inner != nil {
		return q.inner.Done(ctx, id)
	}
	return nil
}

// ackCount is how many times the message was acknowledged.
func (q *testQueue) ackCount(id string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, a := range q.acked {
		if a == id {
			n++
		}
	}
	return n
}

// lastReceived returns the message of the last Receive about providerID with kind.
func (q *testQueue) lastReceived(providerID string, kind cloudprovider.InterruptionKind) (cloudprovider.InterruptionMessage, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, m := range q.received {
		if m.ProviderID == providerID && m.Kind == kind {
			return m, true
		}
	}
	return cloudprovider.InterruptionMessage{}, false
}

// pollOnce does what one turn of Start does, handling the admitted messages in turn.
func pollOnce(ctx context.Context, c *Controller) {
	msgs, err := c.deps.Queue.Receive(ctx)
	if err != nil {
		ReceiveErrors.Inc()
		return
	}
	for _, m := range c.admit(msgs) {
		c.process(ctx, m)
	}
}

// counting counts provisioning triggers.
type counting struct{ n atomic.Int64 }

func (c *counting) Trigger() { c.n.Add(1) }

// failingClient fails the first deletes of named NodeClaims and counts every delete of one.
type failingClient struct {
	client.Client

	mu       sync.Mutex
	failures map[string]int // NodeClaim name → deletes still to fail
	deletes  map[string]int // NodeClaim name → deletes sent
}

func (f *failingClient) failDeletes(name string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures[name] = n
}

func (f *failingClient) deleteCount(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.deletes[name]
}

func (f *failingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if _, ok := obj.(*apisv1.NodeClaim); ok {
		f.mu.Lock()
		f.deletes[obj.GetName()]++
		fail := f.failures[obj.GetName()] > 0
		if fail {
			f.failures[obj.GetName()]--
		}
		f.mu.Unlock()
		if fail {
			return errors.New("injected failure: the API server refused the delete")
		}
	}
	return f.Client.Delete(ctx, obj, opts...)
}

// metric reads a counter of a vector.
func actions(kind, action string) float64 {
	return testutil.ToFloat64(Actions.WithLabelValues(kind, action))
}
func received(kind string) float64 { return testutil.ToFloat64(Received.WithLabelValues(kind)) }
func failures(kind string) float64 { return testutil.ToFloat64(Failures.WithLabelValues(kind)) }

package interruption

import (
	"context"
	"fmt"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/tenon-sh/tenon/internal/recovery"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/index"
	"github.com/tenon-sh/tenon/pkg/events"
	"github.com/tenon-sh/tenon/pkg/metrics"
)

// forgetAfter is how long a message that no Receive returns any more is remembered (as
// acknowledged, or with its failures) before it is forgotten.
const forgetAfter = 2 * time.Minute

// Controller polls an InterruptionQueue and acts on its messages (see the package
// documentation). It is a manager Runnable that runs on the leader only.
type Controller struct {
	deps Deps
	opts Options

	mu       sync.Mutex
	messages map[string]*tracked // by message ID
}

// tracked is what the controller remembers about one message.
type tracked struct {
	providerID string
	// busy: a worker has the message.
	busy bool
	// counted: the message was counted as received.
	counted bool
	// acked: the message was acted on and acknowledged; a Receive that raced the
	// acknowledgement may return it once more, and it is not handled again.
	acked bool
	// failures in a row, and when the next attempt may run.
	failures int
	retryAt  time.Time
	// seen is when a Receive last returned the message.
	seen time.Time
}

var _ manager.LeaderElectionRunnable = (*Controller)(nil)

// New returns a controller.
func New(deps Deps, opts Options) (*Controller, error) {
	if err := deps.defaults(); err != nil {
		return nil, err
	}
	opts.defaults()
	deps.Log = deps.Log.WithName(ControllerName)
	return &Controller{deps: deps, opts: opts, messages: map[string]*tracked{}}, nil
}

// Register adds a controller to mgr, defaulting deps.Client to the manager's client and
// deps.Recorder to a de-duplicating recorder on the manager's.
func Register(mgr manager.Manager, deps Deps, opts Options) error {
	if deps.Client == nil {
		deps.Client = mgr.GetClient()
	}
	if deps.Recorder == nil {
		deps.Recorder = events.New(mgr.GetEventRecorderFor(ControllerName), events.Options{}) //nolint:staticcheck // the provisioner records through the same API
	}
	c, err := New(deps, opts)
	if err != nil {
		return err
	}
	if err := index.Setup(context.Background(), mgr); err != nil {
		return err
	}
	return mgr.Add(c)
}

// NeedLeaderElection is true: only the leader acts on notices.
func (c *Controller) NeedLeaderElection() bool { return true }

// Start polls the queue every PollInterval and hands the messages due to the workers until
// ctx is done; it returns nil then, once the workers have finished what they were doing. A
// failed receive is logged and counted, and the next poll runs on schedule.
func (c *Controller) Start(ctx context.Context) error {
	ctx = metrics.WithController(ctx, ControllerName)
	work := make(chan cloudprovider.InterruptionMessage)
	var wg sync.WaitGroup
	for range c.opts.Workers {
		wg.Go(func() {
			for m := range work {
				c.process(ctx, m)
			}
		})
	}
	defer func() {
		close(work)
		wg.Wait()
	}()
	for {
		msgs, err := c.deps.Queue.Receive(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			ReceiveErrors.Inc()
			c.deps.Log.Error(err, "receiving interruption messages")
		}
		for _, m := range c.admit(msgs) {
			select {
			case work <- m:
			case <-ctx.Done():
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-c.deps.Clock.After(c.opts.PollInterval):
		}
	}
}

// admit returns the messages of one receive to handle now, marked busy: not busy already,
// not acknowledged already, not waiting for a retry, and about no instance another busy
// message is about. It also forgets messages no receive has returned for a while.
func (c *Controller) admit(msgs []cloudprovider.InterruptionMessage) []cloudprovider.InterruptionMessage {
	now := c.deps.Clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	busy := map[string]bool{}
	for _, t := range c.messages {
		if t.busy {
			busy[t.providerID] = true
		}
	}
	var out []cloudprovider.InterruptionMessage
	for _, m := range msgs {
		t := c.messages[m.ID]
		if t == nil {
			t = &tracked{providerID: m.ProviderID}
			c.messages[m.ID] = t
		}
		t.seen = now
		if t.busy || t.acked || now.Before(t.retryAt) || (m.ProviderID != "" && busy[m.ProviderID]) {
			continue
		}
		t.busy = true
		if m.ProviderID != "" {
			busy[m.ProviderID] = true
		}
		out = append(out, m)
	}
	for id, t := range c.messages {
		if !t.busy && now.Sub(t.seen) > forgetAfter {
			delete(c.messages, id)
		}
	}
	return out
}

// process handles one admitted message and acknowledges it, or leaves it for redelivery.
func (c *Controller) process(ctx context.Context, m cloudprovider.InterruptionMessage) {
	kind := kindLabel(m.Kind)
	c.mu.Lock()
	t := c.messages[m.ID]
	first := !t.counted
	t.counted = true
	c.mu.Unlock()
	if first {
		Received.WithLabelValues(kind).Inc()
	}

	// A panic while handling the message fails it like an error: it is delivered again later.
	var action string
	err := recovery.Guard(c.deps.Log, ControllerName, func() error {
		var err error
		action, err = c.handle(ctx, m)
		return err
	})
	if err == nil {
		if derr := c.deps.Queue.Done(ctx, m.ID); derr != nil {
			err = fmt.Errorf("acknowledging the message: %w", derr)
		}
	}
	now := c.deps.Clock.Now()
	c.mu.Lock()
	t.busy = false
	if err == nil {
		t.acked, t.failures, t.retryAt = true, 0, time.Time{}
	} else {
		t.failures++
		t.retryAt = now.Add(c.retryDelay(t.failures))
	}
	c.mu.Unlock()

	log := c.deps.Log.WithValues("message", m.ID, "kind", m.Kind, "providerID", m.ProviderID)
	if err != nil {
		Failures.WithLabelValues(kind).Inc()
		if ctx.Err() == nil {
			log.Error(err, "handling an interruption message; it will be delivered again")
		}
		return
	}
	Actions.WithLabelValues(kind, action).Inc()
	if !m.Received.IsZero() {
		Latency.WithLabelValues(kind).Observe(max(0, now.Sub(m.Received).Seconds()))
	}
	log.V(1).Info("handled an interruption message", "action", action)
}

// retryDelay is the wait after the nth failure in a row: PollInterval doubling, at most
// retryMax.
func (c *Controller) retryDelay(failures int) time.Duration {
	d := c.opts.PollInterval
	for i := 1; i < failures && d < retryMax; i++ {
		d *= 2
	}
	return min(d, max(retryMax, c.opts.PollInterval))
}

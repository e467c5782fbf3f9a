package simulated

import (
	"context"
	"slices"

	"github.com/tenon-sh/tenon/pkg/cloudprovider"
)

// messageQueue holds the interruption messages not yet marked done, in the order emitted.
type messageQueue struct {
	messages []cloudprovider.InterruptionMessage
}

// add queues m unless a message with its ID is already queued (a restart re-emits past
// messages; the queue delivers at least once, not twice in a row).
func (q *messageQueue) add(m cloudprovider.InterruptionMessage) {
	if slices.ContainsFunc(q.messages, func(x cloudprovider.InterruptionMessage) bool { return x.ID == m.ID }) {
		return
	}
	q.messages = append(q.messages, m)
}

func (q *messageQueue) done(id string) {
	q.messages = slices.DeleteFunc(q.messages, func(m cloudprovider.InterruptionMessage) bool { return m.ID == id })
}

// Receive returns the interruption messages emitted up to now and not yet marked done, oldest
// first. A message stays until Done; the instance it is about is reclaimed at its deadline
// either way.
func (p *Provider) Receive(ctx context.Context) ([]cloudprovider.InterruptionMessage, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.ready(ctx); err != nil {
		return nil, err
	}
	p.advance(p.now())
	return slices.Clone(p.queue.messages), nil
}

// Done removes a message from the queue; an unknown ID is not an error.
func (p *Provider) Done(_ context.Context, id string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.queue.done(id)
	return nil
}

package provisioning

import (
	"context"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
)

// Batcher gathers triggers into batches: a batch closes once no trigger has come for Idle, or
// Max after it opened, whichever comes first.
type Batcher struct {
	Idle, Max time.Duration
	clock     clock.Clock
	trigger   chan struct{}
	// taken counts the triggers Wait has taken into a batch (tests wait on it).
	taken atomic.Int64
}

// NewBatcher returns a batcher with the given windows.
func NewBatcher(clk clock.Clock, idle, max time.Duration) *Batcher {
	return &Batcher{Idle: idle, Max: max, clock: clk, trigger: make(chan struct{}, 1)}
}

// Trigger opens a batch, or extends the open one. It never blocks; triggers that come while
// one is waiting to be taken count as one.
func (b *Batcher) Trigger() {
	select {
	case b.trigger <- struct{}{}:
	default:
	}
}

// closesAt is when a batch opened at opened whose last trigger came at last closes.
func (b *Batcher) closesAt(opened, last time.Time) time.Time {
	idle, max := last.Add(b.Idle), opened.Add(b.Max)
	if max.Before(idle) {
		return max
	}
	return idle
}

// Wait blocks until a batch has opened and closed, and reports whether it did (false when ctx
// ended first). One timer runs at a time: it is armed for the earliest moment the batch could
// close, and re-armed when a trigger came in the meantime.
func (b *Batcher) Wait(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-b.trigger:
	}
	opened := b.clock.Now()
	last := opened
	b.taken.Add(1)
	timer := b.clock.NewTimer(b.closesAt(opened, last).Sub(opened))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-b.trigger:
			last = b.clock.Now()
			b.taken.Add(1)
		case <-timer.C():
			now := b.clock.Now()
			at := b.closesAt(opened, last)
			if !now.Before(at) {
				return true
			}
			timer.Reset(at.Sub(now))
		}
	}
}

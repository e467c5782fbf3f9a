package provisioning

import (
	"context"
	"time"

	"k8s.io/utils/clock"
)

// Batcher gathers triggers into batches: a batch closes once no trigger has come for Idle, or
// Max after it opened, whichever comes first.
type Batcher struct {
	Idle, Max time.Duration
	clock     clock.Clock
	trigger   chan struct{}
}

// NewBatcher returns a batcher with the given windows.
func NewBatcher(clk clock.Clock, idle, max time.Duration) *Batcher {
	return &Batcher{Idle: idle, Max: max, clock: clk, trigger: make(chan struct{}, 1)}
}

// Trigger opens a batch, or extends the open one. It never blocks.
func (b *Batcher) Trigger() {
	select {
	case b.trigger <- struct{}{}:
	default:
	}
}

// Wait blocks until a batch has opened and closed, and reports whether it did (false when ctx
// ended first).
func (b *Batcher) Wait(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-b.trigger:
	}
	deadline := b.clock.After(b.Max)
	idle := b.clock.NewTimer(b.Idle)
	defer idle.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-b.trigger:
			if !idle.Stop() {
				select {
				case <-idle.C():
				default:
				}
			}
			idle.Reset(b.Idle)
		case <-idle.C():
			return true
		case <-deadline:
			return true
		}
	}
}

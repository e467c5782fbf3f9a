package provisioning

import (
	"context"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// batch runs one Wait of a batcher on a fake clock, and lets the test step the clock only once
// the batcher has taken what it was given.
type batch struct {
	t     *testing.T
	clock *clocktesting.FakeClock
	b     *Batcher
	done  chan bool
	sent  int64
}

func startBatch(t *testing.T, ctx context.Context) *batch {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	bt := &batch{t: t, clock: clk, b: NewBatcher(clk, time.Second, 10*time.Second), done: make(chan bool, 1)}
	go func() { bt.done <- bt.b.Wait(ctx) }()
	return bt
}

// trigger sends one trigger and waits until Wait has taken it.
func (bt *batch) trigger() {
	bt.t.Helper()
	bt.b.Trigger()
	bt.sent++
	bt.until("the trigger is taken", func() bool { return bt.b.taken.Load() == bt.sent })
}

// step advances the clock by d and waits until Wait has either returned or armed its timer again.
func (bt *batch) step(d time.Duration) {
	bt.t.Helper()
	bt.clock.Step(d)
	bt.until("the batcher settles", func() bool { return len(bt.done) > 0 || bt.clock.HasWaiters() })
}

func (bt *batch) until(what string, cond func() bool) {
	bt.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			bt.t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// closed reports whether Wait has returned, and fails the test if it returned false.
func (bt *batch) closed() bool {
	bt.t.Helper()
	select {
	case ok := <-bt.done:
		if !ok {
			bt.t.Fatal("Wait returned false with its context alive")
		}
		bt.done <- ok
		return true
	default:
		return false
	}
}

func TestBatchClosesAfterIdleWithoutTriggers(t *testing.T) {
	bt := startBatch(t, context.Background())
	bt.trigger()
	bt.step(999 * time.Millisecond)
	if bt.closed() {
		t.Fatal("the batch closed before it had been idle for 1s")
	}
	bt.step(time.Millisecond)
	bt.until("the batch closes", func() bool { return bt.closed() })
}

func TestBatchTriggerExtendsTheIdleWindow(t *testing.T) {
	bt := startBatch(t, context.Background())
	bt.trigger()
	bt.step(600 * time.Millisecond)
	bt.trigger()
	bt.step(400 * time.Millisecond) // 1s after it opened, 400ms after the last trigger
	if bt.closed() {
		t.Fatal("a trigger 600ms into the batch must keep it open until 1s after that trigger")
	}
	bt.step(599 * time.Millisecond)
	if bt.closed() {
		t.Fatal("the batch closed 999ms after its last trigger")
	}
	bt.step(time.Millisecond)
	bt.until("the batch closes", func() bool { return bt.closed() })
}

func TestBatchClosesAtMaxWhateverTheTriggers(t *testing.T) {
	bt := startBatch(t, context.Background())
	bt.trigger()
	for elapsed := time.Duration(0); elapsed < 9500*time.Millisecond; {
		bt.step(500 * time.Millisecond)
		elapsed += 500 * time.Millisecond
		if bt.closed() {
			t.Fatalf("the batch closed after %v although a trigger came every 500ms", elapsed)
		}
		bt.trigger()
	}
	bt.step(500 * time.Millisecond) // 10s after it opened
	bt.until("the batch closes at 10s", func() bool { return bt.closed() })
}

func TestBatchTriggersBeforeWaitMakeOneBatch(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	b := NewBatcher(clk, time.Second, 10*time.Second)
	for range 100 {
		b.Trigger() // never blocks
	}
	done := make(chan bool, 1)
	go func() { done <- b.Wait(context.Background()) }()
	bt := &batch{t: t, clock: clk, b: b, done: done}
	bt.until("the trigger is taken", func() bool { return b.taken.Load() == 1 })
	bt.step(time.Second)
	bt.until("the batch closes", func() bool { return bt.closed() })
	if len(b.trigger) != 0 {
		t.Error("the 100 triggers sent before Wait must have made one batch, with none left over")
	}
}

func TestBatchWaitEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	bt := startBatch(t, ctx)
	cancel()
	if ok := <-bt.done; ok {
		t.Error("Wait with no trigger and a cancelled context reported a batch")
	}

	ctx, cancel = context.WithCancel(context.Background())
	bt = startBatch(t, ctx)
	bt.trigger()
	cancel()
	if ok := <-bt.done; ok {
		t.Error("Wait cancelled in the middle of a batch reported it closed")
	}
}

func TestBatchClosesAt(t *testing.T) {
	b := NewBatcher(nil, time.Second, 10*time.Second)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		last, want time.Duration
	}{
		{0, time.Second},
		{3 * time.Second, 4 * time.Second},
		{9 * time.Second, 10 * time.Second},
		{9500 * time.Millisecond, 10 * time.Second},
		{20 * time.Second, 10 * time.Second},
	} {
		if got := b.closesAt(t0, t0.Add(c.last)); !got.Equal(t0.Add(c.want)) {
			t.Errorf("last trigger at +%v: closes at +%v, want +%v", c.last, got.Sub(t0), c.want)
		}
	}
}

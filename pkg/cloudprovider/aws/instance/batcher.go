package instance

import (
	"context"
	"sync"
	"time"
)

// batcher coalesces requests for single keys made within a short window into one call over
// all of them: the window closes Idle after the last request joined it, or Max after the
// first, or once it holds MaxItems keys. Each caller gets its own key's result. It is safe
// for concurrent use.
type batcher[K comparable, V any] struct {
	idle, max time.Duration
	maxItems  int
	// exec serves one window's keys (distinct, in arrival order) and returns each key's
	// result; a key missing from the map gets err (or, when err is nil, notFound(key)).
	exec     func(ctx context.Context, keys []K) (map[K]V, error)
	notFound func(K) error

	mu  sync.Mutex
	cur *window[K, V]
}

// window is one open batch.
type window[K comparable, V any] struct {
	ctx  context.Context
	keys []K
	seen map[K]bool
	poke chan struct{}
	full chan struct{}
	done chan struct{}
	out  map[K]V
	err  error
}

func newBatcher[K comparable, V any](idle, max time.Duration, maxItems int, exec func(context.Context, []K) (map[K]V, error), notFound func(K) error) *batcher[K, V] {
	return &batcher[K, V]{idle: idle, max: max, maxItems: maxItems, exec: exec, notFound: notFound}
}

// Do adds key to the open window (opening one if none is) and waits for its result or for ctx.
func (b *batcher[K, V]) Do(ctx context.Context, key K) (V, error) {
	b.mu.Lock()
	w := b.cur
	if w == nil {
		w = &window[K, V]{
			// The call outlives any one caller: it keeps the first caller's values, not its
			// cancellation.
			ctx:  context.WithoutCancel(ctx),
			seen: map[K]bool{}, poke: make(chan struct{}, 1), full: make(chan struct{}),
			done: make(chan struct{}),
		}
		b.cur = w
		go b.run(w)
	}
	if !w.seen[key] {
		w.seen[key] = true
		w.keys = append(w.keys, key)
		if len(w.keys) >= b.maxItems {
			b.cur = nil
			close(w.full)
		}
	}
	b.mu.Unlock()
	select {
	case w.poke <- struct{}{}:
	default:
	}
	var zero V
	select {
	case <-ctx.Done():
		return zero, ctx.Err()
	case <-w.done:
	}
	if v, ok := w.out[key]; ok {
		return v, nil
	}
	if w.err != nil {
		return zero, w.err
	}
	return zero, b.notFound(key)
}

// run closes w when its window ends and serves it.
func (b *batcher[K, V]) run(w *window[K, V]) {
	idle := time.NewTimer(b.idle)
	defer idle.Stop()
	deadline := time.NewTimer(b.max)
	defer deadline.Stop()
wait:
	for {
		select {
		case <-w.full:
			break wait
		case <-deadline.C:
			break wait
		case <-w.poke:
			idle.Reset(b.idle)
		case <-idle.C:
			break wait
		}
	}
	b.mu.Lock()
	if b.cur == w {
		b.cur = nil
	}
	keys := w.keys
	b.mu.Unlock()
	w.out, w.err = b.exec(w.ctx, keys)
	close(w.done)
}

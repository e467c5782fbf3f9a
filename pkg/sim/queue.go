package sim

import "time"

// evKind is what an event does.
type evKind uint8

const (
	evArrival    evKind = iota // the next job arrives (x: job index)
	evBatch                    // the batch window may close
	evScan                     // a provisioning scan (ScanInterval policies)
	evReady                    // a node becomes ready (x: node)
	evFinish                   // a pod finishes (x: pod, gen: its run)
	evPass                     // a disruption pass
	evNotice                   // a spot interruption notice (x: node)
	evDeadline                 // an instance is reclaimed (x: node)
	evTerminated               // an instance has shut down: billing stops (x: node)
	evEnd                      // the workload's horizon
)

// event is something due at a virtual time; seq orders equal times by scheduling order.
type event struct {
	at   time.Duration
	seq  uint64
	x    int32
	gen  uint32
	kind evKind
}

// queue is a min-heap of events by (at, seq).
type queue struct {
	items []event
	seq   uint64
}

func (q *queue) len() int { return len(q.items) }

func (q *queue) less(i, j int) bool {
	a, b := &q.items[i], &q.items[j]
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (q *queue) push(e event) {
	q.seq++
	e.seq = q.seq
	q.items = append(q.items, e)
	i := len(q.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.items[i], q.items[p] = q.items[p], q.items[i]
		i = p
	}
}

func (q *queue) pop() event {
	top := q.items[0]
	n := len(q.items) - 1
	q.items[0] = q.items[n]
	q.items = q.items[:n]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && q.less(l, m) {
			m = l
		}
		if r < n && q.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		q.items[i], q.items[m] = q.items[m], q.items[i]
		i = m
	}
	return top
}

func (q *queue) peek() time.Duration { return q.items[0].at }

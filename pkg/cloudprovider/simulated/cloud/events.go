package cloud

import (
	"container/heap"
	"fmt"
	"time"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
)

// EventKind says what happened to an instance.
type EventKind int

const (
	// EventRunning: the instance booted.
	EventRunning EventKind = iota
	// EventRegistered: its Node registers now (with base resources only).
	EventRegistered
	// EventDevicesReady: its device resources appear on the Node now.
	EventDevicesReady
	// EventMessage: an interruption message is emitted (Event.Message).
	EventMessage
	// EventTerminating: termination began; its Node should go.
	EventTerminating
	// EventTerminated: the instance is gone and its capacity free.
	EventTerminated
)

var eventNames = [...]string{"Running", "Registered", "DevicesReady", "Message", "Terminating", "Terminated"}

func (k EventKind) String() string {
	if int(k) < len(eventNames) {
		return eventNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is one thing that happened, at At, to the instance with ID Instance.
type Event struct {
	Kind     EventKind
	At       time.Time
	Instance string
	// Message is set for EventMessage.
	Message cloudprovider.InterruptionMessage
}

func (e Event) String() string {
	if e.Kind == EventMessage {
		return fmt.Sprintf("%s %s %s %s deadline %s", e.At.Format(time.RFC3339Nano), e.Instance, e.Kind, e.Message.Kind, e.Message.Deadline.Format(time.RFC3339Nano))
	}
	return fmt.Sprintf("%s %s %s", e.At.Format(time.RFC3339Nano), e.Instance, e.Kind)
}

// Advance processes everything due at or before now, in time order (ties in the order they
// were scheduled), and returns the events that happened since the last Advance, including
// those caused by Terminate and Restore.
func (c *Cloud) Advance(now time.Time) []Event {
	c.catchUp(now)
	out := c.outbox
	c.outbox = nil
	return out
}

// NextEvent returns when something is next due, if anything is.
func (c *Cloud) NextEvent() (time.Time, bool) {
	if len(c.queue.items) == 0 {
		return time.Time{}, false
	}
	return c.queue.items[0].at, true
}

// Terminate begins terminating an instance at now: it is Terminating for the class's shutdown
// delay, then Terminated. Terminating an instance that is already Terminating does nothing; an
// unknown or Terminated one is an error wrapping ErrNotFound.
func (c *Cloud) Terminate(id string, now time.Time) error {
	c.catchUp(now)
	inst, ok := c.instances[id]
	if !ok || inst.State == Terminated {
		return fmt.Errorf("terminating %s: %w", id, ErrNotFound)
	}
	if inst.State == Terminating {
		return nil
	}
	c.beginTermination(c.classes[inst.Class], inst, now, ReasonDeleted)
	c.catchUp(now)
	return nil
}

type step int

const (
	stepRunning step = iota
	stepRegistered
	stepDevices
	stepRebalance
	stepNotice
	stepDeadline
	stepTerminated
)

// item is something due for an instance; plan is the instance's plan generation when it was
// queued (interruption steps of an older plan are stale).
type item struct {
	at   time.Time
	seq  uint64
	id   string
	step step
	plan int
}

func (c *Cloud) push(at time.Time, inst *instance, s step) {
	c.queue.seq++
	heap.Push(&c.queue, item{at: at, seq: c.queue.seq, id: inst.ID, step: s, plan: inst.plan})
}

func (c *Cloud) emit(kind EventKind, at time.Time, inst *instance) {
	c.outbox = append(c.outbox, Event{Kind: kind, At: at, Instance: inst.ID})
}

func (c *Cloud) message(kind cloudprovider.InterruptionKind, at, deadline time.Time, inst *instance) {
	c.outbox = append(c.outbox, Event{Kind: EventMessage, At: at, Instance: inst.ID, Message: cloudprovider.InterruptionMessage{
		ID:         fmt.Sprintf("%s:%s:%d", inst.ID, kind, at.UnixMilli()),
		Kind:       kind,
		ProviderID: inst.ProviderID(),
		Deadline:   deadline,
		Received:   at,
	}})
}

// plan replaces the instance's interruption plan and queues its notice and deadline.
func (c *Cloud) plan(inst *instance, p Interruption) {
	inst.plan++
	inst.Interruption = p
	if p.IsZero() {
		return
	}
	c.push(p.Notice, inst, stepNotice)
	c.push(p.Deadline, inst, stepDeadline)
}

func (c *Cloud) catchUp(now time.Time) {
	for len(c.queue.items) > 0 && !c.queue.items[0].at.After(now) {
		it := heap.Pop(&c.queue).(item)
		if inst, ok := c.instances[it.id]; ok {
			c.apply(inst, it)
		}
	}
	if now.After(c.now) {
		c.now = now
	}
}

func (c *Cloud) apply(inst *instance, it item) {
	current := it.plan == inst.plan
	switch it.step {
	case stepRunning:
		if inst.State == Pending {
			inst.State = Running
			c.emit(EventRunning, it.at, inst)
		}
	case stepRegistered:
		if inst.State == Running {
			c.emit(EventRegistered, it.at, inst)
		}
	case stepDevices:
		if inst.State == Running {
			c.emit(EventDevicesReady, it.at, inst)
		}
	case stepRebalance:
		if current && inst.State <= Running {
			c.message(cloudprovider.RebalanceRecommendation, it.at, time.Time{}, inst)
		}
	case stepNotice:
		if current && inst.State <= Running && inst.Interruption.Kind != cloudprovider.InstanceStopped {
			c.message(inst.Interruption.Kind, it.at, inst.Interruption.Deadline, inst)
		}
	case stepDeadline:
		if current && inst.State <= Running {
			c.beginTermination(c.classes[inst.Class], inst, it.at, inst.Interruption.Reason)
			c.message(cloudprovider.InstanceStopped, it.at, time.Time{}, inst)
		}
	case stepTerminated:
		if inst.State == Terminating && it.at.Equal(inst.TerminatedAt) {
			inst.State = Terminated
			c.classes[inst.Class].hold(&inst.Instance, -1)
			if c.byClaim[inst.NodeClaim] == inst.ID {
				delete(c.byClaim, inst.NodeClaim)
			}
			c.emit(EventTerminated, it.at, inst)
		}
	}
}

// beginTermination moves an instance to Terminating at at and queues its end.
func (c *Cloud) beginTermination(cls *class, inst *instance, at time.Time, reason Reason) {
	inst.State = Terminating
	inst.TerminatingAt = at
	inst.TerminatedAt = at.Add(cls.cfg.Delays.Shutdown)
	inst.Reason = reason
	c.emit(EventTerminating, at, inst)
	c.push(inst.TerminatedAt, inst, stepTerminated)
}

// Inject plans an interruption of kind for an instance at at:
//
//   - SpotInterruption (spot instances only): notice at at, reclaimed SpotNotice later;
//   - ScheduledMaintenance: notice at at, retired the class's MaintenanceNotice later;
//   - RebalanceRecommendation: a recommendation at at, nothing else;
//   - InstanceStopped: the instance stops at at, without notice.
//
// Except for a rebalance recommendation, the injected interruption replaces the planned one;
// it is refused once the planned one's notice has been delivered.
func (c *Cloud) Inject(id string, kind cloudprovider.InterruptionKind, at time.Time) error {
	inst, ok := c.instances[id]
	if !ok || inst.State >= Terminating {
		return fmt.Errorf("interrupting %s: %w", id, ErrNotFound)
	}
	if p := inst.Interruption; !p.IsZero() && !p.Notice.After(c.now) {
		return fmt.Errorf("interrupting %s: it already has a %s notice for %s", id, p.Kind, p.Deadline.Format(time.RFC3339))
	}
	p := Interruption{Kind: kind, Notice: at, Injected: true}
	switch kind {
	case cloudprovider.SpotInterruption:
		if inst.Offering.CapacityType != apisv1.CapacityTypeSpot {
			return fmt.Errorf("interrupting %s: a spot interruption needs a spot instance, not %s", id, inst.Offering.CapacityType)
		}
		p.Reason, p.Deadline = ReasonSpotInterruption, at.Add(SpotNotice)
	case cloudprovider.ScheduledMaintenance:
		p.Reason, p.Deadline = ReasonScheduledMaintenance, at.Add(c.classes[inst.Class].cfg.Interruptions.MaintenanceNotice)
	case cloudprovider.InstanceStopped:
		p.Reason, p.Deadline = ReasonStopped, at
	case cloudprovider.RebalanceRecommendation:
		inst.RebalanceAt = at
		c.push(at, inst, stepRebalance)
		return nil
	default:
		return fmt.Errorf("interrupting %s: unknown kind %q", id, kind)
	}
	inst.RebalanceAt = time.Time{}
	c.plan(inst, p)
	return nil
}

// eventQueue is a min-heap of items by (at, seq).
type eventQueue struct {
	items []item
	seq   uint64
}

func (q *eventQueue) Len() int { return len(q.items) }
func (q *eventQueue) Less(i, j int) bool {
	a, b := &q.items[i], &q.items[j]
	if !a.at.Equal(b.at) {
		return a.at.Before(b.at)
	}
	return a.seq < b.seq
}
func (q *eventQueue) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *eventQueue) Push(x any)    { q.items = append(q.items, x.(item)) }
func (q *eventQueue) Pop() any {
	n := len(q.items) - 1
	it := q.items[n]
	q.items = q.items[:n]
	return it
}

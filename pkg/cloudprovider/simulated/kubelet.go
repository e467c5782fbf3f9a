package simulated

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/tenon-sh/tenon/internal/recovery"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
)

// DefaultResync is the longest the Kubelet waits between passes when nothing is due.
const DefaultResync = 10 * time.Second

// retryAfter is how soon the Kubelet tries again after a pass that failed.
const retryAfter = 250 * time.Millisecond

// Kubelet plays the provider's machines on the API server: each pass brings the model to now
// and, for every instance, creates its Node once it registers, adds its device resources once
// the device plugin has run, deletes its Node once it terminates, records its progress in its
// SimInstance status, and deletes the SimInstance once it is terminated and its Node deleted.
// Passes run when something is due, when the provider launches, terminates or interrupts an
// instance, and at least every Resync. Each pass is level-triggered: it compares the model
// with what it has written, so passes can be repeated and a restart loses nothing.
//
// A Node is registered once: one deleted while its instance runs is not registered again.
// Deleting a SimInstance by hand makes its instance vanish, as an instance terminated outside
// tenon would: with SetupWithManager the deletion is watched and wakes the Kubelet, which
// deletes the Node, and the model forgets the instance (Get and List report it gone, so garbage
// collection deletes its NodeClaim); without it, at the instance's next change of state.
type Kubelet struct {
	p *Provider
	// Resync bounds the wait between passes (default DefaultResync).
	Resync time.Duration
}

var _ manager.LeaderElectionRunnable = (*Kubelet)(nil)

// Kubelet returns the provider's Kubelet.
func (p *Provider) Kubelet() *Kubelet { return &Kubelet{p: p, Resync: DefaultResync} }

// NeedLeaderElection is true: only the leader plays the machines.
func (k *Kubelet) NeedLeaderElection() bool { return true }

// Start runs passes until ctx is done; it returns nil then. Errors of a pass are logged and
// the pass is retried soon.
func (k *Kubelet) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("simulated-kubelet")
	for {
		var next time.Time
		// A pass that panics is retried soon, like one that failed.
		err := recovery.Guard(logger, "simulated-kubelet", func() error {
			var err error
			next, err = k.Pass(ctx)
			return err
		})
		wait := k.Resync
		if wait <= 0 {
			wait = DefaultResync
		}
		if !next.IsZero() {
			wait = min(wait, max(0, next.Sub(k.p.clock())))
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			logger.Error(err, "simulated kubelet pass failed")
			wait = min(wait, retryAfter)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-k.p.wake:
			timer.Stop()
		case <-timer.C:
		}
	}
}

// Pass brings every instance's Node and SimInstance up to date once, and returns when the
// model next has something due (zero when nothing is).
func (k *Kubelet) Pass(ctx context.Context) (time.Time, error) {
	p := k.p
	p.mu.Lock()
	if err := p.ready(ctx); err != nil {
		p.mu.Unlock()
		return time.Time{}, err
	}
	now := p.now()
	p.advance(now)
	type task struct {
		inst cloud.Instance
		m    instanceMeta
	}
	var tasks []task
	for _, inst := range p.cloud.Instances() {
		if m := p.meta[inst.ID]; m != nil && m.recorded {
			tasks = append(tasks, task{inst, *m})
		}
	}
	next, _ := p.cloud.NextEvent()
	p.mu.Unlock()

	var errs []error
	for _, t := range tasks {
		if err := k.reconcile(ctx, t.inst, t.m, now); err != nil {
			errs = append(errs, fmt.Errorf("instance %s: %w", t.inst.ID, err))
		}
	}
	return next, errors.Join(errs...)
}

// reconcile does what one instance needs at now. m is a copy of its meta; what is done is
// written back.
func (k *Kubelet) reconcile(ctx context.Context, inst cloud.Instance, m instanceMeta, now time.Time) error {
	p := k.p
	if m.recordGone && inst.State != cloud.Terminated {
		return k.vanish(ctx, inst.ID)
	}
	var err error
	if inst.State == cloud.Running && !now.Before(inst.RegisteredAt) && !m.nodeCreated {
		if err = p.registerNode(ctx, inst, &m); err == nil {
			m.nodeCreated = true
			m.devicesChecked = inst.DevicesAt.IsZero()
		}
	}
	if err == nil && inst.State == cloud.Running && m.nodeCreated && !m.devicesChecked && !now.Before(inst.DevicesAt) {
		if err = p.addDevices(ctx, inst); err == nil {
			m.devicesChecked = true
		}
	}
	if err == nil && inst.State >= cloud.Terminating && !m.nodeDeleted {
		if err = p.deleteNode(ctx, inst.ID); err == nil {
			m.nodeDeleted = true
		}
	}
	nodeName := ""
	if m.nodeCreated {
		nodeName = inst.ID
	}
	if status := instanceStatus(inst, nodeName); err == nil && !equality.Semantic.DeepEqual(status, m.status) {
		err = p.writeStatus(ctx, inst.ID, status)
		if apierrors.IsNotFound(err) {
			return k.vanish(ctx, inst.ID)
		}
		if err == nil {
			m.status = status
		}
	}
	p.mu.Lock()
	if cur := p.meta[inst.ID]; cur != nil {
		cur.nodeCreated, cur.devicesChecked, cur.nodeDeleted, cur.status = m.nodeCreated, m.devicesChecked, m.nodeDeleted, m.status
	}
	p.mu.Unlock()
	if err != nil || inst.State != cloud.Terminated || !m.nodeDeleted {
		return err
	}
	if err := p.deleteRecord(ctx, inst.ID); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.meta, inst.ID)
	return p.cloud.Forget(inst.ID)
}

// vanish handles an instance whose SimInstance was deleted behind the provider's back: the
// instance is gone, and so is its Node.
func (k *Kubelet) vanish(ctx context.Context, id string) error {
	p := k.p
	p.mu.Lock()
	p.cloud.Remove(id)
	delete(p.meta, id)
	p.mu.Unlock()
	return p.deleteNode(ctx, id)
}

package disruption

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-sh/tenon/internal/recovery"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/kube"
	"github.com/tenon-sh/tenon/pkg/disruption"
	"github.com/tenon-sh/tenon/pkg/metrics"
	"github.com/tenon-sh/tenon/pkg/snapshot"
)

// CommandResult describes how a command ended.
type CommandResult struct {
	// Command is the command as validated (as decided when validation did not pass).
	Command disruption.Command
	// Result is one of ResultSucceeded, ResultInvalidated, ResultFailed, ResultAbandoned.
	Result string
	Err    error
	// Replacements are the NodeClaims created for it.
	Replacements []string
	// Saved is the $/h it removed once its replacements launched (succeeded commands only).
	Saved float64
	// Decided and End are when the pass decided it and when it ended.
	Decided, End time.Time
}

// execution is a command on its way through the queue.
type execution struct {
	cmd     disruption.Command
	decided time.Time
	view    *View // the snapshot it was validated on
	// tainted, replacements and marked are what has been done so far, for a rollback.
	tainted      []string
	replacements []*apisv1.NodeClaim
	marked       []string
}

// run takes a command through its steps: wait, validate on a fresh snapshot, taint the
// candidates, create the replacements, mark the candidates for deletion, wait for the
// replacements to initialize, delete the candidates' NodeClaims. A step that fails rolls back
// what was done. When ctx ends the command stops where it is, as a crashed process would; the
// next start-up removes the taints it leaves.
func (c *Controller) run(ctx context.Context, ex *execution) {
	res := CommandResult{Command: ex.cmd, Decided: ex.decided}
	defer func() { c.finish(ex, res) }()
	// A command runs on a goroutine of its own: a panic in it fails the command (rolled back,
	// its nodes backing off) instead of the process. Deferred after finish, so it runs first.
	defer func() {
		if r := recover(); r != nil {
			perr := recovery.Recovered(c.log, ControllerName+".command", r)
			res.Result, res.Err = ResultFailed, perr
			if ex.view == nil {
				return // it panicked before it changed anything
			}
			_ = recovery.Guard(c.log, ControllerName+".command", func() error { // logged there
				c.event(ex, corev1.EventTypeWarning, recovery.EventPanic, "The disruption command was stopped after a panic: %v", r)
				c.rollback(ctx, ex, perr)
				return nil
			})
		}
	}()
	fail := func(err error) {
		res.Err = err
		if ctx.Err() != nil {
			res.Result = ResultAbandoned
			return
		}
		res.Result = ResultFailed
		c.rollback(ctx, ex, err)
	}

	select {
	case <-ctx.Done():
		res.Result = ResultAbandoned
		return
	case <-c.deps.Clock.After(c.opts.ValidationDelay):
	}
	view, err := c.builder.Build(ctx, BuildOptions{Busy: c.busy(ex), Held: c.heldNodes()})
	if err != nil {
		c.log.V(1).Info("some objects could not be read; validating with the rest", "error", err.Error())
	}
	cmd, err := disruption.Validate(view.Snapshot, ex.cmd, c.opts.Decision)
	if err != nil {
		res.Err = err
		var invalid *disruption.Invalid
		if errors.As(err, &invalid) {
			res.Result = ResultInvalidated
			c.log.Info("disruption command no longer holds", "method", ex.cmd.Method, "nodes", candidatesOf(ex), "reason", invalid.Reason, "message", invalid.Message)
			return
		}
		res.Result = ResultFailed
		c.log.Error(err, "validating a disruption command", "nodes", candidatesOf(ex))
		return
	}
	ex.cmd, ex.view, res.Command = cmd, view, cmd

	for _, n := range cmd.Candidates {
		if err := c.taint(ctx, n); err != nil {
			fail(fmt.Errorf("tainting node %s: %w", n, err))
			return
		}
		ex.tainted = append(ex.tainted, n)
	}
	if len(cmd.Replacements) > 0 {
		c.event(ex, corev1.EventTypeNormal, EventLaunching, "Launching NodeClaim(s) for %s: %s", cmd.Method, cmd.Message)
		if err := c.createReplacements(ctx, ex); err != nil {
			fail(err)
			return
		}
	}
	for _, n := range cmd.Candidates {
		ex.marked = append(ex.marked, n)
		if nc := view.Claims[n]; nc != nil {
			ex.marked = append(ex.marked, nc.Name)
		}
	}
	// Marked only now that the replacements exist: the provisioner plans the candidates' pods
	// onto them instead of buying the same capacity again.
	c.deps.Cluster.MarkForDeletion(ex.marked...)
	for _, nc := range ex.replacements {
		res.Replacements = append(res.Replacements, nc.Name)
	}
	if len(ex.replacements) > 0 {
		c.event(ex, corev1.EventTypeNormal, EventWaitingReadiness, "Waiting for replacement NodeClaim(s) %s to initialize: %s",
			strings.Join(res.Replacements, ", "), cmd.Message)
		if err := c.waitInitialized(ctx, ex); err != nil {
			fail(err)
			return
		}
	}
	c.event(ex, corev1.EventTypeNormal, EventTerminating, "Disrupting by %s: %s", cmd.Method, cmd.Message)
	var errs []error
	for _, n := range cmd.Candidates {
		if err := c.terminate(ctx, ex, n); err != nil {
			errs = append(errs, fmt.Errorf("node %s: %w", n, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		// The replacements are up and some candidates may be going: only the candidates still
		// here are given back.
		res.Err = err
		if ctx.Err() != nil {
			res.Result = ResultAbandoned
			return
		}
		res.Result = ResultFailed
		c.giveBack(ctx, ex, err)
		return
	}
	res.Result = ResultSucceeded
	res.Saved = c.realize(ctx, ex)
	c.log.Info("disrupted", "method", cmd.Method, "action", cmd.Action, "nodes", candidatesOf(ex), "replacements", res.Replacements,
		"pods", len(cmd.Pods), "savingsPerHour", res.Saved, "message", cmd.Message)
}

// createReplacements creates the command's replacement NodeClaims from their nodepools, as the
// provisioner would, and adds each to the mirror at once.
func (c *Controller) createReplacements(ctx context.Context, ex *execution) error {
	for _, r := range ex.cmd.Replacements {
		np := ex.view.Snapshot.NodePools[r.NodePool]
		if np == nil {
			return fmt.Errorf("nodepool %s of a replacement is gone", r.NodePool)
		}
		nc := snapshot.NodeClaim(r, np)
		if err := c.deps.Client.Create(ctx, nc); err != nil {
			return fmt.Errorf("creating a replacement nodeclaim of nodepool %s: %w", r.NodePool, err)
		}
		ex.replacements = append(ex.replacements, nc)
		metrics.NodeClaimsCreated.WithLabelValues(reasonLabel(ex.cmd), nc.Labels[apisv1.NodePoolLabelKey], minValuesRelaxed(nc)).Inc()
		c.deps.Cluster.UpdateNodeClaim(nc)
		c.deps.Cluster.Nominate(nc.Name)
	}
	return nil
}

// replacementPoll is how often the replacements are checked while they start.
const replacementPoll = 500 * time.Millisecond

// waitInitialized waits until every replacement is Initialized. A replacement deleted meanwhile
// (its launch failed, its node never registered) or ReplacementTimeout running out is an error.
func (c *Controller) waitInitialized(ctx context.Context, ex *execution) error {
	deadline := c.deps.Clock.Now().Add(c.opts.ReplacementTimeout)
	tick := c.deps.Clock.NewTicker(replacementPoll)
	defer tick.Stop()
	for {
		waiting := 0
		for _, r := range ex.replacements {
			nc := &apisv1.NodeClaim{}
			err := c.deps.Reader.Get(ctx, client.ObjectKeyFromObject(r), nc)
			switch {
			case apierrors.IsNotFound(err):
				return fmt.Errorf("replacement nodeclaim %s was deleted before it initialized", r.Name)
			case err != nil:
				return fmt.Errorf("reading replacement nodeclaim %s: %w", r.Name, err)
			case nc.DeletionTimestamp != nil:
				why := ""
				if cond := nc.GetCondition(apisv1.ConditionTypeLaunched); cond != nil && cond.Status != metav1.ConditionTrue && cond.Message != "" {
					why = ": " + cond.Message
				}
				return fmt.Errorf("replacement nodeclaim %s is being deleted before it initialized%s", r.Name, why)
			case !nc.IsTrue(apisv1.ConditionTypeInitialized):
				waiting++
			}
		}
		if waiting == 0 {
			return nil
		}
		if !c.deps.Clock.Now().Before(deadline) {
			return fmt.Errorf("%d of %d replacement nodeclaim(s) did not initialize within %s", waiting, len(ex.replacements), c.opts.ReplacementTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C():
		}
	}
}

// terminate records why on the candidate's NodeClaim and deletes it; the termination controller
// drains the node and removes the instance.
func (c *Controller) terminate(ctx context.Context, ex *execution, name string) error {
	claim := ex.view.Claims[name]
	if claim == nil {
		return fmt.Errorf("it has no nodeclaim")
	}
	reason := string(ex.cmd.Reason)
	if reason == "" {
		reason = "Expired"
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		nc := &apisv1.NodeClaim{}
		if err := c.deps.Reader.Get(ctx, client.ObjectKeyFromObject(claim), nc); err != nil {
			return err
		}
		if nc.UID != claim.UID || nc.DeletionTimestamp != nil {
			return nil
		}
		orig := nc.DeepCopy()
		nc.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeDisruptionReason, Status: metav1.ConditionTrue, Reason: reason,
			Message: truncate(ex.cmd.Message, 1024)}, c.deps.Clock.Now())
		return kube.PatchNodeClaim(ctx, c.deps.Client, orig, nc)
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("recording the disruption reason on nodeclaim %s: %w", claim.Name, err)
	}
	err = c.deps.Client.Delete(ctx, claim, client.Preconditions{UID: &claim.UID})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting nodeclaim %s: %w", claim.Name, err)
	}
	recordDisrupted(ex, name, claim)
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// rollback undoes a command that failed before its candidates were deleted: the marks go, the
// replacements are deleted, the taints removed; the candidates are then left alone for
// FailureBackoff.
func (c *Controller) rollback(ctx context.Context, ex *execution, cause error) {
	c.log.Error(cause, "disruption command failed; rolling back", "method", ex.cmd.Method, "nodes", candidatesOf(ex))
	c.event(ex, corev1.EventTypeWarning, EventFailed, "Disruption by %s failed and was rolled back: %v", ex.cmd.Method, cause)
	c.deps.Cluster.UnmarkForDeletion(ex.marked...)
	for _, nc := range ex.replacements {
		if err := c.deps.Client.Delete(ctx, nc); client.IgnoreNotFound(err) != nil {
			c.log.Error(err, "deleting a replacement nodeclaim during a rollback", "nodeclaim", nc.Name)
		}
	}
	for _, n := range ex.tainted {
		if err := c.untaintUnlessTerminating(ctx, ex, n); err != nil {
			c.log.Error(err, "removing the disrupted taint during a rollback; the next start-up removes it", "node", n)
		}
	}
}

// giveBack returns the candidates that were not deleted to service, keeping the replacements,
// which are initialized and hold or will hold pods.
func (c *Controller) giveBack(ctx context.Context, ex *execution, cause error) {
	c.log.Error(cause, "deleting disrupted nodeclaims failed; returning the rest to service", "nodes", candidatesOf(ex))
	c.event(ex, corev1.EventTypeWarning, EventFailed, "Disruption by %s could not delete every node: %v", ex.cmd.Method, cause)
	for _, n := range ex.cmd.Candidates {
		claim := ex.view.Claims[n]
		nc := &apisv1.NodeClaim{}
		if claim != nil {
			if err := c.deps.Reader.Get(ctx, client.ObjectKeyFromObject(claim), nc); err == nil && nc.DeletionTimestamp != nil {
				continue
			}
			c.deps.Cluster.UnmarkForDeletion(claim.Name)
		}
		c.deps.Cluster.UnmarkForDeletion(n)
		if err := c.untaintUnlessTerminating(ctx, ex, n); err != nil {
			c.log.Error(err, "removing the disrupted taint; the next start-up removes it", "node", n)
		}
	}
}

// untaintUnlessTerminating removes the disrupted taint from a candidate unless its NodeClaim is
// being deleted meanwhile (the termination needs the taint).
func (c *Controller) untaintUnlessTerminating(ctx context.Context, ex *execution, name string) error {
	if claim := ex.view.Claims[name]; claim != nil {
		nc := &apisv1.NodeClaim{}
		err := c.deps.Reader.Get(ctx, client.ObjectKeyFromObject(claim), nc)
		if err == nil && nc.DeletionTimestamp != nil {
			return nil
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return c.untaint(ctx, name)
}

// taint adds karpenter.sh/disrupted:NoSchedule to the node.
func (c *Controller) taint(ctx context.Context, name string) error {
	return c.setTaint(ctx, name, true)
}

// untaint removes karpenter.sh/disrupted:NoSchedule from the node (a node that is gone is fine).
func (c *Controller) untaint(ctx context.Context, name string) error {
	return c.setTaint(ctx, name, false)
}

func (c *Controller) setTaint(ctx context.Context, name string, on bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node := &corev1.Node{}
		if err := c.deps.Reader.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
			if apierrors.IsNotFound(err) && !on {
				return nil
			}
			return err
		}
		if HasDisruptedTaint(node) == on {
			return nil
		}
		orig := node.DeepCopy()
		if on {
			node.Spec.Taints = append(node.Spec.Taints, apisv1.DisruptedNoScheduleTaint)
		} else {
			node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&apisv1.DisruptedNoScheduleTaint) })
		}
		// Taints are a list a merge patch replaces whole: guard against a concurrent writer.
		return c.deps.Client.Patch(ctx, node, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	})
}

// event records an event on each candidate's Node and NodeClaim.
func (c *Controller) event(ex *execution, eventType, reason, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	for _, n := range ex.cmd.Candidates {
		if node := ex.view.Nodes[n]; node != nil {
			c.deps.Recorder.Event(node, eventType, reason, msg)
		}
		if nc := ex.view.Claims[n]; nc != nil {
			c.deps.Recorder.Event(nc, eventType, reason, msg)
		}
	}
}

// realize records what a succeeded command saved per hour: the candidates' price less what the
// replacements launched at (their plan's price when their offering cannot be priced), by
// capacity-type transition.
func (c *Controller) realize(ctx context.Context, ex *execution) float64 {
	var from, to []string
	for _, n := range ex.cmd.Candidates {
		if e, ok := ex.view.Node(n); ok {
			from = append(from, e.CapacityType)
		}
	}
	saved := ex.cmd.Price
	for i, r := range ex.replacements {
		planned := 0.0
		if i < len(ex.cmd.Replacements) {
			planned = ex.cmd.Replacements[i].Price
		}
		nc := &apisv1.NodeClaim{}
		if err := c.deps.Reader.Get(ctx, client.ObjectKeyFromObject(r), nc); err != nil {
			saved -= planned
			continue
		}
		launched := disruption.Node{
			NodePool: nc.Labels[apisv1.NodePoolLabelKey], InstanceType: nc.Labels[apisv1.LabelInstanceType],
			Zone: nc.Labels[apisv1.LabelZone], CapacityType: nc.Labels[apisv1.CapacityTypeLabelKey], ReservationID: nc.Labels[apisv1.LabelCapacityReservationID],
		}
		to = append(to, launched.CapacityType)
		if p, ok := price(ex.view.solver.Types[launched.NodePool], launched); ok {
			saved -= p
		} else {
			saved -= planned
		}
	}
	if len(to) == 0 {
		to = []string{"none"}
	}
	SavingsTotal.WithLabelValues(capacityTypes(from), capacityTypes(to)).Add(max(saved, 0))
	return saved
}

// capacityTypes names a set of capacity types: the one they share, or "mixed".
func capacityTypes(cts []string) string {
	if len(cts) == 0 {
		return "unknown"
	}
	for _, ct := range cts[1:] {
		if ct != cts[0] {
			return "mixed"
		}
	}
	if cts[0] == "" {
		return "unknown"
	}
	return cts[0]
}

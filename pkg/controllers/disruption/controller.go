package disruption

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/tenon-sh/tenon/internal/recovery"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/solverinput"
	"github.com/tenon-sh/tenon/pkg/disruption"
	"github.com/tenon-sh/tenon/pkg/metrics"
)

// Event reasons, on the candidates' Nodes and NodeClaims.
const (
	// EventLaunching: the command's replacements are being created.
	EventLaunching = "DisruptionLaunching"
	// EventWaitingReadiness: the replacements exist; the command waits for them to initialize.
	EventWaitingReadiness = "DisruptionWaitingReadiness"
	// EventTerminating: the candidates' NodeClaims are being deleted.
	EventTerminating = "DisruptionTerminating"
	// EventFailed (Warning): a step of the command failed and it was rolled back.
	EventFailed = "DisruptionFailed"
	// EventBlocked: a pass left the node alone for a reason its owner can act on (see
	// blockingReasons).
	EventBlocked = "DisruptionBlocked"
	// EventTaintRemoved: at start-up, a karpenter.sh/disrupted taint no command owns was removed.
	EventTaintRemoved = "DisruptionTaintRemoved"
	// EventUnconsolidatable: consolidation looked at the node and left it, for the reason the
	// message gives (see consolidationReasons). Recorded on the Node and its NodeClaim, at most
	// once per UnconsolidatableInterval each, as Karpenter does.
	EventUnconsolidatable = "Unconsolidatable"
)

// UnconsolidatableInterval is how long an object that got an Unconsolidatable event gets no
// other, whatever its message (Karpenter's de-duplication).
const UnconsolidatableInterval = 15 * time.Minute

// consolidationReasons are the skip reasons of consolidation itself, recorded as
// Unconsolidatable events: the node was simulated and removing or replacing it did not pay or
// did not fit.
var consolidationReasons = map[disruption.SkipReason]bool{
	disruption.SkipNotCheaper:       true,
	disruption.SkipSavingsFloor:     true,
	disruption.SkipSpotToSpot:       true,
	disruption.SkipSpotToSpotTooNew: true,
	disruption.SkipReserved:         true,
	disruption.SkipUnschedulable:    true,
	disruption.SkipBalanced:         true,
}

// blockingReasons are the skip reasons recorded as DisruptionBlocked events: those that hold a
// node back until someone changes something. Reasons that pass by themselves (consolidateAfter
// running, a node not initialized or already leaving, the pass ending early) or that only
// restate prices (not cheaper, under the savings floor) are left to metrics and `tenon explain`,
// so that events stay worth reading.
var blockingReasons = map[disruption.SkipReason]bool{
	disruption.SkipDoNotDisruptNode: true,
	disruption.SkipDoNotDisruptPod:  true,
	disruption.SkipPDB:              true,
	disruption.SkipNoNodePool:       true,
	disruption.SkipBudget:           true,
	disruption.SkipUnschedulable:    true,
	disruption.SkipSpotToSpot:       true,
	disruption.SkipReserved:         true,
}

// Controller runs disruption passes and executes their commands.
type Controller struct {
	deps    Deps
	opts    Options
	builder *Builder
	log     logr.Logger

	mu     sync.Mutex
	cursor string
	// memory is the last pass's Decision.Memory: its verdicts that still hold are not
	// simulated again.
	memory  *disruption.Memory
	running map[string]*execution // candidate node → the command it is in
	held    map[string]time.Time  // node → until when it is left alone after a failure
	// unconsolidatable is when each object last got an Unconsolidatable event.
	unconsolidatable map[types.UID]time.Time
	wg               sync.WaitGroup
}

var _ manager.LeaderElectionRunnable = (*Controller)(nil)

// New returns the controller.
func New(deps Deps, opts Options) (*Controller, error) {
	if err := deps.defaults(); err != nil {
		return nil, err
	}
	opts.defaults()
	src := &solverinput.Source{Cluster: deps.Cluster, Cloud: deps.Cloud, Filter: deps.Filter, Reader: deps.Reader, Schedulers: deps.Schedulers,
		ExpendablePriorityCutoff: opts.Decision.ExpendablePriorityCutoff}
	return &Controller{
		deps: deps, opts: opts, log: deps.Log,
		builder: newBuilder(src, deps.Clock, opts.DriftCheckInterval, opts.StaticCapacity),
		running: map[string]*execution{}, held: map[string]time.Time{}, unconsolidatable: map[types.UID]time.Time{},
	}, nil
}

// Register adds the controller to mgr; Client, Reader and the logger default to the
// manager's.
func Register(mgr manager.Manager, deps Deps, opts Options) (*Controller, error) {
	if deps.Client == nil {
		deps.Client = mgr.GetClient()
	}
	if deps.Reader == nil {
		deps.Reader = mgr.GetAPIReader()
	}
	if deps.Log.GetSink() == nil {
		deps.Log = mgr.GetLogger().WithName("disruption")
	}
	c, err := New(deps, opts)
	if err != nil {
		return nil, err
	}
	return c, mgr.Add(c)
}

// NeedLeaderElection says that only the leader disrupts.
func (c *Controller) NeedLeaderElection() bool { return true }

// Start removes the disrupted taints a previous process left behind, then runs a pass every
// PassInterval and looks for orphaned taints every OrphanTaintInterval until ctx ends.
// Commands still running then stop where they are; the next leader's start-up cleans up after
// them.
func (c *Controller) Start(ctx context.Context) error {
	ctx = metrics.WithController(ctx, ControllerName)
	if c.opts.Disabled {
		<-ctx.Done()
		return nil
	}
	defer c.wg.Wait()
	for {
		err := c.CleanupOrphanTaints(ctx)
		if err == nil {
			break
		}
		c.log.Error(err, "removing orphaned disrupted taints; trying again")
		select {
		case <-ctx.Done():
			return nil
		case <-c.deps.Clock.After(time.Second):
		}
	}
	tick := c.deps.Clock.NewTicker(c.opts.PassInterval)
	defer tick.Stop()
	orphans := c.deps.Clock.NewTicker(c.opts.OrphanTaintInterval)
	defer orphans.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C():
			c.guardedPass(ctx)
		case <-orphans.C():
			if err := c.CleanupOrphanTaints(ctx); err != nil {
				c.log.Error(err, "removing orphaned disrupted taints; trying again at the next interval")
			}
		}
	}
}

// PassResult describes one pass.
type PassResult struct {
	Start    time.Time
	Duration time.Duration
	// Decision is nil when the pass could not decide (Err says why).
	Decision *disruption.Decision
	Err      error
	// Running is how many commands were running once the pass had queued its own.
	Running int
}

// Pass runs one disruption pass: it reads a snapshot (nodes in running commands count as being
// deleted, nodes backing off are left out), decides from where the last pass stopped, records
// metrics and DisruptionBlocked events, and queues the commands, which then run on their own.
func (c *Controller) Pass(ctx context.Context) PassResult {
	start := c.deps.Clock.Now()
	busy, held := c.busy(nil), c.heldNodes()
	res := PassResult{Start: start}
	view, err := c.builder.Build(ctx, BuildOptions{Busy: busy, Held: held})
	if err != nil {
		c.log.Info("some objects could not be read; deciding with the rest", "error", err.Error())
	}
	c.mu.Lock()
	opts := c.opts.Decision
	opts.Cursor, opts.Memory = c.cursor, c.memory
	c.mu.Unlock()
	dec, err := disruption.Decide(view.Snapshot, opts)
	res.Duration = c.deps.Clock.Since(start)
	if err != nil {
		res.Err = fmt.Errorf("deciding: %w", err)
		c.log.Error(err, "disruption pass failed")
		PassDuration.WithLabelValues(OutcomeError).Observe(res.Duration.Seconds())
		c.notifyPass(res)
		return res
	}
	res.Decision = dec
	c.mu.Lock()
	c.cursor, c.memory = dec.Cursor, dec.Memory
	c.mu.Unlock()
	PassDuration.WithLabelValues(string(dec.Outcome)).Observe(res.Duration.Seconds())
	recordPassState(view.Snapshot, res.Duration)
	c.recordDecision(view, dec, busy)
	for _, cmd := range dec.Commands {
		recordDecided(cmd)
		c.launch(ctx, cmd)
	}
	c.recordClaimStatus(ctx, view)
	if len(dec.Commands) > 0 {
		c.log.Info("disruption pass acted", "commands", len(dec.Commands), "skips", len(dec.Skips), "simulations", dec.Simulations,
			"outcome", dec.Outcome, "duration", res.Duration.String())
	}
	res.Running = c.Running()
	c.notifyPass(res)
	return res
}

// ControllerName names the disruption loop in logs, metrics and events.
const ControllerName = "disruption"

// guardedPass runs a pass; one that panics is skipped (see package recovery), with a
// ControllerPanic event on every NodePool, and the next pass runs on schedule.
func (c *Controller) guardedPass(ctx context.Context) {
	err := recovery.Guard(c.log, ControllerName, func() error {
		c.Pass(ctx)
		return nil
	})
	var perr *recovery.PanicError
	if errors.As(err, &perr) {
		recovery.Record(c.deps.Recorder, perr, c.deps.Cluster.NodePools()...)
	}
}

func (c *Controller) notifyPass(res PassResult) {
	if c.opts.OnPass != nil {
		c.opts.OnPass(res)
	}
}

// recordDecision sets the pass metrics and records DisruptionBlocked events.
func (c *Controller) recordDecision(view *View, dec *disruption.Decision, busy map[string]bool) {
	Candidates.Reset()
	for _, m := range []disruption.Method{disruption.MethodEmptiness, disruption.MethodDrift, disruption.MethodExpiration, disruption.MethodConsolidation} {
		Candidates.WithLabelValues(string(m)).Set(0)
	}
	for _, cmd := range dec.Commands {
		Candidates.WithLabelValues(string(cmd.Method)).Add(float64(len(cmd.Candidates)))
	}
	Skips.Reset()
	for _, s := range dec.Skips {
		reason := s.Reason
		if busy[s.Node] {
			reason = disruption.SkipInCommand
		}
		Skips.WithLabelValues(string(reason)).Inc()
		if consolidationReasons[reason] {
			c.recordUnconsolidatable(view, s)
		}
		if !blockingReasons[reason] {
			continue
		}
		if node := view.Nodes[s.Node]; node != nil {
			c.deps.Recorder.Eventf(node, corev1.EventTypeNormal, EventBlocked, "Cannot disrupt Node: %s (%s)", s.Message, reason)
		}
	}
}

// recordUnconsolidatable records an Unconsolidatable event with the skip's message on the node
// and on its NodeClaim, each unless it got one within UnconsolidatableInterval.
func (c *Controller) recordUnconsolidatable(view *View, s disruption.Skip) {
	now := c.deps.Clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for uid, at := range c.unconsolidatable {
		if now.Sub(at) >= UnconsolidatableInterval {
			delete(c.unconsolidatable, uid)
		}
	}
	var objs []client.Object
	if node := view.Nodes[s.Node]; node != nil {
		objs = append(objs, node)
	}
	if nc := view.Claims[s.Node]; nc != nil {
		objs = append(objs, nc)
	}
	for _, obj := range objs {
		if _, recent := c.unconsolidatable[obj.GetUID()]; recent {
			continue
		}
		c.unconsolidatable[obj.GetUID()] = now
		c.deps.Recorder.Event(obj, corev1.EventTypeNormal, EventUnconsolidatable, s.Message)
	}
}

// Running returns how many commands are running.
func (c *Controller) Running() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[*execution]bool{}
	for _, ex := range c.running {
		seen[ex] = true
	}
	return len(seen)
}

// busy returns the nodes in running commands, except those of ex.
func (c *Controller) busy(except *execution) map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]bool{}
	for n, ex := range c.running {
		if ex != except {
			out[n] = true
		}
	}
	return out
}

// heldNodes returns the nodes backing off after a failed command, with why, forgetting the
// holds that ran out.
func (c *Controller) heldNodes() map[string]string {
	now := c.deps.Clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]string{}
	for n, until := range c.held {
		if !now.Before(until) {
			delete(c.held, n)
			continue
		}
		out[n] = fmt.Sprintf("a disruption command on it failed; it is left alone until %s", until.UTC().Format(time.RFC3339))
	}
	return out
}

// CleanupOrphanTaints removes the karpenter.sh/disrupted taint from every Node that no running
// command owns, whose NodeClaim exists and is not being deleted, that is not being deleted
// itself, and that no controller of this process marked for deletion: such a taint was left by
// a command that a stopped process never finished. A node being terminated keeps its taint (the
// termination drains it).
func (c *Controller) CleanupOrphanTaints(ctx context.Context) error {
	var nodes corev1.NodeList
	if err := c.deps.Client.List(ctx, &nodes); err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	var claims apisv1.NodeClaimList
	if err := c.deps.Client.List(ctx, &claims); err != nil {
		return fmt.Errorf("listing nodeclaims: %w", err)
	}
	byProviderID := map[string]*apisv1.NodeClaim{}
	for i := range claims.Items {
		if id := claims.Items[i].Status.ProviderID; id != "" {
			byProviderID[id] = &claims.Items[i]
		}
	}
	busy := c.busy(nil)
	var removed []string
	for i := range nodes.Items {
		node := &nodes.Items[i]
		if !HasDisruptedTaint(node) || busy[node.Name] || node.DeletionTimestamp != nil || c.deps.Cluster.IsMarkedForDeletion(node.Name) {
			continue
		}
		nc := byProviderID[node.Spec.ProviderID]
		// Karpenter taints its candidates with the same key: another autoscaler's taint stays.
		if nc == nil || !cloudprovider.IsManaged(c.deps.Cloud, nc) || nc.DeletionTimestamp != nil || c.deps.Cluster.IsMarkedForDeletion(nc.Name) {
			continue
		}
		if err := c.untaint(ctx, node.Name); err != nil {
			return err
		}
		removed = append(removed, node.Name)
		c.deps.Recorder.Event(node, corev1.EventTypeNormal, EventTaintRemoved,
			"Removed the karpenter.sh/disrupted taint that an unfinished disruption command left")
	}
	if len(removed) > 0 {
		slices.Sort(removed)
		c.log.Info("removed orphaned disrupted taints", "nodes", removed)
	}
	return nil
}

// launch queues a command: its candidates are busy until it ends.
func (c *Controller) launch(ctx context.Context, cmd disruption.Command) {
	ex := &execution{cmd: cmd, decided: c.deps.Clock.Now()}
	c.mu.Lock()
	for _, n := range cmd.Candidates {
		if c.running[n] != nil {
			c.mu.Unlock()
			c.log.Info("a node of a new command is in a running command; dropping the new one", "node", n)
			return
		}
	}
	for _, n := range cmd.Candidates {
		c.running[n] = ex
	}
	c.wg.Add(1)
	c.mu.Unlock()
	go c.run(ctx, ex)
}

// finish ends a command: its nodes are free again (held for a while after a failure).
func (c *Controller) finish(ex *execution, res CommandResult) {
	now := c.deps.Clock.Now()
	c.mu.Lock()
	for _, n := range ex.cmd.Candidates {
		if c.running[n] == ex {
			delete(c.running, n)
		}
		if res.Result == ResultFailed {
			c.held[n] = now.Add(c.opts.FailureBackoff)
		}
	}
	c.mu.Unlock()
	res.End = now
	CommandsTotal.WithLabelValues(string(res.Command.Method), string(res.Command.Action), res.Result).Inc()
	if c.opts.OnCommand != nil {
		c.opts.OnCommand(res)
	}
	c.wg.Done()
}

// candidatesOf lists a command's nodes with their claims, sorted, for logs.
func candidatesOf(ex *execution) []string {
	out := slices.Clone(ex.cmd.Candidates)
	slices.Sort(out)
	return out
}

// maxStatusWrites bounds the NodeClaim status writes of one pass's recordClaimStatus; the rest
// wait for the next pass.
const maxStatusWrites = 50

// recordClaimStatus brings each managed NodeClaim's status up to date with what the pass saw:
//   - status.lastPodEventTime, when the node's last pod event (as the cluster mirror saw it) is
//     newer to the second it stores, so that consolidateAfter keeps counting from the right
//     moment across a restart of the controller;
//   - the Drifted condition (True with the drift's reason, removed when the claim matches
//     again) and the Consolidatable condition (True once consolidateAfter has passed for an
//     initialized claim, removed otherwise), as Karpenter writes them, so that
//     `kubectl get nodeclaims -o wide` shows DRIFTED.
//
// A write that only moves lastPodEventTime is a plain merge patch; one that changes conditions
// (a list the patch replaces whole) carries the resourceVersion, so it cannot undo a condition
// another controller set meanwhile: a conflict waits for the next pass.
func (c *Controller) recordClaimStatus(ctx context.Context, v *View) {
	written := 0
	for i := range v.Snapshot.Nodes {
		e := &v.Snapshot.Nodes[i]
		nc := v.Claims[e.Name]
		if nc == nil || nc.DeletionTimestamp != nil || e.Deleting && e.LastPodEvent.IsZero() {
			continue
		}
		upd := nc.DeepCopy()
		if !e.LastPodEvent.IsZero() && e.LastPodEvent.Truncate(time.Second).After(nc.Status.LastPodEventTime.Time) {
			upd.Status.LastPodEventTime = metav1.NewTime(e.LastPodEvent)
		}
		conditions := false
		if !e.Deleting {
			conditions = c.claimConditions(upd, e, v)
		}
		if !conditions && upd.Status.LastPodEventTime.Equal(&nc.Status.LastPodEventTime) {
			continue
		}
		if written == maxStatusWrites {
			return
		}
		written++
		patch := client.MergeFrom(nc)
		if conditions {
			patch = client.MergeFromWithOptions(nc, client.MergeFromWithOptimisticLock{})
		}
		if err := c.deps.Client.Status().Patch(ctx, upd, patch); err != nil && !apierrors.IsNotFound(err) {
			c.log.V(1).Info("recording the claim's status failed; trying again next pass", "nodeclaim", nc.Name, "error", err.Error())
		}
	}
}

// claimConditions sets nc's Drifted and Consolidatable conditions from the snapshot entry e and
// reports whether they changed.
func (c *Controller) claimConditions(nc *apisv1.NodeClaim, e *disruption.Node, v *View) bool {
	now := v.Snapshot.Now
	changed := false
	if e.Drifted != "" {
		changed = nc.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeDrifted, Status: metav1.ConditionTrue,
			Reason: conditionReason(v.DriftReasons[e.Name], "Drifted"), Message: e.Drifted}, now)
	} else {
		changed = nc.ClearCondition(apisv1.ConditionTypeDrifted)
	}
	pool := v.Snapshot.NodePools[e.NodePool]
	if at, ok := consolidatableAt(pool, e); ok && e.Initialized && !now.Before(at) {
		changed = nc.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeConsolidatable, Status: metav1.ConditionTrue,
			Reason: apisv1.ConditionTypeConsolidatable}, now) || changed
	} else {
		changed = nc.ClearCondition(apisv1.ConditionTypeConsolidatable) || changed
	}
	return changed
}

func consolidatableAt(pool *apisv1.NodePool, e *disruption.Node) (time.Time, bool) {
	if pool == nil {
		return time.Time{}, false
	}
	return disruption.ConsolidatableAt(pool, e)
}

// conditionReason returns reason when the API accepts it as a condition's reason (a CamelCase
// word such as a cloud provider's drift reason), else fallback.
func conditionReason(reason, fallback string) string {
	if reason == "" || len(reason) > 1024 || !conditionReasonRE.MatchString(reason) {
		return fallback
	}
	return reason
}

var conditionReasonRE = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

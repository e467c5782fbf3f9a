package provisioning

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/tenon-sh/tenon/internal/recovery"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/solverinput"
	"github.com/tenon-sh/tenon/pkg/metrics"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/snapshot"
	"github.com/tenon-sh/tenon/pkg/solver"
	"github.com/tenon-sh/tenon/pkg/state"
)

// Event reasons the provisioner records on pods and NodePools.
const (
	EventNominated        = "Nominated"
	EventFailedScheduling = "FailedScheduling"
	EventFailedValidation = "FailedValidation"
	// EventExpendable says tenon buys no capacity for the pod: its priority is below the
	// expendable cutoff.
	EventExpendable        = "Expendable"
	EventNodeClassNotReady = solverinput.EventNodeClassNotReady
)

// Options tune the provisioner.
type Options struct {
	// BatchIdle closes a batch once no new pending pod has come for this long (default 1s);
	// BatchMax closes it this long after it opened whatever happens (default 10s).
	BatchIdle, BatchMax time.Duration
	// Schedulers are the scheduler names whose pods tenon provisions for (default
	// default-scheduler).
	Schedulers []string
	// CreateWorkers is how many NodeClaims are created at once (default 16).
	CreateWorkers int
	// MinValuesPolicy is Strict ("" too) or BestEffort: whether a NodePool requirement's
	// minValues is kept or lowered to what is left (Karpenter's --min-values-policy).
	MinValuesPolicy solver.MinValuesPolicy
	// PreferencePolicy is Respect ("" too) or Ignore: whether pods' preferences shape the plan
	// (Karpenter's --preference-policy).
	PreferencePolicy solver.PreferencePolicy
	// Bound computes the plan's proven lower bound for every batch (reported in metrics and
	// logs); it costs time on large batches.
	Bound bool
	// OnBatch, when set, is called after each batch with its result and when it started (the
	// batch window had just closed) and ended (every NodeClaim created). Benchmarks use it.
	OnBatch func(res *Result, start, end time.Time)
	// ExpendablePriorityCutoff: pending pods of a priority below it get no capacity, as in
	// Cluster Autoscaler (--expendable-pods-priority-cutoff; default
	// scheduling.DefaultExpendableCutoff, -10). They run in the room other pods leave.
	ExpendablePriorityCutoff *int32
	// NoNomination turns nomination off. By default, when a NodeClaim's Node registers, the
	// pending pods planned onto the claim get it as status.nominatedNodeName, so that
	// kube-scheduler tries that node first (NominatedNodeNameForExpectation, beta and on from
	// Kubernetes 1.35) and binds them where the plan put them; without it kube-scheduler's own
	// scores spread a burst differently and the next batch buys for the difference (see
	// docs/performance.md, "Binding where tenon planned"). --nominate-pods=false sets it.
	NoNomination bool
	// GangDeadline is how long a gang (a PodGroup with a gang policy) may have NodeClaims while
	// fewer than its minCount pods are bound before the claims that hold nothing else are
	// released (gangs.go; --gang-deadline, default DefaultGangDeadline; negative: never).
	// GangReleaseTTL is how long their offerings then stay unavailable (default
	// DefaultGangReleaseTTL).
	GangDeadline, GangReleaseTTL time.Duration
}

func (o *Options) defaults() {
	if o.BatchIdle <= 0 {
		o.BatchIdle = time.Second
	}
	if o.BatchMax <= 0 {
		o.BatchMax = 10 * time.Second
	}
	if len(o.Schedulers) == 0 {
		o.Schedulers = []string{corev1.DefaultSchedulerName}
	}
	if o.CreateWorkers <= 0 {
		o.CreateWorkers = 16
	}
	if o.GangDeadline == 0 {
		o.GangDeadline = DefaultGangDeadline
	}
	if o.GangReleaseTTL <= 0 {
		o.GangReleaseTTL = DefaultGangReleaseTTL
	}
}

// OfferingFilter marks offerings that recently failed as unavailable.
type OfferingFilter = solverinput.OfferingFilter

// Provisioner turns pending pods into NodeClaims.
type Provisioner struct {
	kube     client.Client
	cluster  *state.Cluster
	source   *solverinput.Source
	recorder record.EventRecorder
	clock    clock.Clock
	opts     Options
	batcher  *Batcher
	log      logr.Logger
	// backoff is the wait before the batch retried after a failed one, doubled by each
	// failure in a row up to BatchMax and cleared by a batch that succeeds (Start's goroutine
	// alone uses it).
	backoff time.Duration
	// nom nominates planned pods to their claims' nodes (nil with Options.NoNomination).
	nom *nominator
	// rechecking is set while a batch is due PromiseRecheck after one that left pods held by
	// promises.
	rechecking atomic.Bool
}

// PromiseRecheck is how soon a batch runs again after one that left pending pods to the claims
// they were promised to: a promise can end by time alone (state.PromiseTTL after its node
// registered, the pod not bound), and nothing else would wake the provisioner for that pod —
// kube-scheduler retries an unschedulable pod only every few minutes and may not update it.
const PromiseRecheck = 10 * time.Second

// Deps are what the provisioner works with.
type Deps struct {
	Client   client.Client
	Cluster  *state.Cluster
	Cloud    cloudprovider.CloudProvider
	Filter   OfferingFilter // optional
	Recorder record.EventRecorder
	Clock    clock.Clock // default: the real clock
	Log      logr.Logger
}

// New returns a provisioner.
func New(d Deps, opts Options) *Provisioner {
	opts.defaults()
	if d.Clock == nil {
		d.Clock = clock.RealClock{}
	}
	p := &Provisioner{
		kube: d.Client, cluster: d.Cluster, recorder: d.Recorder,
		source: &solverinput.Source{Cluster: d.Cluster, Cloud: d.Cloud, Filter: d.Filter, Reader: d.Client, Recorder: d.Recorder, Schedulers: opts.Schedulers,
			ExpendablePriorityCutoff: opts.ExpendablePriorityCutoff},
		clock: d.Clock, opts: opts, batcher: NewBatcher(d.Clock, opts.BatchIdle, opts.BatchMax), log: d.Log,
	}
	if !opts.NoNomination {
		p.nom = newNominator(d.Client, d.Cluster, d.Clock, d.Log.WithName("nominator"), p.Trigger)
		p.source.StaleNomination = p.nom.isStale
	}
	return p
}

var _ manager.LeaderElectionRunnable = (*Provisioner)(nil)

// NeedLeaderElection says that only the leader provisions.
func (p *Provisioner) NeedLeaderElection() bool { return true }

// Trigger asks for a batch to be provisioned soon.
func (p *Provisioner) Trigger() { p.batcher.Trigger() }

// BeforeRegister is the NodeClaim lifecycle's hook (lifecycle.Deps.BeforeRegister): with
// nomination on (Options.NoNomination false) it nominates the pods planned onto claim to node before the node's
// unregistered taint comes off; without, it does nothing.
func (p *Provisioner) BeforeRegister(ctx context.Context, claim *apisv1.NodeClaim, node *corev1.Node) {
	if p.nom != nil {
		p.nom.registering(ctx, claim.Name, node.Name)
	}
}

// Register triggers a batch whenever a pod becomes provisionable, and when a NodeClaim or Node
// goes away (its pods need room again).
func (p *Provisioner) Register(ctx context.Context, informers cache.Informers) error {
	podInf, err := informers.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return err
	}
	check := func(o any) {
		if pod, ok := o.(*corev1.Pod); ok && solverinput.IsProvisionable(pod, p.opts.Schedulers) {
			p.Trigger()
		}
	}
	update := func(old, cur any) {
		check(cur)
		if p.nom == nil {
			return
		}
		if o, ok := old.(*corev1.Pod); ok {
			if c, ok := cur.(*corev1.Pod); ok {
				p.nom.podChanged(o, c)
			}
		}
	}
	if _, err := podInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: check, UpdateFunc: update}); err != nil {
		return err
	}
	for _, obj := range []client.Object{&apisv1.NodeClaim{}, &corev1.Node{}} {
		inf, err := informers.GetInformer(ctx, obj)
		if err != nil {
			return err
		}
		h := toolscache.ResourceEventHandlerFuncs{DeleteFunc: func(o any) {
			if nc, ok := o.(*apisv1.NodeClaim); ok && p.nom != nil {
				p.nom.forget(nc.Name)
			}
			p.Trigger()
		}}
		if _, isNode := obj.(*corev1.Node); isNode && p.nom != nil {
			changed := func(o any) {
				if n, ok := o.(*corev1.Node); ok {
					p.nom.nodeChanged(n)
				}
			}
			h.AddFunc, h.UpdateFunc = changed, func(_, o any) { changed(o) }
		}
		if _, err := inf.AddEventHandler(h); err != nil {
			return err
		}
	}
	return nil
}

// ControllerName names the provisioning loop in logs, metrics and events.
const ControllerName = "provisioning"

// Start provisions batch after batch until ctx ends. Pods pending when it starts get a batch.
// A batch that panics is skipped (see package recovery): a ControllerPanic event goes to every
// NodePool, and another batch is triggered BatchMax later for the pods it left pending. A batch
// that fails otherwise (a NodePool's instance types or other objects could not be read, so
// that its pods may have been left unplanned for want of them, or a NodeClaim could not be
// created) is retried after a backoff: BatchIdle, doubled by each failure in a row up to
// BatchMax. Without the retry, pods a transient error left pending would wait for an unrelated
// change to the cluster.
func (p *Provisioner) Start(ctx context.Context) error {
	ctx = metrics.WithController(ctx, controllerLabel) // Karpenter's name for this loop
	if p.nom != nil {
		go p.nom.run(ctx)
	}
	if p.opts.GangDeadline > 0 {
		go p.releaseGangs(ctx)
	}
	p.Trigger()
	for p.batcher.Wait(ctx) {
		err := recovery.Guard(p.log, ControllerName, func() error {
			_, err := p.Schedule(ctx)
			return err
		})
		var perr *recovery.PanicError
		if errors.As(err, &perr) {
			recovery.Record(p.recorder, perr, p.cluster.NodePools()...)
			p.retryAfter(ctx, p.opts.BatchMax)
			continue
		}
		if p.cluster.HoldsPromises() && p.rechecking.CompareAndSwap(false, true) {
			go func() {
				select {
				case <-ctx.Done():
				case <-p.clock.After(PromiseRecheck):
					p.rechecking.Store(false) // before the batch, which may need another
					p.Trigger()
				}
			}()
		}
		if err == nil || ctx.Err() != nil {
			p.backoff = 0
			continue
		}
		p.backoff = min(max(2*p.backoff, p.opts.BatchIdle), p.opts.BatchMax)
		p.log.Error(err, "provisioning failed; retrying", "after", p.backoff.String())
		p.retryAfter(ctx, p.backoff)
	}
	return nil
}

// retryAfter triggers a batch d from now, unless ctx ends first.
func (p *Provisioner) retryAfter(ctx context.Context, d time.Duration) {
	go func() {
		select {
		case <-ctx.Done():
		case <-p.clock.After(d):
			p.Trigger()
		}
	}()
}

// Result summarizes one batch.
type Result struct {
	Pods          int
	Invalid       int
	Expendable    int
	Claims        []*apisv1.NodeClaim
	Nominated     int
	Unschedulable int
	Plan          *solver.Plan
	// Solved is how long reading the cluster and solving took; Created how long creating the
	// NodeClaims took after that.
	Solved, Created time.Duration
}

// Schedule provisions for the pods pending now: it validates them, solves, creates NodeClaims,
// nominates, and records events. Its error says what could not be read (the batch was planned
// with the rest) or created; the caller retries the batch.
func (p *Provisioner) Schedule(ctx context.Context) (*Result, error) {
	start := p.clock.Now()
	res := &Result{}
	pools := p.source.Pools()
	pods, rejected, expendable := p.source.Pending(ctx, pools)
	res.Pods = len(pods) + len(rejected) + len(expendable)
	for _, pod := range expendable {
		res.Expendable++
		p.recorder.Eventf(pod, corev1.EventTypeNormal, EventExpendable,
			"tenon buys no capacity for this pod: its priority %d is below the expendable cutoff %d (--expendable-pods-priority-cutoff); it runs in room other pods leave",
			scheduling.Priority(pod), p.source.ExpendableCutoff())
	}
	if len(pods)+len(rejected) == 0 {
		return res, nil
	}
	for _, r := range rejected {
		res.Invalid++
		p.recorder.Eventf(r.Pod, corev1.EventTypeWarning, EventFailedValidation, "tenon cannot plan for this pod: %v", r.Err)
	}
	view, readErr := p.source.Snapshot(ctx, pools)
	if readErr != nil {
		readErr = fmt.Errorf("some objects could not be read; planned with the rest: %w", readErr)
	}
	snap := view.Snapshot
	snap.Pods = pods
	if err := p.source.Devices(ctx, snap, false); err != nil {
		readErr = errors.Join(readErr, err)
	}
	plan, err := solver.Solve(snap, solver.Options{SkipBound: !p.opts.Bound, MinValuesPolicy: p.opts.MinValuesPolicy, PreferencePolicy: p.opts.PreferencePolicy})
	if err != nil {
		return res, fmt.Errorf("solving %d pods: %w", len(pods), err)
	}
	res.Plan = plan
	res.Solved = p.clock.Since(start)
	schedulingDuration.WithLabelValues(controllerLabel).Observe(res.Solved.Seconds())
	legacySchedulingDuration.WithLabelValues(controllerLabel).Observe(res.Solved.Seconds())
	batchPods.Observe(float64(len(pods)))
	if plan.LowerBound > 0 {
		plannedPrice.Add(plan.Price)
		lowerBound.Add(plan.LowerBound)
	}

	res.Claims, err = p.createClaims(ctx, plan, pools)
	err = errors.Join(readErr, err)
	res.Created = p.clock.Since(start) - res.Solved
	for _, pl := range plan.Placements {
		p.cluster.Nominate(pl.Node)
		kind := "node"
		if pl.InFlight {
			kind = "nodeclaim"
			p.cluster.Promise(pl.Node, []*corev1.Pod{pl.Pod})
			if p.nom != nil {
				p.nom.plan(pl.Node, []*corev1.Pod{pl.Pod})
			}
		}
		p.recorder.Eventf(pl.Pod, corev1.EventTypeNormal, EventNominated, "Pod should schedule on: %s/%s", kind, pl.Node)
		res.Nominated++
	}
	for _, u := range plan.Unschedulable {
		p.recorder.Eventf(u.Pod, corev1.EventTypeWarning, EventFailedScheduling, "tenon cannot place the pod: %s", u.Message())
	}
	res.Unschedulable = len(plan.Unschedulable)
	unschedulablePods.WithLabelValues(controllerLabel).Set(float64(res.Unschedulable))
	if p.opts.OnBatch != nil {
		p.opts.OnBatch(res, start, p.clock.Now())
	}
	p.log.Info("provisioned", "pods", len(pods), "invalid", res.Invalid, "expendable", res.Expendable, "nodeclaims", len(res.Claims),
		"nominated", res.Nominated, "unschedulable", res.Unschedulable, "pricePerHour", plan.Price,
		"lowerBound", plan.LowerBound, "duration", p.clock.Since(start).String())
	return res, err
}

// createClaims creates the plan's NodeClaims, a few at a time, adds each to the mirror at once
// (so the next batch sees it in flight), and nominates it for its pods.
func (p *Provisioner) createClaims(ctx context.Context, plan *solver.Plan, pools map[string]*apisv1.NodePool) ([]*apisv1.NodeClaim, error) {
	out := make([]*apisv1.NodeClaim, len(plan.Claims))
	errs := make([]error, len(plan.Claims))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < p.opts.CreateWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				// A worker is a goroutine of its own: a panic here would escape Start's guard.
				errs[i] = recovery.Guard(p.log, ControllerName, func() error {
					var err error
					out[i], err = p.createClaim(ctx, plan.Claims[i], pools)
					return err
				})
				var perr *recovery.PanicError
				if errors.As(errs[i], &perr) {
					if np := pools[plan.Claims[i].NodePool]; np != nil {
						recovery.Record(p.recorder, perr, np)
					}
				}
			}
		}()
	}
	for i := range plan.Claims {
		work <- i
	}
	close(work)
	wg.Wait()
	var created []*apisv1.NodeClaim
	for _, nc := range out {
		if nc != nil {
			created = append(created, nc)
		}
	}
	return created, errors.Join(errs...)
}

// createClaim creates one NodeClaim of the plan and nominates it for its pods.
func (p *Provisioner) createClaim(ctx context.Context, c *solver.Claim, pools map[string]*apisv1.NodePool) (*apisv1.NodeClaim, error) {
	nc := snapshot.NodeClaim(c, pools[c.NodePool])
	if err := p.kube.Create(ctx, nc); err != nil {
		return nil, fmt.Errorf("creating a nodeclaim of nodepool %s: %w", c.NodePool, err)
	}
	p.cluster.UpdateNodeClaim(nc)
	p.cluster.Nominate(nc.Name)
	p.cluster.Promise(nc.Name, c.Pods)
	if p.nom != nil {
		p.nom.plan(nc.Name, c.Pods)
	}
	claimCreated(nc)
	for _, pod := range c.Pods {
		p.recorder.Eventf(pod, corev1.EventTypeNormal, EventNominated, "Pod should schedule on: nodeclaim/%s", nc.Name)
	}
	return nc, nil
}

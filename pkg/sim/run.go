package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// run is one policy replaying the workload: the engine's whole state.
type run struct {
	env    *Env
	opts   Options
	policy Policy
	cloud  *cloud.Cloud
	boot   map[string]time.Duration // each class's bootDelay
	rng    *rand.Rand               // boot delays
	view   *View

	now  time.Duration
	q    queue
	pods []Pod // no pointers: the garbage collector need not scan them
	// api holds the Kubernetes objects of the pods given to the solver, while they live.
	api map[PodID]*corev1.Pod
	// firstPod[j] is the ID of the first pod of job j (its pods are consecutive).
	firstPod []PodID
	nextJob  int
	nodes    []*Node
	alive    []NodeID // nodes not gone, in launch order
	aliveVer int      // bumps when alive changes
	// free is the free room of the nodes alive and not disrupting.
	free   scheduling.Resources
	pend   pendingQueue
	active int // pods pending, nominated or running

	batchOpen          bool
	batchStart, batchT time.Duration
	scanAt             time.Duration // next scheduled scan (-1: none)
	passAt             time.Duration // next scheduled pass (-1: none)
	passGen            uint32
	lastPass           time.Duration
	iceWaiting         bool
	commands           []*command

	// roomEpoch counts the events that can give pods more room: a pod leaving a node, a
	// launch, an instance shutting down. capEpoch counts the launches and removals of nodes.
	roomEpoch, capEpoch uint64

	sigs   map[string]int32
	compat [][]int8 // compat[shape][sig]: 0 unknown, 1 yes, 2 no

	met      *metrics
	stats    Stats
	progress int // last progress percentage reported
	// unplaceable counts the pods submitted that no instance type of any pool can hold: they
	// never enter the pending queue.
	unplaceable int
	// incomplete is set when the replay was stopped before its end.
	incomplete bool
	// bill is the bill under Options.Commitments (nil without).
	bill *billing
	// running counts the pods running; idleSince is when the last pod running stopped.
	// churned is set when the replay was ended because nothing had run for settleGrace while
	// capacity kept changing.
	running   int
	idleSince time.Duration
	churned   bool
	// dynamic is set when some class limits capacity (capacity pools, finite spot,
	// reservations): what the cloud sells then changes as instances come and go.
	dynamic bool
	// retryEpoch is capEpoch+1 when pods were last offered again after a failed launch.
	retryEpoch uint64

	// The gangs (Options.Gangs) with pods not running, oldest job first; gangEpoch counts the
	// events that may let a waiting gang bind (room freed or a node ready), and gangTried[j]
	// is gangEpoch+1 when gang j last failed to bind (gangs.go).
	gangsWaiting []int32
	gangEpoch    uint64
	gangTried    []uint64
	gangList     []solver.Gang // the gangs' PodGroups, for the solver (gangs)
}

// settleGrace is how long a replay goes on once it has stalled (every job submitted, no pod
// running, nominated or in a batch, no node launching, and the pods left pending refused by
// the provisioner at the capacity there is) while nodes are still up: time for the policy to
// take the idle nodes away, which may let NodePool limits admit the pods left. A replay that
// stalls with no node up ends at once.
const settleGrace = time.Hour

// Stats count what a run did.
type Stats struct {
	Events         int `json:"events"`
	Batches        int `json:"batches"`
	Passes         int `json:"passes"`
	SolverCalls    int `json:"solverCalls"`
	LaunchFailures int `json:"launchFailures"`
	Commands       int `json:"commands"`
	Cancelled      int `json:"cancelledCommands"`
}

func newRun(env *Env, opts Options, policy Policy) (*run, error) {
	r := &run{
		env: env, opts: opts, policy: policy,
		cloud:  cloud.New(cloud.Options{IDSeed: opts.Seed}),
		boot:   map[string]time.Duration{},
		rng:    rand.New(rand.NewPCG(opts.Seed, 0xb007)),
		scanAt: -1, passAt: -1, lastPass: -1,
		sigs: map[string]int32{}, api: map[PodID]*corev1.Pod{},
	}
	names := make([]string, 0, len(env.Classes))
	for name := range env.Classes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		cfg := env.Classes[name]
		r.boot[name] = cfg.Delays.Boot
		// The engine plays boot, registration and device plugins itself (the boot delay may be
		// drawn from a distribution); the cloud keeps capacity, offerings, interruptions and
		// the shutdown delay.
		cfg.Delays.Boot, cfg.Delays.Registration, cfg.Delays.DevicePlugin = 0, 0, 0
		switch opts.Spot {
		case SpotAdvisor:
			cfg.Interruptions.Spot = cloud.SpotAdvisor
			if cfg.Interruptions.Scale == 0 {
				cfg.Interruptions.Scale = 1
			}
		case SpotNone:
			cfg.Interruptions.Spot = cloud.SpotNone
		}
		if opts.Spot != SpotClass {
			cfg.Interruptions.Seed = int64(opts.Seed)
		}
		if opts.SpotCapacity == SpotCapacityAdvisor {
			cfg.Pools = append(slices.Clip(cfg.Pools), spotPools(env, name, opts.SpotCapacityVCPUs)...)
		}
		r.dynamic = r.dynamic || len(cfg.Pools) > 0 || len(cfg.Catalog.Reservations) > 0
		if err := r.cloud.SetClass(name, cfg); err != nil {
			return nil, err
		}
	}
	w := env.Workload
	r.firstPod = make([]PodID, len(w.Jobs)+1)
	n := 0
	for i := range w.Jobs {
		r.firstPod[i] = PodID(n)
		n += w.Jobs[i].Replicas
	}
	r.firstPod[len(w.Jobs)] = PodID(n)
	r.pods = make([]Pod, n)
	for j := range w.Jobs {
		for id := r.firstPod[j]; id < r.firstPod[j+1]; id++ {
			r.pods[id] = Pod{ID: id, Job: int32(j), Shape: int32(w.Jobs[j].Shape), Node: NoNode}
		}
	}
	r.pend.init(len(w.Shapes))
	if opts.Gangs {
		r.gangTried = make([]uint64, len(w.Jobs))
	}
	r.compat = make([][]int8, len(w.Shapes))
	r.view = &View{r: r}
	r.met = newMetrics(r, w.Span(), opts)
	r.bill = newBilling(r, opts.Commitments, policy.Commitments)
	r.met.rebill()
	return r, nil
}

// wall converts a virtual time to the wall-clock time it stands for.
func (r *run) wall(t time.Duration) time.Time { return r.env.Start.Add(t) }

// simulate replays the workload and returns the policy's result. When ctx ends first, the
// replay stops where it is and the result, marked Incomplete, covers the virtual time it
// reached.
func (r *run) simulate(ctx context.Context) *PolicyResult {
	w := r.env.Workload
	if len(w.Jobs) > 0 {
		r.q.push(event{at: w.Jobs[0].Submit, kind: evArrival, x: 0})
	}
	if w.End > 0 {
		r.q.push(event{at: w.End, kind: evEnd})
	}
	until := r.opts.Until
	stalled, graceOver, stalledSince := false, false, time.Duration(-1)
	for r.q.len() > 0 {
		if r.stats.Events%1024 == 0 && ctx.Err() != nil {
			r.incomplete = true
			break
		}
		if until > 0 && r.q.peek() > until {
			break
		}
		if stalledSince >= 0 && r.q.peek() > stalledSince+settleGrace {
			stalled, graceOver = true, true
			break
		}
		e := r.q.pop()
		r.met.advance(e.at)
		r.now = e.at
		r.stats.Events++
		r.handle(e)
		r.tryGangs()
		if r.nextJob < len(w.Jobs) {
			continue
		}
		if r.active == 0 {
			break
		}
		// Nothing has run for settleGrace while pods wait and nodes come and go: a policy
		// buying capacity for gangs that never complete (each time the idle nodes are taken
		// away, it buys them again) would go on for ever.
		if r.running == 0 && r.now > max(r.idleSince, w.Jobs[len(w.Jobs)-1].Submit)+settleGrace {
			r.churned = true
			break
		}
		// Every job is in: once the pods left can never start, the replay is over (its
		// queue may still hold events far ahead, such as the interruption notices drawn at
		// each launch).
		if !r.stalled() {
			stalledSince = -1
			continue
		}
		if len(r.alive) == 0 {
			stalled = true
			break
		}
		if stalledSince < 0 {
			stalledSince = r.now
		}
	}
	if graceOver {
		// The idle nodes left up through the grace are billed until it ends.
		r.met.advance(stalledSince + settleGrace)
		r.now = stalledSince + settleGrace
	}
	if until > 0 && r.now < until && !stalled && !r.incomplete && (r.nextJob < len(w.Jobs) || r.active > 0) {
		r.met.advance(until)
		r.now = until
	}
	r.report(100)
	return r.finish()
}

// stalled reports whether nothing is left to happen to the pods: none running or nominated,
// no batch or scan to come, no node launching, and every pending pod refused by the
// provisioner at the capacity there is now. Pods pending that the provisioner has not been
// offered since the capacity last changed get a batch (and the run is not stalled yet).
func (r *run) stalled() bool {
	if r.active != r.pend.size || r.batchOpen || r.scanAt >= 0 {
		return false
	}
	for _, id := range r.alive {
		if r.nodes[id].State == NodeLaunching {
			return false
		}
	}
	for s, es := range r.pend.q {
		for i := r.pend.headIdx[s]; i < len(es); i++ {
			if e := &es[i]; r.pend.valid(r, e) && r.pods[e.id].stuck != r.capEpoch+1 {
				r.trigger()
				return false
			}
		}
	}
	return true
}

func (r *run) handle(e event) {
	switch e.kind {
	case evArrival:
		r.arrive(int(e.x))
	case evBatch:
		r.closeBatch()
	case evScan:
		if r.scanAt == e.at {
			r.scanAt = -1
			r.provision()
		}
	case evReady:
		r.ready(r.nodes[e.x])
	case evFinish:
		r.finishPod(&r.pods[e.x], e.gen)
	case evPass:
		if e.gen == r.passGen {
			r.pass()
		}
	case evNotice:
		r.notice(r.nodes[e.x])
	case evDeadline:
		r.deadline(r.nodes[e.x])
	case evTerminated:
		r.terminated(r.nodes[e.x])
	case evEnd:
		r.endWorkload()
	default:
		panic(fmt.Sprintf("sim: unknown event kind %d", e.kind))
	}
}

// arrive submits job j's pods: each goes to a node with room if the scheduler finds one, else
// it waits for the provisioner.
func (r *run) arrive(j int) {
	w := r.env.Workload
	job := &w.Jobs[j]
	placeable := r.env.placeable(job.Shape)
	for id := r.firstPod[j]; id < r.firstPod[j+1]; id++ {
		p := &r.pods[id]
		p.Submitted = r.now
		if !placeable {
			r.unplaceable++ // no policy can run it: it never waits for capacity
			continue
		}
		p.Work = job.Duration
		if job.Duration == Forever {
			p.Work = -1
		}
		r.active++
		r.makePending(p)
	}
	r.nextJob = j + 1
	if r.nextJob < len(w.Jobs) {
		r.q.push(event{at: w.Jobs[r.nextJob].Submit, kind: evArrival, x: int32(r.nextJob)})
	}
	r.report(r.nextJob * 100 / len(w.Jobs))
}

func (r *run) report(pct int) {
	if r.opts.Progress != nil && pct > r.progress {
		r.progress = pct
		r.opts.Progress(r.policy.Name, float64(pct)/100)
	}
}

// makePending puts a pod without a node in line: the scheduler binds it at once if a ready node
// has room, else the provisioner is asked.
func (r *run) makePending(p *Pod) {
	p.State = PodPending
	p.stuck = 0
	p.Node = NoNode
	p.PendingSince = r.now
	if r.isGang(p.Job) {
		// The binder places a gang whole, once the event that made this pod pending is
		// done (tryGangs); until then it waits like any pending pod.
		r.pend.add(p, true)
		r.gangWaits(p.Job)
		r.trigger()
		return
	}
	if r.bindAnywhere(p) {
		return
	}
	r.pend.add(p, false)
	r.trigger()
}

// trigger asks for provisioning: the batcher opens or extends its window, or a scan is
// scheduled at the next tick of the policy's scan interval.
func (r *run) trigger() {
	if iv := r.policy.ScanInterval; iv > 0 {
		if r.scanAt < 0 {
			r.scanAt = (r.now/iv + 1) * iv
			r.q.push(event{at: r.scanAt, kind: evScan})
		}
		return
	}
	if !r.batchOpen {
		r.batchOpen = true
		r.batchStart = r.now
		r.q.push(event{at: r.now + r.opts.BatchIdle, kind: evBatch})
	}
	r.batchT = r.now
}

func (r *run) closeBatch() {
	if !r.batchOpen {
		return
	}
	closeAt := min(r.batchT+r.opts.BatchIdle, r.batchStart+r.opts.BatchMax)
	if r.now < closeAt {
		r.q.push(event{at: closeAt, kind: evBatch})
		return
	}
	r.batchOpen = false
	r.provision()
}

// provision hands the pending pods to the policy's provisioner and carries out its decision.
// Pods a provisioner left pending are not offered again until the capacity changes (a node
// launches or goes, or the cloud's offerings change): until then the answer cannot change for
// them (room freeing up on a ready node is the scheduler's business, and it binds them at
// once). A backlog held back by NodePool limits thus costs nothing per batch.
func (r *run) provision() {
	all := r.pend.list(r)
	pending := all[:0]
	for _, id := range all {
		if r.pods[id].stuck != r.capEpoch+1 {
			pending = append(pending, id)
		}
	}
	if len(pending) == 0 {
		return
	}
	r.stats.Batches++
	d := r.policy.Provisioner.Provision(r.wall(r.now), r.view, pending)
	for _, pl := range d.Place {
		p, n := &r.pods[pl.Pod], r.nodes[pl.Node]
		if p.State != PodPending || n.State == NodeGone || n.Disrupting || !r.shapeFits(p, n) {
			continue
		}
		if n.State == NodeReady && !r.isGang(p.Job) {
			r.bind(p, n)
		} else {
			r.nominate(p, n) // a gang's pods bind together (tryGangs, after this event)
		}
	}
	failed := false
	for _, l := range d.Launch {
		failed = r.launch(l, -1) == nil || failed
	}
	// A launch that failed (its offerings ran out between the decision and the launch, as
	// when a decision buys several nodes of a pool that has room for fewer) leaves its pods to
	// be offered again at the next batch or scan, once per capacity epoch: the provisioner then
	// sees the pool full. Otherwise the pods left pending wait for the capacity to change.
	if failed && r.retryEpoch != r.capEpoch+1 {
		r.retryEpoch = r.capEpoch + 1
		r.trigger()
	} else {
		for _, id := range pending {
			if p := &r.pods[id]; p.State == PodPending {
				p.stuck = r.capEpoch + 1
			}
		}
	}
	// A scanning policy (Cluster Autoscaler) scales one group per scan: while scans make
	// progress and pods are still pending, the next scan follows at the next tick. (A scan
	// that launched nothing would find the same until something changes, which triggers one.)
	if r.policy.ScanInterval > 0 && len(d.Launch) > 0 && r.pend.size > 0 {
		r.trigger()
	}
}

// endWorkload ends the pods that run until the workload's horizon.
func (r *run) endWorkload() {
	for i := range r.pods {
		p := &r.pods[i]
		switch p.State {
		case PodRunning:
			r.complete(p)
		case PodPending, PodNominated:
			r.dropPending(p)
		}
	}
}

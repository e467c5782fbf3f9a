package sim

import (
	"cmp"
	"math"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// SpotToSpotMinTypes is how many cheaper instance types a spot node's replacement must be able
// to launch as before consolidation replaces spot with spot (Karpenter's rule: replacing a spot
// node with the single cheapest type would chase the spot market into interruptions).
const SpotToSpotMinTypes = 15

// tenonDisrupter is the simulator's interim implementation of tenon's disruption methods, to
// be replaced by pkg/disruption: per pass, in order,
//
//  1. expiration: nodes older than their pool's expireAfter go (forceful: no budget, no
//     replacement launched ahead; their pods are provisioned again);
//  2. emptiness: ready nodes without pods, quiet for consolidateAfter, go within the Empty
//     budget;
//  3. single-node consolidation (WhenEmptyOrUnderutilized): quiet nodes, fewest pods first
//     (then dearest), are each checked with the solver: their pods re-solved against the rest
//     of the cluster with the node excluded. No new claim: the node is deleted; one claim
//     cheaper than the node: it is replaced (spot by spot only with SpotToSpotMinTypes cheaper
//     options). The first candidate that passes makes the pass's command, within the
//     Underutilized budget.
//
// Cheap necessary conditions (room left elsewhere, a cheaper type that holds the pods) spare
// the solver the candidates that cannot pass.
type tenonDisrupter struct {
	t       *tenon
	all     *ladder
	notSpot *ladder
	// failed remembers the candidates the solver rejected, with the room epoch and node
	// change they were rejected at: a rejection stands until some node's room grows, a node
	// launches or the offerings change (more room can only help), or the node itself changes.
	failed failures
	gate   quietGate
	room   *roomIndex // reset each pass
}

// quietGate skips disruption passes that cannot find anything: after a pass that found
// nothing, only more room (RoomEpoch: a pod leaving a node, a launch, a node going) or the
// time the pass asked to wake at can make a method succeed; pods binding only take room.
type quietGate struct {
	valid bool
	epoch uint64
	wake  time.Time
}

// run runs pass unless the gate says nothing can have changed since the last empty pass.
func (g *quietGate) run(now time.Time, v *View, pass func(time.Time, *View) ([]Command, time.Time)) ([]Command, time.Time) {
	if g.skip(now, v) {
		return nil, g.wake
	}
	cmds, wake := pass(now, v)
	g.record(v, cmds, wake)
	return cmds, wake
}

func (g *quietGate) skip(now time.Time, v *View) bool {
	return g.valid && v.RoomEpoch() == g.epoch && (g.wake.IsZero() || now.Before(g.wake))
}

func (g *quietGate) record(v *View, cmds []Command, wake time.Time) {
	g.valid, g.epoch, g.wake = len(cmds) == 0, v.RoomEpoch(), wake
}

type failure struct {
	epoch  uint64
	change time.Duration
}

// Pass runs the methods in order, unless nothing that could make one succeed happened since
// the last pass that found nothing (see quietGate).
func (d *tenonDisrupter) Pass(now time.Time, v *View) ([]Command, time.Time) {
	return d.gate.run(now, v, d.pass)
}

func (d *tenonDisrupter) pass(now time.Time, v *View) ([]Command, time.Time) {
	env := v.Env()
	nodes := v.Nodes()
	t := v.Now()
	wake := noWake
	cmds := expirations(v, wake.at)
	// Emptiness.
	allowed := map[int]int{}
	for _, n := range nodes {
		p := env.Pools[n.Pool]
		if n.Disrupting || n.State != NodeReady || !n.Empty() || p.ConsolidateAfter < 0 || expiring(cmds, n.ID) {
			continue
		}
		if at := n.LastChange + p.ConsolidateAfter; at > t {
			wake.at(at)
			continue
		}
		left, ok := allowed[n.Pool]
		if !ok {
			left = v.Allowed(n.Pool, apisv1.DisruptionReasonEmpty)
		}
		if left > 0 {
			cmds = append(cmds, Command{Reason: ReasonEmpty, Nodes: []NodeID{n.ID}, Savings: v.r.price(n)})
			left--
		}
		allowed[n.Pool] = left
	}
	if len(cmds) > 0 {
		return cmds, wake.time(now, t)
	}
	// Single-node consolidation: the quiet nodes that pass the necessary conditions (and were
	// not rejected since the last time room grew), fewest pods first, then dearest.
	var ri *roomIndex
	var cands []candidate
	for _, n := range nodes {
		p := env.Pools[n.Pool]
		if n.Disrupting || n.State != NodeReady || n.Empty() || p.ConsolidateAfter < 0 || p.Policy == apisv1.ConsolidationPolicyWhenEmpty {
			continue
		}
		if at := n.LastChange + p.ConsolidateAfter; at > t {
			wake.at(at)
			continue
		}
		if d.failedAt(v, n) || v.r.splitsGang(n) { // a gang is disrupted whole or not at all
			continue
		}
		if ri == nil {
			ri = d.room.reset(v, nodes)
			d.room = ri
			if d.all == nil {
				d.all, d.notSpot = ladders(env.Pools)
			}
		}
		del, repl := ri.movable([]*Node{n}, v.r.price(n), n.Offering.CapacityType == apisv1.CapacityTypeSpot, d.t.spotToSpot, d.all, d.notSpot)
		if !del && !repl {
			d.fail(v, n)
			continue
		}
		cands = append(cands, candidate{n: n, del: del})
	}
	slices.SortStableFunc(cands, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(len(a.n.Pods), len(b.n.Pods)), cmp.Compare(v.r.price(b.n), v.r.price(a.n)), cmp.Compare(a.n.ID, b.n.ID))
	})
	pc := &passCache{}
	budget := map[int]int{}
	for _, c := range cands {
		left, ok := budget[c.n.Pool]
		if !ok {
			left = v.Allowed(c.n.Pool, apisv1.DisruptionReasonUnderutilized)
			budget[c.n.Pool] = left
		}
		if left <= 0 {
			continue
		}
		if cmd, ok := d.check(v, pc, c, cands); ok {
			return []Command{cmd}, wake.time(now, t)
		}
		d.fail(v, c.n)
	}
	return nil, wake.time(now, t)
}

// candidate is a node consolidation may take away; del is set when its pods may fit on the
// other nodes.
type candidate struct {
	n   *Node
	del bool
}

// passCache holds the snapshots one pass prepares, when first needed: the nodes alone (for
// deletes), and the nodes with the pools (for replacements).
type passCache struct {
	nodes, full *solver.Prepared
	// shapes are the candidates' shapes, and snap the pass's snapshot for them, which both
	// are prepared from.
	shapes []int
	snap   *solver.Snapshot
}

// candidateShapes returns the shapes running on the pass's candidates.
func (pc *passCache) candidateShapes(v *View, cands []candidate) []int {
	if pc.shapes == nil {
		pc.shapes = candidateShapes(v, cands)
	}
	return pc.shapes
}

// snapshot returns the pass's snapshot: the pools' types and the nodes with room for a shape
// of the candidates (built once a pass).
func (pc *passCache) snapshot(d *tenonDisrupter, v *View, cands []candidate) *solver.Snapshot {
	if pc.snap == nil {
		pc.snap = d.t.snapshot(v, pc.candidateShapes(v, cands), nil)
	}
	return pc.snap
}

func (d *tenonDisrupter) fail(v *View, n *Node) { d.failed.set(v, n) }

func (d *tenonDisrupter) failedAt(v *View, n *Node) bool { return d.failed.has(v, n) }

// failures remember, per node, the room epoch and the node's last change at which it was
// rejected.
type failures []failure

func (f *failures) set(v *View, n *Node) {
	for len(*f) <= int(n.ID) {
		*f = append(*f, failure{epoch: ^uint64(0)})
	}
	(*f)[n.ID] = failure{epoch: v.RoomEpoch(), change: n.LastChange}
}

func (f failures) has(v *View, n *Node) bool {
	return int(n.ID) < len(f) && f[n.ID].epoch == v.RoomEpoch() && f[n.ID].change == n.LastChange
}

// waker keeps the earliest virtual instant a policy asks to be woken at (noWake: none).
type waker time.Duration

const noWake waker = -1

// at offers an instant; the earliest is kept.
func (w *waker) at(at time.Duration) {
	if *w < 0 || waker(at) < *w {
		*w = waker(at)
	}
}

// time is the wall-clock time of the instant, given that virtual time t is wall time now (the
// zero time for noWake).
func (w waker) time(now time.Time, t time.Duration) time.Time {
	if w < 0 {
		return time.Time{}
	}
	return now.Add(time.Duration(w) - t)
}

func expiring(cmds []Command, id NodeID) bool {
	for _, c := range cmds {
		if c.Reason == ReasonExpired && c.Nodes[0] == id {
			return true
		}
	}
	return false
}

// check re-solves a candidate's pods without it: against the other nodes alone (a delete),
// then with the pools too (a replacement by one cheaper claim). When no other node has room
// for any of its pods, the pools alone give the same plan (see tenon.poolsOnly).
func (d *tenonDisrupter) check(v *View, pc *passCache, c candidate, cands []candidate) (Command, bool) {
	n := c.n
	pods := make([]*corev1.Pod, len(n.Pods))
	for i, id := range n.Pods {
		// The interim disrupter moves a gang's pod like any other (the binder then binds it
		// alone, its gang running).
		pods[i] = withoutGang(v.APIPod(id))
	}
	opts := solver.Options{SkipBound: true, ExcludeNodes: []string{n.Name}, HostnamePrefix: "replacement-"}
	shapes := shapeSet(v, n.Pods)
	room := d.t.roomFor(v, shapes, n.ID)
	if c.del && room {
		if pc.nodes == nil {
			snap := *pc.snapshot(d, v, cands)
			snap.NodePools = nil
			var err error
			if pc.nodes, err = solver.Prepare(&snap); err != nil {
				return Command{}, false
			}
		}
		v.CountSolve()
		plan, err := pc.nodes.Solve(pods, opts)
		if err == nil && len(plan.Unschedulable) == 0 && len(plan.Claims) == 0 {
			return Command{Reason: ReasonUnderutilized, Nodes: []NodeID{n.ID}, Savings: v.r.price(n)}, true
		}
	}
	prep := d.t.poolsOnly(v, shapes)
	if room {
		if pc.full == nil {
			// The pools of the candidates' shapes are those poolsOnly prepares (and keeps
			// across passes): only the nodes are compiled.
			snap := pc.snapshot(d, v, cands)
			var err error
			if pools := d.t.poolsOnly(v, pc.candidateShapes(v, cands)); pools != nil {
				pc.full, err = pools.WithNodes(snap)
			} else {
				pc.full, err = solver.Prepare(snap)
			}
			if err != nil {
				return Command{}, false
			}
		}
		prep = pc.full
	}
	v.CountSolve()
	plan, err := prep.Solve(pods, opts)
	if err != nil || len(plan.Unschedulable) > 0 || len(plan.Claims) != 1 {
		return Command{}, false
	}
	cl := plan.Claims[0]
	if cl.Price >= v.r.price(n) {
		return Command{}, false
	}
	reason := ReasonUnderutilized
	if n.Offering.CapacityType == apisv1.CapacityTypeSpot && cl.Offering.CapacityType == apisv1.CapacityTypeSpot {
		if !d.t.spotToSpot || cheaperOptions(cl, v.r.price(n), SpotToSpotMinTypes) < SpotToSpotMinTypes {
			return Command{}, false
		}
		reason = ReasonSpotToSpot
	}
	l := Launch{Pool: d.t.poolIndex(cl.NodePool), Type: cl.InstanceType, Offering: cl.Offering, Options: cl.NodeClaimRequirements()}
	return Command{Reason: reason, Nodes: []NodeID{n.ID}, Replacements: []Launch{l}, Savings: v.r.price(n) - cl.Price}, true
}

// candidateShapes returns the shapes running on the candidates.
func candidateShapes(v *View, cands []candidate) []int {
	var pods []PodID
	for _, c := range cands {
		pods = append(pods, c.n.Pods...)
	}
	return shapeSet(v, pods)
}

// cheaperOptions counts the claim's instance types whose cheapest offering within its
// requirements costs less than price, up to enough (the count the caller needs).
func cheaperOptions(c *solver.Claim, price float64, enough int) int {
	q := catalog.NewQuery(c.Requirements)
	k := 0
	for _, it := range c.InstanceTypes {
		if k >= enough {
			break
		}
		if o := q.Cheapest(it); o >= 0 && it.Offerings[o].Price < price {
			k++
		}
	}
	return k
}

var inf = math.Inf(1)

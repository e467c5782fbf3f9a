package sim

import (
	"cmp"
	"encoding/binary"
	"hash/fnv"
	"slices"
	"time"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// KarpenterMultiNodeCandidates caps the candidates multi-node consolidation considers, and
// KarpenterSingleNodeChecks the candidates single-node consolidation simulates in one pass:
// the simulator's stand-in for Karpenter's time boxes (1 and 3 minutes of wall time), which a
// virtual-time replay cannot measure.
const (
	KarpenterMultiNodeCandidates = 100
	KarpenterSingleNodeChecks    = 50
)

// KarpenterPolicy is the state of the art, written down from Karpenter's documented
// behaviour (v1). See the Assumptions for what is simplified.
func KarpenterPolicy(env *Env) Policy {
	k := newKsched(env, true)
	return Policy{
		Name:          PolicyKarpenter,
		Provisioner:   &karpenterProvisioner{k: k},
		Disrupter:     &karpenterDisrupter{k: k},
		HandleNotices: true,
		Assumptions: []string{
			"karpenter-like: pods sorted by CPU then memory (largest first); each goes to the first existing or launching node with room, else to the open claim with the fewest pods that still has a type holding it, else to a new claim of the heaviest NodePool; a claim keeps every type that still holds its pods and launches as the cheapest (reserved, else spot when allowed, else on-demand), offering its 60 cheapest types",
			"karpenter-like: topology spread and pod affinity are not modelled (the workloads simulated have none unless manifests say so)",
			"karpenter-like: per pass, expiration (forceful), then emptiness, then multi-node consolidation (binary search over the first 100 candidates by disruption cost, at most one cheaper replacement, no spot-to-spot), then single-node consolidation (delete, or replace with a cheaper node; spot-to-spot needs the SpotToSpotConsolidation feature gate on and 15 cheaper types); the first method with a command ends the pass",
			"karpenter-like: the 1- and 3-minute consolidation time boxes become at most 100 multi-node candidates and 50 single-node simulations per pass; the 15-second validation wait before a command runs is not modelled",
		},
	}
}

type karpenterProvisioner struct{ k *ksched }

// Provision schedules the pending pods over the nodes not being disrupted.
func (p *karpenterProvisioner) Provision(now time.Time, v *View, pending []PodID) Decision {
	place, claims, _ := p.k.schedule(v, pending, targets(v.Nodes()))
	d := Decision{Place: place}
	// The claims of one decision count against the limits together, as Karpenter's scheduler
	// takes each new claim's capacity off what its NodePool has left.
	added := map[int]scheduling.Resources{}
	addedNodes := map[int]int{}
	for _, c := range claims {
		if l, ok := p.k.launch(v, c); ok && p.k.withinLimits(v, c, l.Type, added[c.pool], addedNodes[c.pool]) {
			d.Launch = append(d.Launch, l)
			added[c.pool] = added[c.pool].Add(l.Type.Capacity)
			addedNodes[c.pool]++
		}
	}
	return d
}

// withinLimits reports whether the claim's launch type fits in what its pool's limits leave,
// beyond the usage and nodes its pool has and the capacity and nodes already decided (extra,
// extraNodes).
func (k *ksched) withinLimits(v *View, c *kclaim, it *catalog.InstanceType, extra scheduling.Resources, extraNodes int) bool {
	np := k.env.Pools[c.pool].Solver
	used, nodes := v.Usage(c.pool)
	if np.NodeLimit >= 0 && nodes+extraNodes+1 > np.NodeLimit {
		return false
	}
	after := used.Add(extra).Add(it.Capacity)
	for i, lim := range np.HasLimit {
		if lim && after[i] > np.Limits[i] {
			return false
		}
	}
	return true
}

type karpenterDisrupter struct {
	k *ksched
	// all ranks every type of every pool by its launch price (a replacement may come from any
	// pool); ts is the pass's targets, copied for each simulation.
	all, notSpot *ladder
	ts, buf      []target
	ri           *roomIndex
	// failed and multiFailed remember rejections until room grows or the candidates change
	// (more room can only help a consolidation; see tenonDisrupter.failed).
	failed      failures
	multiFailed [2]uint64 // room epoch and candidates' hash of the last multi-node rejection
	gate        quietGate
}

// Pass runs Karpenter's methods in order; the first that yields a command ends the pass.
// Passes that cannot find anything are skipped (see quietGate; Karpenter likewise skips
// consolidation while the cluster has not changed since it last found nothing).
func (d *karpenterDisrupter) Pass(now time.Time, v *View) ([]Command, time.Time) {
	return d.gate.run(now, v, d.pass)
}

func (d *karpenterDisrupter) pass(now time.Time, v *View) ([]Command, time.Time) {
	env := v.Env()
	t := v.Now()
	nodes := v.Nodes()
	wake := noWake
	cmds := expirations(v, wake.at)
	var empty, under []*Node
	for _, n := range nodes {
		p := env.Pools[n.Pool]
		if n.Disrupting || n.State != NodeReady || p.ConsolidateAfter < 0 || expiring(cmds, n.ID) {
			continue
		}
		if at := n.LastChange + p.ConsolidateAfter; at > t {
			wake.at(at)
			continue
		}
		switch {
		case n.Empty():
			empty = append(empty, n)
		case p.Policy != apisv1.ConsolidationPolicyWhenEmpty:
			under = append(under, n)
		}
	}
	wakeAt := wake.time(now, t)
	if len(cmds) > 0 {
		return cmds, wakeAt
	}
	if c, ok := d.emptiness(v, empty); ok {
		return []Command{c}, wakeAt
	}
	sortByDisruptionCost(v, under)
	d.ts = appendTargets(d.ts[:0], nodes)
	d.ri = d.ri.reset(v, nodes)
	if c, ok := d.multiNode(v, nodes, under); ok {
		return []Command{c}, wakeAt
	}
	if c, ok := d.singleNode(v, nodes, under); ok {
		return []Command{c}, wakeAt
	}
	return nil, wakeAt
}

// emptiness deletes the empty candidates the Empty budgets allow, in one command.
func (d *karpenterDisrupter) emptiness(v *View, empty []*Node) (Command, bool) {
	c := Command{Reason: ReasonEmpty}
	left := map[int]int{}
	for _, n := range empty {
		l, ok := left[n.Pool]
		if !ok {
			l = v.Allowed(n.Pool, apisv1.DisruptionReasonEmpty)
		}
		if l > 0 {
			c.Nodes = append(c.Nodes, n.ID)
			c.Savings += n.Price
			l--
		}
		left[n.Pool] = l
	}
	return c, len(c.Nodes) > 0
}

// sortByDisruptionCost orders candidates as Karpenter does: the cost of evicting their pods
// (one per pod here: no priorities or deletion costs) times the share of their lifetime left
// before expiry, cheapest first.
func sortByDisruptionCost(v *View, nodes []*Node) {
	type costed struct {
		n    *Node
		cost float64
	}
	cs := make([]costed, len(nodes))
	for i, n := range nodes {
		life := 1.0
		if e := v.Env().Pools[n.Pool].ExpireAfter; e > 0 {
			life = max(0, 1-float64(v.Now()-n.Launched)/float64(e))
		}
		cs[i] = costed{n, float64(len(n.Pods)) * life}
	}
	slices.SortStableFunc(cs, func(a, b costed) int { return cmp.Or(cmp.Compare(a.cost, b.cost), cmp.Compare(a.n.ID, b.n.ID)) })
	for i := range cs {
		nodes[i] = cs[i].n
	}
}

// simulate re-schedules the candidates' pods over the rest of the cluster: it reports the
// claims that would be needed, or false if some pod would have nowhere to go.
func (d *karpenterDisrupter) simulate(v *View, nodes []*Node, cands []*Node) ([]*kclaim, bool) {
	gone := map[NodeID]bool{}
	var pods []PodID
	for _, n := range cands {
		gone[n.ID] = true
		pods = append(pods, n.Pods...)
	}
	d.buf = d.buf[:0]
	for _, t := range d.ts {
		if !gone[t.n.ID] {
			d.buf = append(d.buf, t)
		}
	}
	_, claims, unsched := d.k.schedule(v, pods, d.buf)
	return claims, len(unsched) == 0
}

// multiNode finds the longest prefix of the candidates that one cheaper node (or none) can
// replace, by binary search.
func (d *karpenterDisrupter) multiNode(v *View, nodes []*Node, under []*Node) (Command, bool) {
	cands := under[:min(len(under), KarpenterMultiNodeCandidates)]
	cands = withinBudget(v, cands, apisv1.DisruptionReasonUnderutilized)
	if len(cands) < 2 {
		return Command{}, false
	}
	h := fnv.New64a()
	var b [16]byte
	for _, n := range cands {
		binary.LittleEndian.PutUint64(b[:8], uint64(n.ID))
		binary.LittleEndian.PutUint64(b[8:], uint64(n.LastChange))
		_, _ = h.Write(b[:])
	}
	key := [2]uint64{v.RoomEpoch(), h.Sum64()}
	if d.multiFailed == key {
		return Command{}, false
	}
	var best Command
	found := false
	lo, hi := 2, len(cands)
	for lo <= hi {
		mid := (lo + hi) / 2
		c, ok := d.consolidate(v, nodes, cands[:mid], true)
		if ok {
			best, found = c, true
			lo = mid + 1
		} else {
			hi = mid - 1
		}
	}
	if !found {
		d.multiFailed = key
	}
	return best, found
}

// singleNode tries the candidates one by one; the first that can go makes the command.
func (d *karpenterDisrupter) singleNode(v *View, nodes []*Node, under []*Node) (Command, bool) {
	checks := 0
	for _, n := range under {
		if checks >= KarpenterSingleNodeChecks {
			break
		}
		if v.Allowed(n.Pool, apisv1.DisruptionReasonUnderutilized) <= 0 {
			continue
		}
		if d.failed.has(v, n) {
			continue
		}
		c, ok := d.consolidate(v, nodes, []*Node{n}, false)
		if c.Reason != "" {
			checks++
		}
		if ok {
			return c, true
		}
		d.failed.set(v, n)
	}
	return Command{}, false
}

// consolidate checks whether cands can go, deleted or replaced by one cheaper node. The
// returned command's Reason is set when a simulation ran.
func (d *karpenterDisrupter) consolidate(v *View, nodes, cands []*Node, multi bool) (Command, bool) {
	price := 0.0
	allSpot := true
	for _, n := range cands {
		price += n.Price
		allSpot = allSpot && n.Offering.CapacityType == apisv1.CapacityTypeSpot
	}
	// Necessary: the pods fit in the rest's room, or in it plus one node cheaper than the
	// candidates.
	if d.all == nil {
		var rungs, ns []rung
		for _, ts := range d.k.types {
			for _, kt := range ts {
				rungs = append(rungs, rung{price: kt.price, room: kt.alloc})
				if kt.launch.CapacityType != apisv1.CapacityTypeSpot {
					ns = append(ns, rung{price: kt.price, room: kt.alloc})
				}
			}
		}
		d.all, d.notSpot = newLadder(rungs), newLadder(ns)
	}
	if del, repl := d.ri.movable(cands, price, allSpot && !multi, d.k.spotToSpot, d.all, d.notSpot); !del && !repl {
		return Command{}, false
	}
	claims, ok := d.simulate(v, nodes, cands)
	c := Command{Reason: ReasonUnderutilized}
	for _, n := range cands {
		c.Nodes = append(c.Nodes, n.ID)
	}
	if !ok || len(claims) > 1 {
		return c, false
	}
	if len(claims) == 0 {
		c.Savings = price
		return c, true
	}
	cl := claims[0]
	repl := d.k.price(v, cl)
	if repl >= price {
		return c, false
	}
	l, _ := d.k.launch(v, cl)
	if allSpot && l.Offering.CapacityType == apisv1.CapacityTypeSpot {
		if multi || !d.k.spotToSpot || d.k.cheaperThan(cl, price) < SpotToSpotMinTypes {
			return c, false
		}
		c.Reason = ReasonSpotToSpot
	}
	l.Pods = nil
	c.Replacements = []Launch{l}
	c.Savings = price - repl
	return c, true
}

// withinBudget keeps the candidates the Underutilized budgets allow, in order.
func withinBudget(v *View, cands []*Node, reason apisv1.DisruptionReason) []*Node {
	left := map[int]int{}
	var out []*Node
	for _, n := range cands {
		l, ok := left[n.Pool]
		if !ok {
			l = v.Allowed(n.Pool, reason)
		}
		if l > 0 {
			out = append(out, n)
			l--
		}
		left[n.Pool] = l
	}
	return out
}

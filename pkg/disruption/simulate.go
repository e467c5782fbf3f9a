package disruption

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// world is the cluster as a pass sees it after the commands it has committed so far: a
// prepared solver snapshot with the committed candidates gone and their replacements in
// flight, and the plan the pending backlog would get on it.
type world struct {
	snap *solver.Snapshot
	prep *solver.Prepared
	// minValues and preferences are the policies every solve of the pass follows.
	minValues   solver.MinValuesPolicy
	preferences solver.PreferencePolicy
	// base is the plan of the pending backlog alone, solved when first asked for (basePlan):
	// a pass with no candidate to simulate and no empty node never needs it, and during a
	// scale-up the backlog is the largest solve there is.
	base *solver.Plan
	runs int
	// commits counts the commands applied; it keeps the placeholder hostnames of each
	// command's replacements apart from those of the commands before it.
	commits int
	// reserved counts the reservation slots the committed replacements will take, by
	// reservation ID: the snapshot's offerings do not know them yet.
	reserved map[string]int
	// pools holds, by NodePool, the capacity and nodes of the committed replacements against
	// the pool's limits: the snapshot's usage does not count them yet.
	pools map[string]solver.PoolTaken
	// uninitialized holds the names of the snapshot's nodes that are not initialized (claims
	// in flight, this pass's replacements included).
	uninitialized map[string]bool
	// replacements holds the hostnames of the committed commands' replacements.
	replacements map[string]bool
}

func newWorld(snap *solver.Snapshot, prev *solver.Prepared, opts Options) (*world, error) {
	w := &world{snap: snap, prep: prev, minValues: opts.MinValuesPolicy, preferences: opts.PreferencePolicy}
	return w, w.prepare()
}

func (w *world) prepare() error {
	var p *solver.Prepared
	var err error
	if w.prep == nil {
		p, err = solver.Prepare(w.snap)
	} else {
		// The last pass's pools, still the same: only the nodes are compiled.
		p, err = w.prep.WithNodes(w.snap)
	}
	if err != nil {
		return err
	}
	w.prep = p
	w.uninitialized = map[string]bool{}
	for _, n := range w.snap.Nodes {
		if !n.Initialized || n.InFlight {
			w.uninitialized[n.Name] = true
		}
	}
	w.base = nil
	return nil
}

// basePlan is the plan the pending backlog gets on the world as it is.
func (w *world) basePlan() (*solver.Plan, error) {
	if w.base != nil {
		return w.base, nil
	}
	base, err := w.prep.Solve(w.snap.Pods, solver.Options{SkipBound: true, ReservationsTaken: w.reserved, PoolsTaken: w.pools, MinValuesPolicy: w.minValues, PreferencePolicy: w.preferences})
	w.runs++
	if err != nil {
		return nil, err
	}
	w.base = base
	return base, nil
}

// wanted reports the nodes the pending backlog's plan puts pods onto.
func (w *world) wanted() (map[string]bool, error) {
	base, err := w.basePlan()
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, pl := range base.Placements {
		out[pl.Node] = true
	}
	return out, nil
}

// outcome is what removing some nodes would take.
type outcome struct {
	plan *solver.Plan
	// replacements are the new claims holding the removed nodes' pods; delta is what the plan
	// costs beyond what the pending backlog costs alone.
	replacements []*solver.Claim
	delta        float64
	// stranded are the removed nodes' pods that could go nowhere.
	stranded int
	// uninitialized names the first of the removed nodes' pods the plan puts on a node that is
	// not initialized yet (a claim in flight included), and that node, in Karpenter's words
	// ("ns/pod => would schedule against uninitialized nodeclaim/NAME"); "" when none.
	// ontoReplacement says that node is a replacement an earlier command of the pass launches.
	uninitialized   string
	ontoReplacement bool
}

// remove simulates the nodes gone and their pods (with the pending backlog) placed elsewhere.
func (w *world) remove(nodes []string, pods []*corev1.Pod) (*outcome, error) {
	base, err := w.basePlan()
	if err != nil {
		return nil, err
	}
	all := append(slices.Clone(w.snap.Pods), pods...)
	moved := map[*corev1.Pod]bool{}
	for _, p := range pods {
		moved[p] = true
	}
	// A moved pod on a node not initialized refuses the removal whatever the new claims: the
	// guided attempts would put it there too.
	spills := func(pl solver.Placement) bool { return moved[pl.Pod] && (pl.InFlight || w.uninitialized[pl.Node]) }
	spilled := func(pls []solver.Placement) bool { return slices.ContainsFunc(pls, spills) }
	plan, err := w.prep.Solve(all, solver.Options{SkipBound: true, ExcludeNodes: nodes, HostnamePrefix: fmt.Sprintf("replacement-%d-", w.commits),
		ReservationsTaken: w.reserved, PoolsTaken: w.pools, MinValuesPolicy: w.minValues, PreferencePolicy: w.preferences, Unguided: spilled})
	w.runs++
	if err != nil {
		return nil, err
	}
	o := &outcome{plan: plan, delta: plan.Price - base.Price}
	for _, u := range plan.Unschedulable {
		if moved[u.Pod] {
			o.stranded++
		}
	}
	for _, pl := range plan.Placements {
		if spills(pl) {
			kind := "node"
			if pl.InFlight {
				kind = "nodeclaim"
			}
			o.uninitialized = fmt.Sprintf("%s/%s => would schedule against uninitialized %s/%s", pl.Pod.Namespace, pl.Pod.Name, kind, pl.Node)
			o.ontoReplacement = w.replacements[pl.Node]
			break
		}
	}
	for _, c := range plan.Claims {
		for _, p := range c.Pods {
			if moved[p] {
				o.replacements = append(o.replacements, c)
				break
			}
		}
	}
	return o, nil
}

// floor is a lower bound on what placing pods (their requests) with nodes gone adds on new
// capacity to what the pending backlog costs alone, when the solver can tell
// (solver.Prepared.CapacityFloor), a little under it so that rounding never rejects what a
// solve would accept (+Inf: no plan of that kind places the pods). Only the room of
// initialized nodes counts: a plan that puts the pods elsewhere is refused anyway. Pending
// pods only take room and add claims, so the floor of the pods alone bounds the plan with the
// backlog; less the backlog's own plan, it bounds the difference. When that plan buys
// anything, the floor says nothing of single pods (their replacement may be one of the
// backlog's claims).
func (w *world) floor(nodes []string, requests []scheduling.Resources, oneClaim, homeless bool) (solver.Floor, bool) {
	f := w.prep.CapacityFloor(requests, solver.FloorOptions{ExcludeNodes: nodes, InitializedOnly: true, OneClaim: oneClaim, Homeless: homeless})
	f.Price *= 1 - 1e-9
	if len(w.snap.Pods) == 0 {
		return f, true
	}
	base, err := w.basePlan()
	if err != nil {
		return solver.Floor{}, false
	}
	if len(base.Claims) == 0 && base.Price == 0 {
		return f, true
	}
	return solver.Floor{Price: f.Price - base.Price*(1+1e-9)}, true
}

// commit applies a command to the world: its candidates are marked for deletion, and its
// replacements become claims in flight holding the candidates' pods.
func (w *world) commit(cmd *Command) error {
	gone := map[string]bool{}
	for _, n := range cmd.Candidates {
		gone[n] = true
	}
	landing := map[string][]*corev1.Pod{}
	for _, m := range cmd.Moves {
		landing[m.Node] = append(landing[m.Node], m.Pod)
	}
	next := *w.snap
	next.Nodes = make([]solver.Node, len(w.snap.Nodes), len(w.snap.Nodes)+len(cmd.Replacements))
	copy(next.Nodes, w.snap.Nodes)
	var changed []int
	for i := range next.Nodes {
		n := &next.Nodes[i]
		in := landing[n.Name]
		if !gone[n.Name] && len(in) == 0 {
			continue
		}
		changed = append(changed, i)
		if gone[n.Name] {
			n.MarkedForDeletion = true
		}
		if len(in) > 0 {
			n.Pods = append(slices.Clip(n.Pods), in...)
		}
	}
	for _, c := range cmd.Replacements {
		if id := c.Offering.ReservationID; id != "" {
			if w.reserved == nil {
				w.reserved = map[string]int{}
			}
			w.reserved[id]++
		}
		if w.pools == nil {
			w.pools = map[string]solver.PoolTaken{}
		}
		t := w.pools[c.NodePool]
		t.Capacity = t.Capacity.Add(c.InstanceType.Capacity)
		t.Nodes++
		w.pools[c.NodePool] = t
		labels := c.InstanceType.NodeLabels(&c.Offering)
		for k, v := range c.Requirements.Labels() {
			labels[k] = v
		}
		if w.replacements == nil {
			w.replacements = map[string]bool{}
		}
		w.replacements[c.Hostname] = true
		next.Nodes = append(next.Nodes, solver.Node{
			Name: c.Hostname, NodePool: c.NodePool, Labels: labels, InFlight: true,
			Allocatable: c.InstanceType.Allocatable().Sub(c.DaemonSetOverhead), Pods: c.Pods, Price: c.Price,
		})
		w.uninitialized[c.Hostname] = true
	}
	// Only the command's nodes and its replacements changed: the rest stay compiled.
	p, err := w.prep.Amend(&next, changed)
	if err != nil {
		return err
	}
	w.snap, w.prep, w.base = &next, p, nil
	w.commits++
	return nil
}

// floor is world.floor of the pods' requests; false when one cannot be read. homeless asks for
// Floor.Homeless.
func (d *decider) floor(nodes []string, pods []*corev1.Pod, oneClaim, homeless bool) (solver.Floor, bool) {
	// The floor reads the requests and keeps none of them: one buffer serves the pass.
	reqs, ok := d.reqs.all(pods, d.reqBuf)
	d.reqBuf = reqs[:0]
	if !ok {
		return solver.Floor{}, false
	}
	return d.world.floor(nodes, reqs, oneClaim, homeless)
}

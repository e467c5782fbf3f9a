package disruption

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

type decider struct {
	snap    *Snapshot
	opts    Options
	world   *world
	budgets *budgets
	pdbs    *pdbState
	cands   []*candidate
	byName  map[string]*candidate
	dec     *Decision
	skipped map[string]bool
	taken   map[string]bool
	// receiving are the nodes that commands of this pass move pods onto; consolidation leaves
	// them alone until the pods have settled.
	receiving map[string]bool
	// recall holds the verdicts remembered from the last pass and those of this one (memory.go).
	recall *recall
	// simulated is the outcome of the last evaluate's simulation (nil when it ran none).
	simulated *outcome
	reqs      podRequests
	reqBuf    []scheduling.Resources // floor's scratch
	byPool    map[*apisv1.NodePool]Options
}

// Decide runs one disruption pass over the snapshot.
func Decide(s *Snapshot, opts Options) (*Decision, error) {
	d, err := newDecider(s, opts)
	if err != nil {
		return nil, err
	}
	for _, m := range passMethods {
		eligible, err := m.eligible(d)
		if err != nil {
			return nil, err
		}
		if err := m.search(d, eligible); err != nil {
			return nil, err
		}
		if len(d.dec.Commands) > 0 {
			break
		}
	}
	d.dec.Simulations = d.world.runs
	d.dec.Prepared = d.world.prep
	d.dec.Memory = d.recall.memory()
	if len(d.dec.Commands) > 0 {
		d.dec.Outcome = OutcomeActed
	} else if d.dec.Outcome == "" {
		d.dec.Outcome = OutcomeNoOp
	}
	return d.dec, nil
}

func newDecider(s *Snapshot, opts Options) (*decider, error) {
	opts = opts.withDefaults()
	// Every pod's requests are read once a pass at least (fingerprints, idle prices): sized for
	// all of them, the memo never grows.
	reqs := make(podRequests, len(s.Solver.Pods)+podsOnNodes(s))
	r := newRecall(s, opts, reqs)
	w, err := newWorld(s.Solver, r.prepared(s), opts)
	if err != nil {
		return nil, err
	}
	r.handOn(w.prep)
	d := &decider{snap: s, opts: opts, world: w, budgets: newBudgets(s), pdbs: newPDBState(s.PDBs),
		byName: map[string]*candidate{}, dec: &Decision{Cursor: opts.Cursor}, skipped: map[string]bool{}, taken: map[string]bool{},
		receiving: map[string]bool{}, recall: r, reqs: reqs}
	pods := map[string]*solver.Node{}
	for i := range s.Solver.Nodes {
		pods[s.Solver.Nodes[i].Name] = &s.Solver.Nodes[i]
	}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		c := &candidate{Node: n, pool: s.NodePools[n.NodePool]}
		if sn, ok := pods[n.Name]; ok {
			c.all = sn.Pods
			c.pods = reschedulable(sn.Pods)
			c.place = needingPlace(c.pods, *opts.ExpendablePriorityCutoff)
			c.idle = n.Price * (1 - used(sn, r.podMarks(sn), reqs))
		}
		c.disruptionCost = disruptionCost(c.pods)
		d.cands = append(d.cands, c)
		d.byName[n.Name] = c
	}
	d.linkUnits()
	return d, nil
}

// podsOnNodes counts the pods on the snapshot's nodes.
func podsOnNodes(s *Snapshot) int {
	n := 0
	for i := range s.Solver.Nodes {
		n += len(s.Solver.Nodes[i].Pods)
	}
	return n
}

func (d *decider) skip(c *candidate, r SkipReason, format string, args ...any) {
	if d.skipped[c.Name] {
		return
	}
	d.skipped[c.Name] = true
	d.dec.Skips = append(d.dec.Skips, Skip{Node: c.Name, Reason: r, Message: fmt.Sprintf(format, args...)})
}

// commit records a command and applies it to the world.
func (d *decider) commit(cmd Command) error {
	d.recall.commit()
	for _, n := range cmd.Candidates {
		d.taken[n] = true
		d.budgets.take(d.byName[n].NodePool, 1)
	}
	d.pdbs.take(cmd.Pods)
	for _, m := range cmd.Moves {
		d.receiving[m.Node] = true
		if c := d.byName[m.Node]; c != nil {
			c.all = append(c.all, m.Pod)
			c.pods = append(c.pods, m.Pod)
			c.place = append(c.place, m.Pod)
			c.disruptionCost = disruptionCost(c.pods)
		}
	}
	d.dec.Commands = append(d.dec.Commands, cmd)
	return d.world.commit(&cmd)
}

func (d *decider) price(cs []*candidate) float64 {
	var p float64
	for _, c := range cs {
		p += c.Price
	}
	return p
}

// quietAndFree reports whether the node may be disrupted gracefully (blocked) and its
// consolidateAfter has passed (settled), recording why not.
func (d *decider) quietAndFree(c *candidate) bool {
	if r, msg := d.blocked(c); r != "" {
		d.skip(c, r, "%s", msg)
		return false
	}
	return d.settled(c)
}

// firstBlocked is the skip of the first of cs that may not be disrupted gracefully, or nil.
func (d *decider) firstBlocked(cs []*candidate) *Skip {
	for _, c := range cs {
		if r, msg := d.blocked(c); r != "" {
			return skipFor(c, r, "%s", msg)
		}
	}
	return nil
}

// settled reports whether consolidateAfter has passed since the node's last pod event (Never
// means never).
func (d *decider) settled(c *candidate) bool {
	at, ok := ConsolidatableAt(c.pool, c.Node)
	if !ok {
		d.skip(c, SkipConsolidateAfter, "consolidateAfter is Never")
		return false
	}
	if left := at.Sub(d.snap.Now); left > 0 {
		d.skip(c, SkipConsolidateAfter, "consolidateAfter has %s to run", left.Round(1e9))
		return false
	}
	return true
}

// ConsolidatableAt is when the node becomes a consolidation candidate: consolidateAfter past
// its last pod event (or its creation when none has happened). ok is false when
// consolidateAfter is Never. The controller's Consolidatable condition follows this rule.
func ConsolidatableAt(pool *apisv1.NodePool, n *Node) (at time.Time, ok bool) {
	ca := pool.Spec.Disruption.ConsolidateAfter
	if ca.IsNever() {
		return time.Time{}, false
	}
	return n.lastChange().Add(*ca.Duration), true
}

// lastChange is when a pod last arrived on or left the node, or its creation when none has.
func (n *Node) lastChange() time.Time {
	if n.LastPodEvent.IsZero() {
		return n.CreatedAt
	}
	return n.LastPodEvent
}

func (d *decider) command(m Method, reason apisv1.DisruptionReason, cs []*candidate, o *outcome, why string) Command {
	cmd := Command{Method: m, Action: ActionDelete, Reason: reason, Price: d.price(cs), Replacements: o.replacements, Why: why}
	for _, c := range cs {
		cmd.Candidates = append(cmd.Candidates, c.Name)
		cmd.Pods = append(cmd.Pods, c.pods...)
	}
	moved := map[*corev1.Pod]bool{}
	for _, p := range cmd.Pods {
		moved[p] = true
	}
	for _, pl := range o.plan.Placements {
		if moved[pl.Pod] {
			cmd.Moves = append(cmd.Moves, pl)
		}
	}
	for _, r := range o.replacements {
		cmd.ReplacementPrice += r.Price
	}
	if len(o.replacements) > 0 {
		cmd.Action = ActionReplace
	}
	cmd.Savings = cmd.Price - cmd.ReplacementPrice
	var types []string
	for _, r := range o.replacements {
		types = append(types, r.InstanceType.Name)
	}
	cmd.Message = fmt.Sprintf("%s %s (%s): %s", strings.ToLower(string(cmd.Action)), strings.Join(cmd.Candidates, ", "), why, describeReplacements(types, cmd))
	return cmd
}

func describeReplacements(types []string, cmd Command) string {
	if len(types) == 0 {
		return fmt.Sprintf("its pods fit elsewhere, saving $%.4f/h", cmd.Savings)
	}
	return fmt.Sprintf("replaced by %s for $%.4f/h instead of $%.4f/h", strings.Join(types, ", "), cmd.ReplacementPrice, cmd.Price)
}

// ordered returns the candidates by what removing them saves: price first (dearest first), then
// the least disruption, then name.
func (d *decider) ordered() []*candidate {
	out := slices.Clone(d.cands)
	slices.SortStableFunc(out, func(a, b *candidate) int {
		if x := cmp.Compare(b.Price, a.Price); x != 0 {
			return x
		}
		if x := cmp.Compare(a.disruptionCost, b.disruptionCost); x != 0 {
			return x
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// used is the larger of the CPU and memory fractions of a node's allocatable its pods request,
// read from marks (the pass's marks of its pods, in their order) when it has them.
func used(n *solver.Node, marks []podMark, reqs podRequests) float64 {
	var req scheduling.Resources
	if marks != nil {
		for i := range marks {
			if marks[i].req.err == nil {
				req = req.Add(marks[i].req.r)
			}
		}
	} else {
		for _, p := range n.Pods {
			if r, err := reqs.of(p); err == nil {
				req = req.Add(r)
			}
		}
	}
	u := 0.0
	for _, r := range []int{scheduling.CPU, scheduling.Memory} {
		if a := n.Allocatable[r]; a > 0 {
			u = max(u, float64(req[r])/float64(a))
		}
	}
	return min(u, 1)
}

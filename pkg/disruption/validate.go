package disruption

import (
	"fmt"
	"slices"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
)

// Invalid says why a command no longer holds.
type Invalid struct {
	Node    string
	Reason  SkipReason
	Message string
}

func (e *Invalid) Error() string {
	return fmt.Sprintf("node %s: %s (%s)", e.Node, e.Message, e.Reason)
}

// Validate re-checks a command against a fresher snapshot, taken after the command has waited
// for the cluster to settle: every candidate must still be there and still be disruptable for
// the command's method, within budgets; removing them must still place every pod; and a
// consolidation must need no more replacements than it did and still save above the floors.
// It returns the command recomputed on the fresh snapshot (its replacements are what to launch),
// or an *Invalid error.
func Validate(s *Snapshot, cmd Command, opts Options) (Command, error) {
	d, err := newDecider(s, opts)
	if err != nil {
		return Command{}, err
	}
	var cs []*candidate
	for _, name := range cmd.Candidates {
		c := d.byName[name]
		if c == nil {
			return Command{}, &Invalid{Node: name, Reason: SkipNodeGone, Message: "the node is gone"}
		}
		cs = append(cs, c)
	}
	invalid := func(c *candidate, r SkipReason, format string, args ...any) (Command, error) {
		return Command{}, &Invalid{Node: c.Name, Reason: r, Message: fmt.Sprintf(format, args...)}
	}
	if msg := splitsUnit(cs); msg != "" {
		return invalid(cs[0], SkipPodGroup, "%s", msg)
	}
	if cmd.Method == MethodExpiration {
		// Expiration is forceful: only a node already going away, or pods that would fit nowhere,
		// stop it.
		for _, c := range cs {
			if c.Deleting {
				return invalid(c, SkipDeleting, "already being deleted")
			}
		}
		o, r, msg, err := d.removal(cs, cmd.Method)
		if err != nil {
			return Command{}, err
		}
		if r != "" {
			return invalid(cs[0], r, "%s", msg)
		}
		return d.command(cmd.Method, cmd.Reason, cs, o, cmd.Why), nil
	}
	for _, c := range cs {
		if r, msg := d.blocked(c); r != "" {
			return invalid(c, r, "%s", msg)
		}
	}
	if pool := d.budgetRefuses(cs, cmd.Reason); pool != "" {
		return invalid(cs[0], SkipBudget, "the disruption budgets of nodepool %s allow no more now", pool)
	}
	switch cmd.Method {
	case MethodEmptiness:
		wanted, err := d.world.wanted()
		if err != nil {
			return Command{}, err
		}
		for _, c := range cs {
			if len(c.place) > 0 {
				return invalid(c, SkipNotEmpty, "it is no longer empty")
			}
			if wanted[c.Name] {
				return invalid(c, SkipPendingPodsNeedIt, "pending pods are planned onto it")
			}
		}
		out := cmd
		out.Replacements, out.Moves = nil, nil
		return out, nil
	case MethodDrift:
		if !slices.ContainsFunc(cs, func(c *candidate) bool { return c.Drifted != "" }) {
			return invalid(cs[0], SkipNotDrifted, "it no longer drifts")
		}
		o, r, msg, err := d.removal(cs, cmd.Method)
		if err != nil {
			return Command{}, err
		}
		if r != "" {
			return invalid(cs[0], r, "%s", msg)
		}
		return d.command(cmd.Method, apisv1.DisruptionReasonDrifted, cs, o, cmd.Why), nil
	}
	for _, c := range cs {
		if c.pool.Spec.Disruption.ConsolidationPolicy == apisv1.ConsolidationPolicyWhenEmpty {
			return invalid(c, SkipPolicy, "nodepool %s consolidates only empty nodes", c.NodePool)
		}
	}
	// A command of several nodes is re-simulated as a repack; the check below keeps it to
	// the replacements it was decided with.
	kind := evalSingle
	if len(cs) > 1 && !isUnit(cs) {
		kind = evalRepack
	}
	fresh, skip, err := d.evaluate(cs, kind)
	if err != nil {
		return Command{}, err
	}
	if skip != nil {
		return Command{}, &Invalid{Node: skip.Node, Reason: skip.Reason, Message: skip.Message}
	}
	if len(fresh.Replacements) > len(cmd.Replacements) {
		return invalid(cs[0], SkipNotCheaper, "its pods now need %d replacements, %d were planned", len(fresh.Replacements), len(cmd.Replacements))
	}
	// The replacements may only launch as types the decision approved.
	approved := map[string]bool{}
	for _, r := range cmd.Replacements {
		for _, it := range r.InstanceTypes {
			approved[it.Name] = true
		}
	}
	for _, r := range fresh.Replacements {
		before := r.Price
		if !r.Narrow(func(it *catalog.InstanceType, _ float64) bool { return approved[it.Name] }) {
			return invalid(cs[0], SkipNotCheaper, "its pods now need instance types the decision did not choose")
		}
		fresh.ReplacementPrice += r.Price - before
		fresh.Savings -= r.Price - before
	}
	if fresh.Savings <= 0 {
		return invalid(cs[0], SkipNotCheaper, "on the instance types the decision chose it would no longer save")
	}
	return *fresh, nil
}

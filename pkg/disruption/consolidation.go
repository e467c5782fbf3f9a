package disruption

import (
	"fmt"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
)

// consolidation removes or replaces underutilized nodes where that lowers the fleet's price:
// first the largest set of candidates whose pods fit elsewhere with at most one replacement,
// or, when no set goes with one replacement, the largest set of quiet nodes (Options.
// RepackAfter) that fewer new nodes can hold (N→M repack), multinode.go; then candidates one at
// a time (delete, or replace by cheaper capacity, 1→N included), singlenode.go. evaluate
// (evaluate.go) weighs every set they try.
type consolidation struct{}

// eligible returns the candidates by what removing them saves (decider.ordered), without those
// consolidation may not take now, and without the nodes of a unit some of whose nodes it may not
// take.
func (consolidation) eligible(d *decider) ([]*candidate, error) {
	var eligible []*candidate
	for _, c := range d.ordered() {
		if d.taken[c.Name] {
			continue
		}
		if d.receiving[c.Name] {
			d.skip(c, SkipReceiving, "it receives pods from another command of this pass")
			continue
		}
		if c.pool == nil {
			d.skip(c, SkipNoNodePool, "nodepool %q does not exist", c.NodePool)
			continue
		}
		if r, msg := consolidatable(c); r != "" {
			d.skip(c, r, "%s", msg)
			continue
		}
		if !d.quietAndFree(c) {
			continue
		}
		eligible = append(eligible, c)
	}
	return d.wholeUnits(eligible), nil
}

// consolidatable says why the node's NodePool does not let consolidation take it, or "".
func consolidatable(c *candidate) (SkipReason, string) {
	if c.static() {
		return SkipStatic, fmt.Sprintf("nodepool %s is static: it is kept at its replicas, only drift and expiration replace its nodes", c.NodePool)
	}
	if p := c.pool.Spec.Disruption.ConsolidationPolicy; p == apisv1.ConsolidationPolicyWhenEmpty {
		return SkipPolicy, fmt.Sprintf("nodepool %s consolidates only empty nodes", c.NodePool)
	}
	return "", ""
}

func (consolidation) search(d *decider, eligible []*candidate) error {
	if len(eligible) == 0 {
		return nil
	}
	// Multi-node sets combine nodes in no unit freely.
	var alone []*candidate
	for _, c := range eligible {
		if c.unit == nil {
			alone = append(alone, c)
		}
	}
	before := len(d.dec.Commands)
	if err := d.multiNode(alone, evalMulti); err != nil {
		return err
	}
	if len(d.dec.Commands) == before && !d.opts.NoRepack {
		// No set goes with one replacement: repacking several nodes onto fewer new ones
		// leaves the local optimum of one-replacement moves; only nodes quiet for RepackAfter.
		var quiet []*candidate
		for _, c := range alone {
			if d.snap.Now.Sub(c.lastChange()) >= d.opts.RepackAfter {
				quiet = append(quiet, c)
			}
		}
		if err := d.multiNode(quiet, evalRepack); err != nil {
			return err
		}
	}
	return d.singleNode(eligible)
}

// compute weighs removing exactly cs: one node (or one unit) as a single-node command, several
// as a repack. Computed again for validation, the command may need no more replacements than
// was decided, and only of the instance types it chose.
func (consolidation) compute(d *decider, cs []*candidate, was *Command) (*Command, *Skip, error) {
	for _, c := range cs {
		if c.pool == nil {
			return nil, skipFor(c, SkipNoNodePool, "nodepool %q does not exist", c.NodePool), nil
		}
	}
	if skip := d.firstBlocked(cs); skip != nil {
		return nil, skip, nil
	}
	if pool := d.budgetRefuses(cs, apisv1.DisruptionReasonUnderutilized); pool != "" {
		return nil, skipFor(cs[0], SkipBudget, "the disruption budgets of nodepool %s allow no more consolidation now", pool), nil
	}
	for _, c := range cs {
		if r, msg := consolidatable(c); r != "" {
			return nil, skipFor(c, r, "%s", msg), nil
		}
	}
	// A command of several nodes is weighed as a repack; the check below keeps it to the
	// replacements it was decided with.
	kind := evalSingle
	if len(cs) > 1 && !isUnit(cs) {
		kind = evalRepack
	}
	cmd, skip, err := d.evaluate(cs, kind)
	if err != nil || skip != nil || was == nil {
		return cmd, skip, err
	}
	if len(cmd.Replacements) > len(was.Replacements) {
		return nil, skipFor(cs[0], SkipNotCheaper, "its pods now need %d replacements, %d were planned", len(cmd.Replacements), len(was.Replacements)), nil
	}
	// The replacements may only launch as types the decision approved.
	approved := map[string]bool{}
	for _, r := range was.Replacements {
		for _, it := range r.InstanceTypes {
			approved[it.Name] = true
		}
	}
	for _, r := range cmd.Replacements {
		before := r.Price
		if !r.Narrow(func(it *catalog.InstanceType, _ float64) bool { return approved[it.Name] }) {
			return nil, skipFor(cs[0], SkipNotCheaper, "its pods now need instance types the decision did not choose"), nil
		}
		cmd.ReplacementPrice += r.Price - before
		cmd.Savings -= r.Price - before
	}
	if cmd.Savings <= 0 {
		return nil, skipFor(cs[0], SkipNotCheaper, "on the instance types the decision chose it would no longer save"), nil
	}
	return cmd, nil, nil
}

// balancedScore is the savings fraction of the candidates' pool over their disruption fraction.
func (d *decider) balancedScore(cs []*candidate, savings float64) float64 {
	pool := cs[0].NodePool
	var poolPrice, poolCost, cost float64
	for _, c := range d.cands {
		if c.NodePool == pool {
			poolPrice += c.Price
			poolCost += c.disruptionCost
		}
	}
	for _, c := range cs {
		cost += c.disruptionCost
	}
	if poolPrice <= 0 {
		return 0
	}
	if cost == 0 || poolCost == 0 {
		return 1e9 // nothing to disrupt
	}
	return (savings / poolPrice) / (cost / poolCost)
}

// poolOptions is Options.forPool, read once a pass for each NodePool.
func (d *decider) poolOptions(np *apisv1.NodePool) Options {
	if o, ok := d.byPool[np]; ok {
		return o
	}
	if d.byPool == nil {
		d.byPool = map[*apisv1.NodePool]Options{}
	}
	o := d.opts.forPool(np)
	d.byPool[np] = o
	return o
}

package disruption

import (
	"cmp"
	"slices"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
)

// multiNode binary-searches the longest prefix of the candidates (dearest first) that can go
// at once with at most one replacement, for a saving above the floors.
func (d *decider) multiNode(eligible []*candidate, kind evalKind) error {
	// The nodes whose pods leave most of their price unused merge best; the ones that save most
	// come next.
	byIdle := slices.Clone(eligible)
	slices.SortStableFunc(byIdle, func(a, b *candidate) int { return cmp.Compare(b.idle, a.idle) })
	for _, order := range [][]*candidate{byIdle, eligible} {
		if done, err := d.multiNodePrefix(order, kind); done || err != nil {
			return err
		}
	}
	return nil
}

// multiNodePrefix looks for the longest prefix of the candidates, in their order, that one
// command can remove, and commits it. It reports whether it did.
func (d *decider) multiNodePrefix(eligible []*candidate, kind evalKind) (bool, error) {
	var prefix []*candidate
	for _, c := range eligible {
		if len(prefix) == d.opts.MaxMultiNode {
			break
		}
		if c.CapacityType == apisv1.CapacityTypeReserved && len(c.place) > 0 {
			continue // reserved nodes holding pods are judged one at a time
		}
		prefix = append(prefix, c)
	}
	if len(prefix) < 2 || d.recall.fruitless(kind, prefix) {
		return false, nil
	}
	var best *Command
	lo, hi := 2, len(prefix)
	for lo <= hi && d.world.runs < d.opts.MaxSimulations {
		mid := (lo + hi) / 2
		cmd, _, err := d.evaluate(prefix[:mid], kind)
		if err != nil {
			return false, err
		}
		if cmd != nil {
			best, lo = cmd, mid+1
		} else {
			hi = mid - 1
		}
	}
	if best == nil {
		if lo > hi {
			d.recall.foundNothing(kind, prefix)
		}
		return false, nil
	}
	return true, d.commit(*best)
}

// keepCheaperThanCandidates narrows a multi-node replacement to the options cheaper than every
// candidate of the same instance type: launching a type one of the candidates already is, at
// no lower price, only does what keeping that candidate and removing the others would do, with
// a launch and a drain more. It reports whether any option is left, and keeps the outcome's
// price delta in step with what the replacement now launches as.
func keepCheaperThanCandidates(o *outcome, cs []*candidate) bool {
	r := o.replacements[0]
	ceiling := -1.0
	for _, c := range cs {
		for _, it := range r.InstanceTypes {
			if it.Name == c.InstanceType && (ceiling < 0 || c.Price < ceiling) {
				ceiling = c.Price
			}
		}
	}
	if ceiling < 0 {
		return true
	}
	before := r.Price
	if !r.Narrow(func(_ *catalog.InstanceType, price float64) bool { return price < ceiling }) {
		return false
	}
	o.delta += r.Price - before
	return true
}

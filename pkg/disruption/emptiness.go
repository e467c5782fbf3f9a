package disruption

import (
	"fmt"
	"slices"
	"strings"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// emptiness removes nodes with no pod to evict, once consolidateAfter has passed, unless pending
// pods would use them. One command per NodePool.
type emptiness struct{}

func (emptiness) eligible(d *decider) ([]*candidate, error) {
	var wanted map[string]bool // solved for the first empty node that gets that far
	var out []*candidate
	for _, c := range d.cands {
		if len(c.place) > 0 || c.static() {
			continue // a static pool's nodes are kept at its replicas, empty or not
		}
		if c.unit != nil {
			// Only expendable pods of a group disrupted whole: consolidation takes its nodes together.
			continue
		}
		if !d.quietAndFree(c) {
			continue
		}
		if wanted == nil {
			var err error
			if wanted, err = d.world.wanted(); err != nil {
				return nil, err
			}
		}
		if wanted[c.Name] {
			d.skip(c, SkipPendingPodsNeedIt, "pending pods are planned onto it")
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// search takes, NodePool by NodePool (by name), as many of the pool's empty nodes as its
// budgets allow.
func (m emptiness) search(d *decider, eligible []*candidate) error {
	byPool := map[string][]*candidate{}
	var pools []string
	for _, c := range eligible {
		if _, ok := byPool[c.NodePool]; !ok {
			pools = append(pools, c.NodePool)
		}
		byPool[c.NodePool] = append(byPool[c.NodePool], c)
	}
	slices.Sort(pools)
	for _, pool := range pools {
		var take []*candidate
		for _, c := range byPool[pool] {
			if !d.budgets.allows(pool, apisv1.DisruptionReasonEmpty, len(take)+1) {
				d.skip(c, SkipBudget, "the disruption budgets of nodepool %s allow no more now", pool)
				continue
			}
			take = append(take, c)
		}
		if len(take) == 0 {
			continue
		}
		cmd, skip, err := m.compute(d, take, nil)
		if err != nil {
			return err
		}
		if skip != nil {
			d.skipAll(take, skip.Reason, skip.Message)
			continue
		}
		if err := d.commit(*cmd); err != nil {
			return err
		}
	}
	return nil
}

// compute deletes the nodes if each is still free to go, has no pod that needs a place, and
// holds no pod the pending backlog is planned onto.
func (emptiness) compute(d *decider, cs []*candidate, _ *Command) (*Command, *Skip, error) {
	if skip := d.firstBlocked(cs); skip != nil {
		return nil, skip, nil
	}
	if pool := d.budgetRefuses(cs, apisv1.DisruptionReasonEmpty); pool != "" {
		return nil, skipFor(cs[0], SkipBudget, "the disruption budgets of nodepool %s allow no more now", pool), nil
	}
	for _, c := range cs {
		if len(c.place) > 0 {
			return nil, skipFor(c, SkipNotEmpty, "it is not empty"), nil
		}
	}
	wanted, err := d.world.wanted()
	if err != nil {
		return nil, nil, err
	}
	for _, c := range cs {
		if wanted[c.Name] {
			return nil, skipFor(c, SkipPendingPodsNeedIt, "pending pods are planned onto it"), nil
		}
	}
	cmd := &Command{Method: MethodEmptiness, Action: ActionDelete, Reason: apisv1.DisruptionReasonEmpty, Price: d.price(cs), Savings: d.price(cs)}
	pools := map[string]bool{}
	var names []string
	for _, c := range cs {
		cmd.Candidates = append(cmd.Candidates, c.Name)
		cmd.Pods = append(cmd.Pods, c.pods...) // expendable pods only: they need no place
		if !pools[c.NodePool] {
			pools[c.NodePool] = true
			names = append(names, c.NodePool)
		}
	}
	slices.Sort(names)
	cmd.Message = fmt.Sprintf("%d empty node(s) of nodepool %s", len(cs), strings.Join(names, ", "))
	return cmd, nil, nil
}

package disruption

import (
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// drift replaces nodes that no longer match their NodePool or NodeClass, within budgets. The
// nodes of a PodGroup disrupted only whole go together when one of them drifts.
type drift struct{}

func (drift) eligible(d *decider) ([]*candidate, error) {
	var out []*candidate
	for _, c := range d.cands {
		if c.Drifted != "" {
			out = append(out, c)
		}
	}
	return out, nil
}

func (m drift) search(d *decider, eligible []*candidate) error {
	for _, c := range eligible {
		if d.taken[c.Name] || len(d.dec.Commands) >= d.opts.MaxCommands {
			continue
		}
		if d.receiving[c.Name] {
			d.skip(c, SkipReceiving, "it receives pods from another command of this pass")
			continue
		}
		if r, msg := d.blocked(c); r != "" {
			d.skip(c, r, "%s", msg)
			continue
		}
		if err := d.forceOne(m, c); err != nil {
			return err
		}
	}
	return nil
}

// compute replaces the nodes, one of which drifted, with what their pods need, if each is still
// free to go and the budgets allow them all.
func (drift) compute(d *decider, cs []*candidate, _ *Command) (*Command, *Skip, error) {
	if skip := d.firstBlocked(cs); skip != nil {
		return nil, skip, nil
	}
	if refusing := d.budgetRefuses(cs, apisv1.DisruptionReasonDrifted); refusing != "" {
		return nil, skipFor(cs[0], SkipBudget, "the disruption budgets of nodepool %s allow no more drift now", refusing), nil
	}
	var drifted *candidate
	for _, c := range cs {
		if c.Drifted != "" {
			drifted = c
			break
		}
	}
	if drifted == nil {
		return nil, skipFor(cs[0], SkipNotDrifted, "it no longer drifts"), nil
	}
	return d.forced(MethodDrift, apisv1.DisruptionReasonDrifted, drifted, cs, "drifted: "+drifted.Drifted)
}

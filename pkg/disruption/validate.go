package disruption

import (
	"fmt"
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
// for the cluster to settle: every candidate must still be there, and the command's method must
// compute it again on the fresh snapshot (method.compute: the candidates still disruptable for
// that method, within budgets, every pod still placed; a consolidation needing no more
// replacements than it did, of the types it chose, and still saving above the floors). It
// returns the command so recomputed (its replacements are what to launch), or an *Invalid error.
func Validate(s *Snapshot, cmd Command, opts Options) (Command, error) {
	m, err := methodOf(cmd.Method)
	if err != nil {
		return Command{}, err
	}
	if len(cmd.Candidates) == 0 {
		return Command{}, fmt.Errorf("a %s command without candidates", cmd.Method)
	}
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
	if msg := splitsUnit(cs); msg != "" {
		return Command{}, &Invalid{Node: cs[0].Name, Reason: SkipPodGroup, Message: msg}
	}
	fresh, skip, err := m.compute(d, cs, &cmd)
	if err != nil {
		return Command{}, err
	}
	if skip != nil {
		return Command{}, &Invalid{Node: skip.Node, Reason: skip.Reason, Message: skip.Message}
	}
	return *fresh, nil
}

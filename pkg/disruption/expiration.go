package disruption

import (
	"fmt"
	"time"
)

// expiration replaces nodes whose expireAfter ran out. Budgets do not hold it back; PDBs and
// do-not-disrupt are honoured by the drain until terminationGracePeriod. The nodes of a
// PodGroup disrupted only whole are replaced together when the first of them expires.
type expiration struct{}

func (expiration) eligible(d *decider) ([]*candidate, error) {
	var out []*candidate
	for _, c := range d.cands {
		if c.expired(d.snap.Now) && !c.Deleting && c.Initialized && c.pool != nil {
			out = append(out, c)
		}
	}
	return out, nil
}

// expired reports whether the node's expireAfter has run out at now.
func (c *candidate) expired(now time.Time) bool {
	return !c.ExpireAt.IsZero() && !c.ExpireAt.After(now)
}

func (m expiration) search(d *decider, eligible []*candidate) error {
	for _, c := range eligible {
		if d.taken[c.Name] {
			continue
		}
		if d.receiving[c.Name] {
			d.skip(c, SkipReceiving, "it receives pods from another command of this pass")
			continue
		}
		if len(d.dec.Commands) >= d.opts.MaxCommands {
			break
		}
		if msg := d.unitUnforceable(c); msg != "" {
			d.skip(c, SkipPodGroup, "%s", msg)
			continue
		}
		if err := d.forceOne(m, c); err != nil {
			return err
		}
	}
	return nil
}

// compute replaces the nodes, one of which expired, with what their pods need. Expiration is
// forceful: only a node already going away, or pods that would fit nowhere, stop it.
func (expiration) compute(d *decider, cs []*candidate, _ *Command) (*Command, *Skip, error) {
	var first *candidate
	for _, c := range cs {
		if c.Deleting {
			return nil, skipFor(c, SkipDeleting, "already being deleted"), nil
		}
		if first == nil && c.expired(d.snap.Now) {
			first = c
		}
	}
	if first == nil {
		return nil, skipFor(cs[0], SkipNotExpired, "it has not expired"), nil
	}
	return d.forced(MethodExpiration, "", first, cs, fmt.Sprintf("expired at %s", first.ExpireAt.UTC().Format("2006-01-02T15:04:05Z")))
}

package disruption

import "fmt"

// method is one way of disrupting nodes, each in a file of its own: emptiness.go, drift.go,
// expiration.go and consolidation.go (whose searches are multinode.go, for several nodes with
// at most one replacement or repacked onto fewer, and singlenode.go, for one node deleted,
// replaced or split; spot.go and reserved.go hold the rules its commands follow).
//
// A pass asks each method in turn for the candidates it may take and lets it search them for
// commands; Validate asks the command's method to compute it again on a fresher snapshot, so
// that what a command must still satisfy is written once, in compute.
type method interface {
	// eligible returns the pass's candidates the method may take, in the order it judges them,
	// recording a skip for those it leaves alone for a reason worth saying.
	eligible(d *decider) ([]*candidate, error)
	// search judges the eligible candidates and commits the method's commands.
	search(d *decider, eligible []*candidate) error
	// compute is the command that disrupts exactly cs by the method on the decider's snapshot,
	// or why it may not. was is the command being validated (nil within a pass): a command
	// computed again may not need more than was decided.
	compute(d *decider, cs []*candidate, was *Command) (*Command, *Skip, error)
}

// passMethods are the methods of a pass, in order: the first that commits a command ends it.
var passMethods = []method{emptiness{}, drift{}, expiration{}, consolidation{}}

// methodOf returns the method that finds commands of kind m.
func methodOf(m Method) (method, error) {
	switch m {
	case MethodEmptiness:
		return emptiness{}, nil
	case MethodDrift:
		return drift{}, nil
	case MethodExpiration:
		return expiration{}, nil
	case MethodConsolidation:
		return consolidation{}, nil
	}
	return nil, fmt.Errorf("unknown disruption method %q", m)
}

// skipFor is the skip of a node for a reason.
func skipFor(c *candidate, r SkipReason, format string, args ...any) *Skip {
	return &Skip{Node: c.Name, Reason: r, Message: fmt.Sprintf(format, args...)}
}

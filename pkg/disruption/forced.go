package disruption

import (
	"fmt"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// forceOne commits the command of m that takes c with the nodes it must go with, or records
// why there is none.
func (d *decider) forceOne(m method, c *candidate) error {
	cmd, skip, err := m.compute(d, c.whole(), nil)
	if err != nil {
		return err
	}
	if skip != nil {
		d.skip(c, skip.Reason, "%s", skip.Message)
		return nil
	}
	return d.commit(*cmd)
}

// forced is the command that replaces nodes whatever it costs (drift, expiration): cs are the
// nodes that go (c, or c's unit), c the one that calls for it, why what it calls for.
func (d *decider) forced(m Method, reason apisv1.DisruptionReason, c *candidate, cs []*candidate, why string) (*Command, *Skip, error) {
	o, r, msg, err := d.removal(cs, m)
	if err != nil {
		return nil, nil, err
	}
	if r != "" {
		return nil, skipFor(c, r, "%s", msg), nil
	}
	if c.unit != nil {
		why += ", with the other nodes of " + c.unit.names()
	}
	cmd := d.command(m, reason, cs, o, why)
	return &cmd, nil, nil
}

// removal is what replacing drifted or expired nodes (one, or a unit) takes, or why they cannot
// be replaced. A static NodePool's node is replaced by exactly one claim from its pool's
// template, so the pool keeps its replicas; its pods are not planned elsewhere (the scheduler
// places them once evicted, on the replacement or any node). Any other node's pods are planned
// onto the nodes left and new claims, and a pod that would fit nowhere holds the node. So does,
// for drift, a pod that would move onto a node not initialized yet, as in Karpenter: whether
// that node comes up, and kube-scheduler puts the pod there, is not known (expiration is
// forceful and goes on).
func (d *decider) removal(cs []*candidate, m Method) (*outcome, SkipReason, string, error) {
	if c := cs[0]; len(cs) == 1 && c.static() {
		t := d.snap.Static[c.NodePool]
		if t == nil || t.InstanceType == nil {
			return nil, SkipStatic, fmt.Sprintf("static nodepool %s has no instance type with an available offering to launch its replacement", c.NodePool), nil
		}
		r := *t
		r.Pods = nil
		r.Hostname = fmt.Sprintf("replacement-%d-static-%s", d.world.commits, c.Name)
		return &outcome{plan: &solver.Plan{}, replacements: []*solver.Claim{&r}}, "", "", nil
	}
	var names []string
	for _, c := range cs {
		if c.static() {
			return nil, SkipStatic, fmt.Sprintf("%s is disrupted only whole, and its node %s belongs to static nodepool %s, whose nodes are replaced one at a time", c.unit.names(), c.Name, c.NodePool), nil
		}
		names = append(names, c.Name)
	}
	o, err := d.world.remove(names, placeOf(cs))
	if err != nil {
		return nil, "", "", err
	}
	if o.stranded > 0 {
		return nil, SkipUnschedulable, fmt.Sprintf("%d of its pods would fit nowhere", o.stranded), nil
	}
	if m != MethodExpiration && o.uninitialized != "" {
		return nil, SkipUnschedulable, fmt.Sprintf("not all pods would schedule, %s", o.uninitialized), nil
	}
	return o, "", "", nil
}

// static reports whether the node belongs to a static NodePool.
func (c *candidate) static() bool {
	return c.pool != nil && c.pool.IsStatic()
}

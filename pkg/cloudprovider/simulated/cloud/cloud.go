package cloud

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
)

// ErrNotFound is wrapped by errors about an instance that does not exist or has terminated.
var ErrNotFound = errors.New("instance not found")

// ErrUnknownClass is wrapped by errors about a class SetClass has not configured.
var ErrUnknownClass = errors.New("unknown class")

// Cloud is the simulated cloud. It is not safe for concurrent use; its callers serialise.
type Cloud struct {
	classes   map[string]*class
	instances map[string]*instance
	byClaim   map[string]string // NodeClaim name → ID of its instance that is not Terminated
	queue     eventQueue
	outbox    []Event
	ids       *rand.Rand
	now       time.Time // the latest time processed
}

// instance is an Instance with the model's bookkeeping.
type instance struct {
	Instance
	// plan counts changes to the interruption plan; queued items of an older plan are stale.
	plan int
}

// Options configure New.
type Options struct {
	// IDSeed seeds instance IDs. Equal seeds and equal calls give equal IDs; a controller that
	// restarts should pass a fresh seed.
	IDSeed uint64
}

// New returns an empty cloud.
func New(opts Options) *Cloud {
	return &Cloud{
		classes:   map[string]*class{},
		instances: map[string]*instance{},
		byClaim:   map[string]string{},
		ids:       rand.New(rand.NewPCG(opts.IDSeed, 0x5eed_1d5)),
	}
}

// SetClass configures (or reconfigures) a class. Instances already launched keep their
// schedules; pools and reservations are recounted from the live instances of the class, which
// may leave a shrunken pool over full until instances go.
func (c *Cloud) SetClass(name string, cfg ClassConfig) error {
	if err := cfg.validate(); err != nil {
		return fmt.Errorf("class %s: %w", name, err)
	}
	cls := newClass(name, cfg)
	for _, inst := range c.instances {
		if inst.Class == name && inst.Alive() {
			cls.hold(&inst.Instance, +1)
		}
	}
	c.classes[name] = cls
	return nil
}

// HasClass reports whether SetClass configured name.
func (c *Cloud) HasClass(name string) bool {
	_, ok := c.classes[name]
	return ok
}

// Instance returns the instance with the given ID, Terminated ones included until Forget.
func (c *Cloud) Instance(id string) (Instance, bool) {
	inst, ok := c.instances[id]
	if !ok {
		return Instance{}, false
	}
	return inst.Instance, true
}

// ForClaim returns the instance launched for a NodeClaim, unless it has terminated.
func (c *Cloud) ForClaim(nodeClaim string) (Instance, bool) {
	id, ok := c.byClaim[nodeClaim]
	if !ok {
		return Instance{}, false
	}
	return c.Instance(id)
}

// Instances returns every instance (Terminated ones included until Forget), ordered by ID.
func (c *Cloud) Instances() []Instance {
	out := make([]Instance, 0, len(c.instances))
	for _, inst := range c.instances {
		out = append(out, inst.Instance)
	}
	slices.SortFunc(out, func(a, b Instance) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Forget drops a Terminated instance from the model. It fails for an instance that is not
// Terminated and does nothing for an unknown one.
func (c *Cloud) Forget(id string) error {
	inst, ok := c.instances[id]
	if !ok {
		return nil
	}
	if inst.Alive() {
		return fmt.Errorf("instance %s is %s, not Terminated", id, inst.State)
	}
	delete(c.instances, id)
	return nil
}

// Remove drops an instance outright, as if it had never been launched: its capacity is freed
// and nothing more happens to it. It is for undoing a launch whose record could not be saved.
func (c *Cloud) Remove(id string) {
	inst, ok := c.instances[id]
	if !ok {
		return
	}
	if inst.Alive() {
		c.classes[inst.Class].hold(&inst.Instance, -1)
	}
	if c.byClaim[inst.NodeClaim] == id {
		delete(c.byClaim, inst.NodeClaim)
	}
	delete(c.instances, id)
}

// Record is an instance as persisted, for Restore.
type Record struct {
	ID        string
	Class     string
	NodeClaim string
	Region    string
	Type      *catalog.InstanceType
	Offering  catalog.Offering
	Launched  time.Time
	// State is the persisted state. Pending and Running are recomputed from Launched and the
	// delays; Terminating and Terminated are kept, with TerminatingAt and Reason.
	State         State
	TerminatingAt time.Time
	Reason        Reason
	// Interruption is the persisted plan; zero means draw it again as at launch.
	Interruption Interruption
}

// Restore adds an instance that existed before the model was built (a controller restart).
// Its schedule is computed as at launch, so events already past come out of the next Advance
// again; consumers must treat events as idempotent. The class must be configured.
func (c *Cloud) Restore(rec Record) error {
	cls, ok := c.classes[rec.Class]
	switch {
	case !ok:
		return fmt.Errorf("restoring %s: %w %q", rec.ID, ErrUnknownClass, rec.Class)
	case rec.ID == "" || rec.Type == nil:
		return fmt.Errorf("restoring %q: no ID or no instance type", rec.ID)
	case c.instances[rec.ID] != nil:
		return fmt.Errorf("restoring %s: already known", rec.ID)
	}
	inst := &instance{Instance: Instance{
		ID: rec.ID, Class: rec.Class, NodeClaim: rec.NodeClaim, Region: rec.Region,
		Type: rec.Type, Offering: rec.Offering, Launched: rec.Launched, State: Pending,
	}}
	c.instances[inst.ID] = inst
	if rec.State == Terminated {
		inst.State, inst.TerminatingAt, inst.TerminatedAt, inst.Reason = Terminated, rec.TerminatingAt, rec.TerminatingAt, rec.Reason
		return nil
	}
	c.start(cls, inst, rec.Interruption)
	if rec.State == Terminating {
		c.beginTermination(cls, inst, rec.TerminatingAt, rec.Reason)
	}
	return nil
}

// start schedules a new or restored instance's life and takes its capacity.
func (c *Cloud) start(cls *class, inst *instance, plan Interruption) {
	d := cls.cfg.Delays
	inst.RunningAt = inst.Launched.Add(d.Boot)
	inst.RegisteredAt = inst.RunningAt.Add(d.Registration)
	if HasDevices(inst.Type) {
		inst.DevicesAt = inst.RegisteredAt.Add(d.DevicePlugin)
	}
	if plan.IsZero() {
		plan, inst.RebalanceAt = cls.drawInterruption(&inst.Instance)
	} else if plan.Kind == cloudprovider.SpotInterruption && !plan.Injected {
		inst.RebalanceAt = rebalanceBefore(plan.Notice, inst.Launched, cls.cfg.Interruptions.RebalanceLead)
	}
	cls.hold(&inst.Instance, +1)
	if inst.NodeClaim != "" {
		c.byClaim[inst.NodeClaim] = inst.ID
	}
	c.push(inst.RunningAt, inst, stepRunning)
	c.push(inst.RegisteredAt, inst, stepRegistered)
	if !inst.DevicesAt.IsZero() {
		c.push(inst.DevicesAt, inst, stepDevices)
	}
	c.plan(inst, plan)
	if !inst.RebalanceAt.IsZero() {
		c.push(inst.RebalanceAt, inst, stepRebalance)
	}
}

// newID returns an unused instance ID: "i-" and 17 hexadecimal digits, as EC2's.
func (c *Cloud) newID() string {
	for {
		id := fmt.Sprintf("i-0%016x", c.ids.Uint64())
		if _, taken := c.instances[id]; !taken {
			return id
		}
	}
}

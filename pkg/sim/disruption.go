package sim

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/disruption"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// Where the tenon policy's disruption decisions come from (Options.TenonDisruption).
const (
	// DisruptionInterim is the simulator's own implementation of tenon's methods
	// (tenonDisrupter): fast enough for a 100-day trace.
	DisruptionInterim = "interim"
	// DisruptionPackage is pkg/disruption, the code the controller runs, driven pass by pass
	// over a full snapshot of the simulated cluster (every node with its pods).
	DisruptionPackage = "package"
)

// ReasonDrifted is the reason of pkg/disruption's drift commands.
const ReasonDrifted Reason = "Drifted"

// packageDisrupter runs pkg/disruption.Decide at every pass and carries out its commands.
type packageDisrupter struct {
	t      *tenon
	cursor string
	// memory is the last pass's Decision.Memory.
	memory *disruption.Memory
	gate   quietGate
	// prepared is the last pass's prepared snapshot, reused while every pool is as it was
	// then: the same instance types (their availability) and the same usage against limits.
	prepared *solver.Prepared
	poolsAt  []poolState
	// seed hashes the nodes' generations; noGenerations leaves them 0 (tests compare).
	seed          maphash.Seed
	noGenerations bool
}

// generation is a node's disruption.Node.Generation: what the snapshot's solver node is made
// of that changes during a replay (its pods by ID, whose API objects do not change, its state,
// whether it is being taken away, and its price); its labels, taints and allocatable are
// fixed at launch.
func (d *packageDisrupter) generation(n *Node) uint64 {
	if d.noGenerations {
		return 0
	}
	var h maphash.Hash
	h.SetSeed(d.seed)
	var b [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	put(uint64(n.ID))
	put(uint64(n.State))
	if n.Disrupting {
		put(1)
	} else {
		put(0)
	}
	put(math.Float64bits(n.Price))
	put(uint64(len(n.Pods)))
	for _, id := range n.Pods {
		put(uint64(id))
	}
	return h.Sum64() | 1
}

// Pass builds the snapshot pkg/disruption reads and maps its commands back.
func (d *packageDisrupter) Pass(now time.Time, v *View) ([]Command, time.Time) {
	return d.gate.run(now, v, d.pass)
}

func (d *packageDisrupter) pass(now time.Time, v *View) ([]Command, time.Time) {
	env := v.Env()
	all := make([]int, len(env.Workload.Shapes))
	for i := range all {
		all[i] = i
	}
	snap := &solver.Snapshot{DaemonSets: env.Workload.DaemonSets}
	pools := map[string]*apisv1.NodePool{}
	var state []poolState
	for _, p := range env.Pools {
		sp := p.Solver
		sp.InstanceTypes = d.t.types(v, p, all)
		sp.Usage, sp.Nodes = v.Usage(p.Index)
		snap.NodePools = append(snap.NodePools, sp)
		pools[p.Name] = p.NodePool
		ps := poolState{}
		_, ps.types = v.instanceTypes(p.Index)
		if len(sp.InstanceTypes) > 0 {
			ps.priced = sp.InstanceTypes[0]
		}
		if sp.NodeLimit >= 0 || slices.Contains(sp.HasLimit[:], true) {
			ps.usage, ps.nodes = sp.Usage, sp.Nodes
		}
		state = append(state, ps)
	}
	same := slices.Equal(state, d.poolsAt)
	d.poolsAt = state
	for _, id := range v.NotExpendable(v.Pending()) { // expendable pods take no room
		snap.Pods = append(snap.Pods, v.APIPod(id))
	}
	byName := map[string]*Node{}
	var nodes []disruption.Node
	for _, n := range v.Nodes() {
		p := env.Pools[n.Pool]
		sn := solver.Node{
			Name: n.Name, NodePool: p.Name, Labels: n.snapLbls, Taints: p.Taints,
			Allocatable: n.Alloc.Add(n.daemons), Pods: make([]*corev1.Pod, 0, len(n.Pods)),
			Initialized: n.State == NodeReady, InFlight: n.State == NodeLaunching, MarkedForDeletion: n.Disrupting, Price: n.Price,
		}
		for _, id := range n.Pods {
			sn.Pods = append(sn.Pods, v.APIPod(id))
		}
		snap.Nodes = append(snap.Nodes, sn)
		dn := disruption.Node{
			Name: n.Name, NodeClaim: n.Name, NodePool: p.Name, InstanceType: n.Type.Name, Zone: n.Offering.Zone,
			CapacityType: n.Offering.CapacityType, ReservationID: n.Offering.ReservationID, Price: v.r.price(n),
			CreatedAt: now.Add(n.Launched - v.Now()), Initialized: n.State == NodeReady, Deleting: n.Disrupting,
			NotReady: n.State != NodeReady, LastPodEvent: now.Add(n.LastChange - v.Now()),
			Generation: d.generation(n),
		}
		if p.ExpireAfter >= 0 {
			dn.ExpireAt = dn.CreatedAt.Add(p.ExpireAfter)
		}
		nodes = append(nodes, dn)
		byName[n.Name] = n
	}
	v.CountSolve()
	ds := &disruption.Snapshot{Solver: snap, NodePools: pools, Nodes: nodes, Now: now, WholeGroups: v.r.wholeGroups()}
	if same {
		ds.Prepared = d.prepared
	}
	dec, err := disruption.Decide(ds, disruption.Options{Cursor: d.cursor, Memory: d.memory, SpotToSpotConsolidation: d.t.spotToSpot, ExpendablePriorityCutoff: new(v.ExpendableCutoff())})
	wake := nextWake(v)
	if err != nil {
		return nil, wake
	}
	d.cursor, d.memory = dec.Cursor, dec.Memory
	d.prepared = dec.Prepared
	var out []Command
	for _, c := range dec.Commands {
		cmd := Command{Savings: c.Savings}
		allSpot := true
		for _, name := range c.Candidates {
			if n, ok := byName[name]; ok {
				cmd.Nodes = append(cmd.Nodes, n.ID)
				allSpot = allSpot && n.Offering.CapacityType == apisv1.CapacityTypeSpot
			}
		}
		spotRepl := len(c.Replacements) > 0
		for _, cl := range c.Replacements {
			cmd.Replacements = append(cmd.Replacements, Launch{Pool: d.t.poolIndex(cl.NodePool), Type: cl.InstanceType, Offering: cl.Offering, Options: cl.NodeClaimRequirements()})
			spotRepl = spotRepl && cl.Offering.CapacityType == apisv1.CapacityTypeSpot
		}
		switch {
		case c.Method == disruption.MethodEmptiness:
			cmd.Reason = ReasonEmpty
		case c.Method == disruption.MethodExpiration:
			cmd.Reason = ReasonExpired
		case c.Method == disruption.MethodDrift:
			cmd.Reason = ReasonDrifted
		case allSpot && spotRepl:
			cmd.Reason = ReasonSpotToSpot
		default:
			cmd.Reason = ReasonUnderutilized
		}
		if len(cmd.Nodes) > 0 {
			out = append(out, cmd)
		}
	}
	return out, wake
}

// nextWake is the earliest time after now a node becomes quiet for its pool's
// consolidateAfter or reaches its expireAfter (zero: none).
func nextWake(v *View) time.Time {
	t := v.Now()
	wake := noWake
	consider := func(at time.Duration) {
		if at > t {
			wake.at(at)
		}
	}
	for _, n := range v.Nodes() {
		p := v.Env().Pools[n.Pool]
		if p.ConsolidateAfter >= 0 {
			consider(n.LastChange + p.ConsolidateAfter)
		}
		if p.ExpireAfter >= 0 {
			consider(n.Launched + p.ExpireAfter)
		}
	}
	return wake.time(v.r.wall(t), t)
}

// expirations are the commands that replace the nodes whose expireAfter has passed (forcefully:
// budgets do not hold them back); soon learns when the next node expires.
func expirations(v *View, soon func(time.Duration)) []Command {
	env, t := v.Env(), v.Now()
	var cmds []Command
	for _, n := range v.Nodes() {
		p := env.Pools[n.Pool]
		if n.Disrupting || p.ExpireAfter < 0 {
			continue
		}
		if at := n.Launched + p.ExpireAfter; at <= t {
			cmds = append(cmds, Command{Reason: ReasonExpired, Nodes: []NodeID{n.ID}})
		} else {
			soon(at)
		}
	}
	return cmds
}

// poolState is what a pool's compiled form depends on besides its spec: the version of its
// instance types, the objects the pass is given for them (repriced with commitments), and,
// when it has limits, its usage against them.
type poolState struct {
	types int
	// priced is the first of the pool's types as the pass is given them: with commitments the
	// types are repriced (new objects) whenever the bill's room changes, with the same version.
	priced *catalog.InstanceType
	usage  scheduling.Resources
	nodes  int
}

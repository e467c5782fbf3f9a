package sim

import (
	"encoding/binary"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// TenonPolicy is tenon's own behaviour: every batch of pending pods goes through the solver
// (pkg/solver, the code the controller runs) over a snapshot of the simulated cluster, and
// every disruption pass runs tenon's disruption methods (see tenonDisrupter).
func TenonPolicy(env *Env) Policy {
	t := &tenon{env: env, fits: map[[2]int][]bool{}, admits: map[admitKey][]bool{}, filtered: map[string]typeList{}, lists: map[string]typeList{}, projected: map[*catalog.InstanceType]*catalog.InstanceType{}, prepared: map[string]*solver.Prepared{}}
	return Policy{
		Name:          PolicyTenon,
		Provisioner:   t,
		Disrupter:     &tenonDisrupter{t: t},
		HandleNotices: true,
		Commitments:   true,
		Assumptions: []string{
			"tenon: provisioning is pkg/solver over a snapshot of the simulated cluster, batch by batch",
			"tenon: disruption is the simulator's interim implementation of tenon's methods (expiration, emptiness after consolidateAfter, single-node delete or replace consolidation checked with pkg/solver, spot-to-spot only with the SpotToSpotConsolidation feature gate on and at least 15 cheaper options, budgets), fast enough for long traces; --tenon-disruption package runs pkg/disruption itself (the code the controller runs) at a far higher cost per pass",
		},
	}
}

// TenonPackagePolicy is TenonPolicy with pkg/disruption deciding every pass (see
// DisruptionPackage).
func TenonPackagePolicy(env *Env) Policy {
	p := TenonPolicy(env)
	p.Disrupter = &packageDisrupter{t: p.Provisioner.(*tenon), seed: maphash.MakeSeed()}
	p.Assumptions = []string{
		p.Assumptions[0],
		"tenon: disruption is pkg/disruption (the code the controller runs), one Decide per pass over a snapshot of every node with its pods; commands run at once (the controller's 15 s validation wait is not modelled)",
	}
	return p
}

// tenon is the tenon policy's provisioner.
type tenon struct {
	env *Env
	// spotToSpot is the SpotToSpotConsolidation feature gate: whether consolidation may
	// replace spot nodes by spot.
	spotToSpot bool
	// fits[pool, shape][i] says whether pool type i (Pool.Types) can hold a pod of the shape:
	// its allocatable has room and its labels allow it. Types that hold no pending pod cannot
	// appear in any claim, so each solve gets only the others (same plan, less to compile).
	fits map[[2]int][]bool
	// admits holds, by pool and node-affinity alternatives (altKeys, by shape), which pool
	// types those alternatives allow; allocs, by pool, its types' allocatable.
	admits  map[admitKey][]bool
	altKeys []string
	allocs  [][]scheduling.Resources
	// filtered holds, by pool, version and shapes, the types that can hold one of the
	// shapes; lists of the same types are one list (lists), whose id keys the prepared pools
	// (poolsOnly): sets of shapes that differ often keep the same types.
	filtered map[string]typeList
	lists    map[string]typeList
	index    []typeIndex
	// projected maps a type to its copy whose requirements keep only the keys some
	// requirement of the simulation reads (Env.keys): the solver compiles an index per key
	// and type, and no constraint can tell the copies from the originals, so plans are the
	// same, for much less compiling.
	projected map[*catalog.InstanceType]*catalog.InstanceType
	// prepared caches pools-only snapshots (see poolsOnly).
	prepared map[string]*solver.Prepared
}

// project returns the type with its requirements cut to the keys requirements read.
func (t *tenon) project(it *catalog.InstanceType) *catalog.InstanceType {
	if p, ok := t.projected[it]; ok {
		return p
	}
	cp := *it
	var reqs scheduling.Requirements
	for _, r := range it.Requirements.Items() {
		if t.env.keys[r.Key] {
			reqs = reqs.Add(r)
		}
	}
	cp.Requirements = reqs
	t.projected[it] = &cp
	return &cp
}

// Provision runs the solver over the cluster and the pending pods.
func (t *tenon) Provision(now time.Time, v *View, pending []PodID) Decision {
	if pending = v.NotExpendable(pending); len(pending) == 0 {
		return Decision{} // expendable pods get no capacity
	}
	shapes := shapeSet(v, pending)
	pods := make([]*corev1.Pod, len(pending))
	for i, id := range pending {
		pods[i] = v.provisionPod(id)
	}
	v.CountSolve()
	plan, err := t.solve(v, pods, shapes)
	if err != nil {
		return Decision{}
	}
	return t.decision(v, plan, pending, pods)
}

// solve places pods (of shapes) with the solver: over the pools and the nodes with room for
// them, or over the pools alone when no node has room for any.
func (t *tenon) solve(v *View, pods []*corev1.Pod, shapes []int) (*solver.Plan, error) {
	pools := t.poolsOnly(v, shapes)
	if pools == nil || t.roomFor(v, shapes, NoNode) {
		snap := t.snapshot(v, shapes, nil)
		snap.Pods = pods
		if pools == nil { // the pools do not prepare: the solve says why
			return solver.Solve(snap, solver.Options{SkipBound: true})
		}
		// The same pools with the nodes: only the nodes are compiled (the pools were, once
		// for this list of types).
		prep, err := pools.WithNodes(snap)
		if err != nil {
			return nil, err
		}
		return prep.Solve(pods, solver.Options{SkipBound: true})
	}
	return pools.Solve(pods, solver.Options{SkipBound: true})
}

// roomFor reports whether a node other than not, not disrupting, has room for a pod of one of
// shapes (always true when running pods feed topology terms).
func (t *tenon) roomFor(v *View, shapes []int, not NodeID) bool {
	if t.env.topology {
		return true
	}
	for _, n := range v.Nodes() {
		if n.ID != not && !n.Disrupting && hasRoom(v, n, shapes) {
			return true
		}
	}
	return false
}

// poolsOnly returns the snapshot of the pools alone (no node), prepared, for shapes. When no
// node has room for any of the pods to place, the solver can only open claims, and a snapshot
// without nodes gives the same plan: it is prepared once and solved many times, until the
// offerings (or, for pools with limits, their usage) change.
func (t *tenon) poolsOnly(v *View, shapes []int) *solver.Prepared {
	snap := &solver.Snapshot{DaemonSets: t.env.Workload.DaemonSets, Gangs: v.Gangs()}
	var key strings.Builder
	for _, p := range t.env.Pools {
		sp := p.Solver
		l := t.typeList(v, p, shapes)
		sp.InstanceTypes = v.r.reprice(l.types)
		sp.Usage, sp.Nodes = v.Usage(p.Index)
		snap.NodePools = append(snap.NodePools, sp)
		key.WriteString(strconv.Itoa(l.id)) // the pool and its types' version with them
		if limited(&sp) {
			key.WriteString(sp.Usage.String())
			key.WriteString(strconv.Itoa(sp.Nodes))
		}
		key.WriteByte('/')
	}
	if v.r.deciding() { // the offerings' prices follow the room the fleet leaves
		key.WriteString("room")
		for _, l := range v.r.bill.roomNow().Left() {
			key.WriteByte(' ')
			key.WriteString(strconv.FormatFloat(l, 'g', -1, 64))
		}
	}
	if p, ok := t.prepared[key.String()]; ok {
		return p
	}
	p, err := solver.Prepare(snap)
	if err != nil {
		return nil
	}
	if len(t.prepared) > 256 {
		clear(t.prepared)
	}
	t.prepared[key.String()] = p
	return p
}

func limited(np *solver.NodePool) bool {
	if np.NodeLimit >= 0 {
		return true
	}
	for _, l := range np.HasLimit {
		if l {
			return true
		}
	}
	return false
}

// decision maps a plan back to the simulation's pods and nodes (pods[i] is pending[i] as the
// solver saw it).
func (t *tenon) decision(v *View, plan *solver.Plan, pending []PodID, pods []*corev1.Pod) Decision {
	byPod := make(map[*corev1.Pod]PodID, len(pending))
	for i, id := range pending {
		byPod[pods[i]] = id
	}
	byName := map[string]NodeID{}
	for _, n := range v.Nodes() {
		byName[n.Name] = n.ID
	}
	var d Decision
	for _, pl := range plan.Placements {
		if id, ok := byName[pl.Node]; ok {
			d.Place = append(d.Place, Placement{Pod: byPod[pl.Pod], Node: id})
		}
	}
	for _, c := range plan.Claims {
		l := Launch{Pool: t.poolIndex(c.NodePool), Type: c.InstanceType, Offering: c.Offering, Options: c.NodeClaimRequirements()}
		for _, p := range c.Pods {
			l.Pods = append(l.Pods, byPod[p])
		}
		d.Launch = append(d.Launch, l)
	}
	return d
}

func (t *tenon) poolIndex(name string) int {
	for _, p := range t.env.Pools {
		if p.Name == name {
			return p.Index
		}
	}
	return 0
}

// shapeSet returns the distinct shapes of pods, sorted.
func shapeSet(v *View, pods []PodID) []int {
	var out []int
	for _, id := range pods {
		s := int(v.Pod(id).Shape)
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// snapshot builds the solver's input: the pools (with the types that can hold one of shapes,
// availability as the cloud has it now, and their usage for limits), and the nodes not being
// disrupted that have room for one of shapes (all of them when running pods matter to
// topology), except those in exclude.
func (t *tenon) snapshot(v *View, shapes []int, exclude map[NodeID]bool) *solver.Snapshot {
	snap := &solver.Snapshot{DaemonSets: t.env.Workload.DaemonSets, Gangs: v.Gangs()}
	for _, p := range t.env.Pools {
		sp := p.Solver
		sp.InstanceTypes = t.types(v, p, shapes)
		sp.Usage, sp.Nodes = v.Usage(p.Index)
		snap.NodePools = append(snap.NodePools, sp)
	}
	for _, n := range v.Nodes() {
		if n.Disrupting || exclude[n.ID] {
			continue
		}
		if !t.env.topology && !hasRoom(v, n, shapes) {
			continue
		}
		snap.Nodes = append(snap.Nodes, v.SolverNode(n))
	}
	return snap
}

// hasRoom reports whether a node could take a pod of one of shapes.
func hasRoom(v *View, n *Node, shapes []int) bool {
	free := n.Free()
	for _, s := range shapes {
		if v.Env().Workload.Shapes[s].Requests.Fits(&free) && v.Compatible(s, n) {
			return true
		}
	}
	return false
}

// types returns the pool's types on sale now that can hold a pod of one of shapes.
func (t *tenon) types(v *View, p *Pool, shapes []int) []*catalog.InstanceType {
	return v.r.reprice(t.typeList(v, p, shapes).types)
}

// typeList is a list of instance types, and its id among the lists of distinct types.
type typeList struct {
	types []*catalog.InstanceType
	id    int
}

// typeList returns the pool's types on sale now that can hold a pod of one of shapes (not
// repriced).
func (t *tenon) typeList(v *View, p *Pool, shapes []int) typeList {
	cur, version := v.instanceTypes(p.Index)
	var key strings.Builder
	key.WriteString(strconv.Itoa(p.Index))
	key.WriteByte('/')
	key.WriteString(strconv.Itoa(version))
	for _, s := range shapes {
		key.WriteByte(',')
		key.WriteString(strconv.Itoa(s))
	}
	if l, ok := t.filtered[key.String()]; ok {
		return l
	}
	idx := t.typeIndex(p, cur, version)
	var masks [][]bool
	for _, s := range shapes {
		masks = append(masks, t.fitMask(p, s))
	}
	out := make([]*catalog.InstanceType, 0, len(cur))
	// The list's key: pool, version and the types' indices in Pool.Types, fixed-width (within
	// a pool and version, the index is the type).
	names := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(make([]byte, 0, 8+4*len(cur)), uint32(p.Index)), uint32(version))
	for j, it := range cur {
		i := idx[j]
		if i < 0 {
			continue
		}
		for _, m := range masks {
			if m[i] {
				out = append(out, t.project(it))
				names = binary.LittleEndian.AppendUint32(names, uint32(i))
				break
			}
		}
	}
	l, ok := t.lists[string(names)]
	if !ok {
		l = typeList{types: out, id: len(t.lists)}
		t.lists[string(names)] = l
	}
	t.filtered[key.String()] = l
	return l
}

// typeIndex returns, for the pool's types on sale at version (cur), the index of each in
// Pool.Types (-1: not one of them), computed once a version.
func (t *tenon) typeIndex(p *Pool, cur []*catalog.InstanceType, version int) []int {
	for len(t.index) <= p.Index {
		t.index = append(t.index, typeIndex{version: -1})
	}
	ti := &t.index[p.Index]
	if ti.version == version && len(ti.idx) == len(cur) {
		return ti.idx
	}
	if ti.byName == nil {
		ti.byName = make(map[string]int, len(p.Types))
		for i, it := range p.Types {
			ti.byName[it.Name] = i
		}
	}
	ti.version, ti.idx = version, make([]int, len(cur))
	for j, it := range cur {
		i, ok := ti.byName[it.Name]
		if !ok {
			i = -1
		}
		ti.idx[j] = i
	}
	return ti.idx
}

// typeIndex maps a pool's types on sale at one version to their index in Pool.Types.
type typeIndex struct {
	byName  map[string]int
	version int
	idx     []int
}

// fitMask says which of the pool's types can hold a pod of shape s: room in its allocatable
// and no requirement of the pod that the type's labels refuse. It errs on keeping a type.
func (t *tenon) fitMask(p *Pool, s int) []bool {
	k := [2]int{p.Index, s}
	if m, ok := t.fits[k]; ok {
		return m
	}
	sh := &t.env.Workload.Shapes[s]
	admits, alloc := t.admitMask(p, s), t.allocatable(p)
	m := make([]bool, len(p.Types))
	for i := range p.Types {
		m[i] = admits[i] && sh.Requests.Fits(&alloc[i])
	}
	t.fits[k] = m
	return m
}

// admitMask says which of the pool's types have labels that one of the shape's node-affinity
// alternatives allows. Shapes with the same alternatives share it: on a trace where every job
// has a shape of its own, they differ in their requests and mostly not in their constraints.
func (t *tenon) admitMask(p *Pool, s int) []bool {
	for len(t.altKeys) <= s {
		t.altKeys = append(t.altKeys, "")
	}
	sh := &t.env.Workload.Shapes[s]
	if t.altKeys[s] == "" {
		var key strings.Builder
		key.WriteByte('|') // never empty, so "" means not computed
		for _, a := range sh.alts {
			key.WriteString(a.String())
			key.WriteByte('|')
		}
		t.altKeys[s] = key.String()
	}
	k := admitKey{pool: p.Index, alts: t.altKeys[s]}
	if m, ok := t.admits[k]; ok {
		return m
	}
	m := make([]bool, len(p.Types))
	for i, it := range p.Types {
		for _, a := range sh.alts {
			if scheduling.Compatible(it.Requirements, a, anyUndefined) == nil {
				m[i] = true
				break
			}
		}
	}
	t.admits[k] = m
	return m
}

type admitKey struct {
	pool int
	alts string
}

// allocatable returns the allocatable of each of the pool's types (Pool.Types).
func (t *tenon) allocatable(p *Pool) []scheduling.Resources {
	for len(t.allocs) <= p.Index {
		t.allocs = append(t.allocs, nil)
	}
	if t.allocs[p.Index] == nil {
		a := make([]scheduling.Resources, len(p.Types))
		for i, it := range p.Types {
			a[i] = it.Allocatable()
		}
		t.allocs[p.Index] = a
	}
	return t.allocs[p.Index]
}

// anyUndefined treats every key a type leaves undefined as free.
func anyUndefined(string) bool { return true }

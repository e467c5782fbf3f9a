package sim

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// Cluster Autoscaler's defaults that the node-groups baseline follows.
const (
	CAScanInterval       = 10 * time.Second
	CAUtilizationTarget  = 0.5
	CAUnneededTime       = 10 * time.Minute
	CADelayAfterAdd      = 10 * time.Minute
	CAMaxEmptyBulkDelete = 10
	CANodeGroupsPerPool  = 3
)

// NodeGroupsPolicy is a Cluster-Autoscaler-style baseline: fixed node groups, each one instance
// type of one NodePool bought through one offering; scale-up by the least-waste expander;
// scale-down of nodes under 50% utilisation for 10 minutes. types names the groups' instance
// types; empty chooses, per NodePool, up to CANodeGroupsPerPool types for the workload (see
// chooseGroups).
func NodeGroupsPolicy(env *Env, types []string) (Policy, error) {
	k := newKsched(env, false)
	groups, err := chooseGroups(env, k, types)
	if err != nil {
		return Policy{}, err
	}
	g := &nodeGroups{k: k, groups: groups, unneeded: map[NodeID]time.Duration{}}
	var names []string
	for _, gr := range groups {
		fallback := ""
		if gr.fallback {
			fallback = ", when its spot group cannot"
		}
		names = append(names, fmt.Sprintf("%s/%s (%s, $%.3f/h%s)", env.Pools[gr.pool].Name, gr.kt.it.Name, gr.kt.launch.CapacityType, gr.kt.price, fallback))
	}
	return Policy{
		Name:         PolicyNodeGroup,
		Provisioner:  g,
		Disrupter:    g,
		ScanInterval: CAScanInterval,
		Assumptions: []string{
			"node-groups: node groups " + strings.Join(names, ", "),
			"node-groups: one group per GPU shape of the workload (GPU count and GPU models: the type its pods fill with the fewest GPUs stranded, cheapest per pod), and up to 3 per NodePool for the other shapes (the cheapest per pod for the shapes with the most pod-hours)",
			"node-groups: every 10 s, pending pods that fit no launching node are packed (first fit, largest first) onto new nodes of each group that can hold them; the least-waste expander picks one group, scaled up by as many nodes as it needs (its waste is the unused share of CPU plus that of memory, as Cluster Autoscaler's, plus that of GPUs, which Cluster Autoscaler leaves out: with it a 1-GPU pod is not put on an 8-GPU node that wastes less CPU); pods it cannot hold wait for the next scan",
			"node-groups: scale-down removes a node whose utilisation (GPU for GPU nodes, else the larger of CPU and memory, requests over allocatable) stays under 50% for 10 minutes while its pods fit elsewhere; none within 10 minutes of a scale-up; empty nodes in bulk (up to 10), others one at a time",
			"node-groups: a group buys the cheapest offering its type has within the NodePool's capacity types and zones (spot when allowed, reservations left out), so that purchase options do not decide the comparison; interruption notices are not handled: pods run until the instance is reclaimed",
		},
	}, nil
}

type group struct {
	pool int
	idx  int // in ksched.types[pool]
	kt   ktype
	// fallback is an on-demand twin of a spot group, scaled up only when no other group can
	// take the pods (as Cluster Autoscaler's priority expander is set up for spot groups
	// backed by on-demand ones).
	fallback bool
}

type nodeGroups struct {
	k        *ksched
	groups   []group
	lastAdd  time.Duration
	added    bool
	unneeded map[NodeID]time.Duration
	// failed remembers the nodes whose pods could not move, until room grows or they change.
	failed failures
	room   *roomIndex // reset each pass
}

// chooseGroups picks the groups' types: the named ones, or per pool, one for each GPU shape of
// the workload (GPU count and admitted types: the type those pods fill with the fewest GPUs
// stranded, cheapest per pod among those), and for the other shapes (by pod-hours, largest
// first) the type with the lowest price per pod when full of that shape, until
// CANodeGroupsPerPool types are chosen; shapes no chosen type holds get the cheapest type that
// does.
func chooseGroups(env *Env, k *ksched, named []string) ([]group, error) {
	var out []group
	add := func(pi, i int) {
		for _, g := range out {
			if g.pool == pi && g.idx == i {
				return
			}
		}
		out = append(out, group{pool: pi, idx: i, kt: k.types[pi][i]})
	}
	if len(named) > 0 {
		for _, name := range named {
			found := false
			for _, p := range env.Pools {
				for i, kt := range k.types[p.Index] {
					if kt.it.Name == name {
						add(p.Index, i)
						found = true
					}
				}
			}
			if !found {
				return nil, fmt.Errorf("node group type %q is not sold by any NodePool", name)
			}
		}
		return out, nil
	}
	w := env.Workload
	weight := make([]float64, len(w.Shapes))
	for _, j := range w.Jobs {
		d := j.Duration.Hours()
		if j.Duration == Forever {
			d = max(w.End-j.Submit, time.Hour).Hours()
		}
		weight[j.Shape] += float64(j.Replicas) * max(d, 1.0/3600)
	}
	shapes := make([]int, len(w.Shapes))
	for i := range shapes {
		shapes[i] = i
	}
	slices.SortStableFunc(shapes, func(a, b int) int { return cmp.Compare(weight[b], weight[a]) })
	for _, p := range env.Pools {
		// GPU pods get a group per GPU shape, as an operator of Cluster Autoscaler sizes them:
		// for each GPU count and set of admitted types, the type whose GPUs those pods fill
		// without stranding any (else the fewest stranded), cheapest per pod among those.
		gpuClasses := map[string]bool{}
		for _, s := range shapes {
			req := &w.Shapes[s].Requests
			if req[scheduling.NvidiaGPU] <= 0 {
				continue
			}
			adm := k.admits(p.Index, s)
			key := fmt.Sprint(req[scheduling.NvidiaGPU], adm)
			if gpuClasses[key] {
				continue
			}
			gpuClasses[key] = true
			best, bestStranded, bestCost := -1, int64(0), 0.0
			for i, kt := range k.types[p.Index] {
				n := fitCount(req, &kt.alloc)
				if !adm[i] || n == 0 {
					continue
				}
				stranded := kt.alloc[scheduling.NvidiaGPU] - int64(n)*req[scheduling.NvidiaGPU]
				c := kt.price / float64(n)
				if best < 0 || stranded < bestStranded || stranded == bestStranded && c < bestCost {
					best, bestStranded, bestCost = i, stranded, c
				}
			}
			if best >= 0 {
				add(p.Index, best)
			}
		}
		chosen := 0
		var uncovered []int
		for _, s := range shapes {
			if w.Shapes[s].Requests[scheduling.NvidiaGPU] > 0 {
				continue
			}
			best, bestCost := -1, 0.0
			adm := k.admits(p.Index, s)
			req := &w.Shapes[s].Requests
			for i, kt := range k.types[p.Index] {
				if !adm[i] {
					continue
				}
				if n := fitCount(req, &kt.alloc); n > 0 {
					if c := kt.price / float64(n); best < 0 || c < bestCost {
						best, bestCost = i, c
					}
				}
			}
			if best < 0 {
				continue
			}
			if chosen < CANodeGroupsPerPool {
				before := len(out)
				add(p.Index, best)
				chosen += len(out) - before
			} else {
				uncovered = append(uncovered, s)
			}
		}
		for _, s := range uncovered {
			req := &w.Shapes[s].Requests
			covered := false
			for _, g := range out {
				if g.pool == p.Index && k.admits(p.Index, s)[g.idx] && req.Fits(&g.kt.alloc) {
					covered = true
					break
				}
			}
			if covered {
				continue
			}
			adm := k.admits(p.Index, s)
			for i, kt := range k.types[p.Index] {
				if adm[i] && req.Fits(&kt.alloc) {
					add(p.Index, i)
					break
				}
			}
		}
	}
	return withOnDemandTwins(env, k, out), nil
}

// withOnDemandTwins adds, for each spot group of a pool that allows on-demand, its type bought
// on-demand (its cheapest on-demand offering) as a fallback group.
func withOnDemandTwins(env *Env, k *ksched, groups []group) []group {
	out := slices.Clip(groups)
	for _, g := range groups {
		p := env.Pools[g.pool]
		if g.kt.launch.CapacityType != apisv1.CapacityTypeSpot || !allows(p.Reqs, apisv1.CapacityTypeOnDemand) {
			continue
		}
		best := launchOffering(g.kt.it, k.queries[g.pool], false, false)
		if best < 0 {
			continue
		}
		kt := g.kt
		kt.launch, kt.price = g.kt.it.Offerings[best], g.kt.it.Offerings[best].Price
		kt.alloc = g.kt.it.Allocatable().Sub(daemonRequests(env, p, g.kt.it.NodeLabels(&kt.launch)))
		out = append(out, group{pool: g.pool, idx: g.idx, kt: kt, fallback: true})
	}
	return out
}

// fitCount is how many pods of req fit in alloc.
func fitCount(req, alloc *scheduling.Resources) int {
	n := -1
	for i := range req {
		if req[i] <= 0 {
			continue
		}
		k := int(alloc[i] / req[i])
		if n < 0 || k < n {
			n = k
		}
	}
	return max(n, 0)
}

// Provision is one scan: pods that fit launching nodes wait for them; for the rest, one group
// is scaled up, chosen by the least-waste expander.
func (g *nodeGroups) Provision(now time.Time, v *View, pending []PodID) Decision {
	pending = v.NotExpendable(pending) // Cluster Autoscaler scales up for none of them
	nodes := v.Nodes()
	var upcoming []*Node
	for _, n := range nodes {
		if n.State == NodeLaunching {
			upcoming = append(upcoming, n)
		}
	}
	var d Decision
	rest := pending
	if len(upcoming) > 0 {
		ts := targets(upcoming)
		rest = nil
		for _, id := range byCPUMemory(v, pending) {
			req, shape := v.Requests(id), int(v.Pod(id).Shape)
			placed := false
			for i := range ts {
				if req.Fits(&ts[i].free) && v.Compatible(shape, ts[i].n) {
					ts[i].free = ts[i].free.Sub(*req)
					d.Place = append(d.Place, Placement{Pod: id, Node: ts[i].n.ID})
					placed = true
					break
				}
			}
			if !placed {
				rest = append(rest, id)
			}
		}
	}
	if len(rest) == 0 {
		return d
	}
	// The groups first, their on-demand twins only when no group can take the pods.
	best, bestWaste := -1, 0.0
	var bestNodes [][]PodID
	for _, fallback := range [...]bool{false, true} {
		if best >= 0 {
			break
		}
		for gi, gr := range g.groups {
			if gr.fallback != fallback || !g.canBuy(v, gr) {
				continue
			}
			bins, waste := g.estimate(v, gr, rest)
			// Like Cluster Autoscaler, scale up by no more than the limits allow.
			bins = bins[:min(len(bins), g.allowed(v, gr))]
			if len(bins) > 0 && (best < 0 || waste < bestWaste || waste == bestWaste && len(bins) < len(bestNodes)) {
				best, bestWaste, bestNodes = gi, waste, bins
			}
		}
	}
	if best < 0 {
		return d
	}
	gr := g.groups[best]
	// A group is an Auto Scaling group of one type and purchase option across the pool's
	// zones: a zone without capacity sends the launch to another.
	opts := g.k.env.Pools[gr.pool].Solver.Requirements.Add(scheduling.In(apisv1.LabelInstanceType, gr.kt.it.Name)).Add(scheduling.In(apisv1.CapacityTypeLabelKey, gr.kt.launch.CapacityType))
	for _, pods := range bestNodes {
		d.Launch = append(d.Launch, Launch{Pool: gr.pool, Type: gr.kt.it, Offering: gr.kt.launch, Options: opts, Pods: pods})
	}
	g.lastAdd, g.added = v.Now(), true
	return d
}

// canBuy reports whether the group's type can be bought now through its purchase option in
// some zone. Without capacity pools, finite spot or reservations it always can; with them, a
// group with no capacity left is passed over, as Cluster Autoscaler backs off a group whose
// scale-up failed (here without the failed attempt).
func (g *nodeGroups) canBuy(v *View, gr group) bool {
	if !v.r.dynamic {
		return true
	}
	it := g.k.current(v, gr.pool)[gr.kt.it.Name]
	if it == nil {
		return false
	}
	q := g.k.queries[gr.pool]
	for i := range it.Offerings {
		if o := &it.Offerings[i]; o.Usable() && o.CapacityType == gr.kt.launch.CapacityType && q.OfferingMatches(o) {
			return true
		}
	}
	return false
}

// estimate packs the pods the group can hold onto new nodes of its type, first fit with the
// largest pods first (Cluster Autoscaler's binpacking estimator), and returns the nodes and
// the least-waste score: the unused share of CPU plus the unused share of memory.
func (g *nodeGroups) estimate(v *View, gr group, pods []PodID) ([][]PodID, float64) {
	var bins [][]PodID
	var free []scheduling.Resources
	var used scheduling.Resources
	for _, id := range byCPUMemory(v, pods) {
		req, shape := v.Requests(id), int(v.Pod(id).Shape)
		if !g.k.admits(gr.pool, shape)[gr.idx] || !req.Fits(&gr.kt.alloc) {
			continue
		}
		placed := false
		for i := range free {
			if req.Fits(&free[i]) {
				free[i] = free[i].Sub(*req)
				bins[i] = append(bins[i], id)
				placed = true
				break
			}
		}
		if !placed {
			free = append(free, gr.kt.alloc.Sub(*req))
			bins = append(bins, []PodID{id})
		}
		used = used.Add(*req)
	}
	if len(bins) == 0 {
		return nil, 0
	}
	total := gr.kt.alloc.Scale(int64(len(bins)))
	waste := 0.0
	for _, i := range [...]int{scheduling.CPU, scheduling.Memory, scheduling.NvidiaGPU} {
		if total[i] > 0 {
			waste += float64(total[i]-used[i]) / float64(total[i])
		}
	}
	return bins, waste
}

// allowed is how many more nodes of a group its NodePool's limits allow.
func (g *nodeGroups) allowed(v *View, gr group) int {
	np := g.k.env.Pools[gr.pool].Solver
	used, nodes := v.Usage(gr.pool)
	n := math.MaxInt
	if np.NodeLimit >= 0 {
		n = max(np.NodeLimit-nodes, 0)
	}
	for i, lim := range np.HasLimit {
		if c := gr.kt.it.Capacity[i]; lim && c > 0 {
			n = min(n, int(max(np.Limits[i]-used[i], 0)/c))
		}
	}
	return n
}

// Pass is Cluster Autoscaler's scale-down: nodes under the utilisation target whose pods fit
// elsewhere become unneeded; those unneeded for CAUnneededTime go.
func (g *nodeGroups) Pass(now time.Time, v *View) ([]Command, time.Time) {
	t := v.Now()
	if g.added && t < g.lastAdd+CADelayAfterAdd {
		return nil, now.Add(g.lastAdd + CADelayAfterAdd - t)
	}
	nodes := v.Nodes()
	ready := make([]*Node, 0, len(nodes))
	for _, n := range nodes {
		if n.State == NodeReady && !n.Disrupting {
			ready = append(ready, n)
		}
	}
	// Nodes that are unneeded now, in launch order; each is checked with the ones before it
	// gone (their pods placed on what is left).
	ts := targets(ready)
	at := map[NodeID]int{}
	for i := range ts {
		at[ts[i].n.ID] = i
	}
	removed := map[NodeID]bool{}
	still := map[NodeID]bool{}
	var ri *roomIndex
	for _, n := range ready {
		if utilisation(n) >= CAUtilizationTarget {
			continue
		}
		if g.failed.has(v, n) {
			continue
		}
		if ri == nil {
			ri = g.room.reset(v, ready)
			g.room = ri
		}
		if del, _ := ri.movable([]*Node{n}, 0, false, false, nil, nil); !del || !g.movable(v, n, ts, removed) {
			g.failed.set(v, n)
			continue
		}
		removed[n.ID] = true
		still[n.ID] = true
		if _, ok := g.unneeded[n.ID]; !ok {
			g.unneeded[n.ID] = t
		}
	}
	for id := range g.unneeded {
		if !still[id] {
			delete(g.unneeded, id)
		}
	}
	wake := noWake
	var empty []NodeID
	var busy *Node
	for _, n := range ready {
		since, ok := g.unneeded[n.ID]
		if !ok {
			continue
		}
		if since+CAUnneededTime > t {
			wake.at(since + CAUnneededTime)
			continue
		}
		if n.Empty() {
			if len(empty) < CAMaxEmptyBulkDelete {
				empty = append(empty, n.ID)
			}
		} else if busy == nil {
			busy = n
		}
	}
	var cmds []Command
	if len(empty) > 0 {
		c := Command{Reason: ReasonScaleDown, Nodes: empty}
		for _, id := range empty {
			c.Savings += v.Node(id).Price
			delete(g.unneeded, id)
		}
		cmds = append(cmds, c)
	} else if busy != nil {
		cmds = append(cmds, Command{Reason: ReasonScaleDown, Nodes: []NodeID{busy.ID}, Savings: busy.Price})
		delete(g.unneeded, busy.ID)
	}
	return cmds, wake.time(now, t)
}

// utilisation is Cluster Autoscaler's: for nodes with GPUs the GPU share requested, else the
// larger of the CPU and memory shares (DaemonSets included).
func utilisation(n *Node) float64 {
	total := n.Alloc.Add(n.daemons)
	used := n.Used.Add(n.daemons)
	if g := total[scheduling.NvidiaGPU]; g > 0 {
		return float64(used[scheduling.NvidiaGPU]) / float64(g)
	}
	u := 0.0
	for _, i := range [...]int{scheduling.CPU, scheduling.Memory} {
		if total[i] > 0 {
			u = max(u, float64(used[i])/float64(total[i]))
		}
	}
	return u
}

// movable reports whether the node's pods fit on the other ready nodes not removed, first fit;
// if so it takes their room (so that later candidates see it gone).
func (g *nodeGroups) movable(v *View, n *Node, ts []target, removed map[NodeID]bool) bool {
	type undo struct {
		i    int
		free scheduling.Resources
	}
	var log []undo
	for _, id := range byCPUMemory(v, n.Pods) {
		req, shape := v.Requests(id), int(v.Pod(id).Shape)
		placed := false
		for i := range ts {
			t := &ts[i]
			if t.n.ID == n.ID || removed[t.n.ID] {
				continue
			}
			if req.Fits(&t.free) && v.Compatible(shape, t.n) {
				log = append(log, undo{i, t.free})
				t.free = t.free.Sub(*req)
				placed = true
				break
			}
		}
		if !placed {
			for k := len(log) - 1; k >= 0; k-- {
				ts[log[k].i].free = log[k].free
			}
			return false
		}
	}
	return true
}

package sim

import (
	"cmp"
	"slices"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// KarpenterMaxLaunchTypes is how many instance types (the cheapest) a karpenter-like claim
// offers the cloud at launch, as Karpenter's AWS provider does.
const KarpenterMaxLaunchTypes = 60

// ktype is an instance type of a pool as the karpenter-like scheduler sees it.
type ktype struct {
	it    *catalog.InstanceType
	alloc scheduling.Resources // allocatable less the DaemonSets' requests
	// launch is the offering Karpenter's launch would pick (reserved, else spot when the pool
	// allows it, else on-demand; the cheapest of its kind), price its price.
	launch catalog.Offering
	price  float64
	node   scheduling.Requirements // the pool's node of this type (nodeRequirements)
}

// ksched is Karpenter's provisioning scheduler as documented: pods by CPU then memory,
// largest first; each goes to the first existing node with room, else to the open claim
// with the fewest pods that still has an instance type holding it, else to a new claim of the
// heaviest NodePool that can take it; a claim keeps every type that still holds its pods and
// launches as the cheapest.
type ksched struct {
	env *Env
	// spotToSpot is the SpotToSpotConsolidation feature gate.
	spotToSpot bool
	types      [][]ktype         // per pool, cheapest first
	ok         map[[2]int][]bool // per pool and shape: the types whose labels admit the shape
	order      []int             // pools by weight (highest first), then name
	// reserved, allowSpot and queries say per pool which offerings a launch may take.
	reserved  bool
	allowSpot []bool
	queries   []*catalog.Query
	// now caches, per pool, the cloud's current types by name and the view's version of them.
	now map[int]currentTypes
}

type currentTypes struct {
	version int
	byName  map[string]*catalog.InstanceType
}

// kclaim is a claim the scheduler opened.
type kclaim struct {
	pool  int
	types []int32 // indices into types[pool] that still hold everything, cheapest first
	used  scheduling.Resources
	pods  []PodID
}

// newKsched ranks every pool's types; with reserved false, reserved offerings are left out (a
// node group buys through one offering it can always grow in).
func newKsched(env *Env, reserved bool) *ksched {
	k := &ksched{env: env, types: make([][]ktype, len(env.Pools)), ok: map[[2]int][]bool{}, reserved: reserved,
		allowSpot: make([]bool, len(env.Pools)), queries: make([]*catalog.Query, len(env.Pools)), now: map[int]currentTypes{}}
	for _, p := range env.Pools {
		k.order = append(k.order, p.Index)
		allowSpot := allows(p.Reqs, apisv1.CapacityTypeSpot)
		q := catalog.NewQuery(p.Solver.Requirements)
		k.allowSpot[p.Index], k.queries[p.Index] = allowSpot, q
		for _, it := range p.Types {
			b := launchOffering(it, q, reserved, allowSpot)
			if b < 0 {
				continue
			}
			kt := ktype{it: it, launch: it.Offerings[b], price: it.Offerings[b].Price, node: nodeRequirements(p, it)}
			kt.alloc = it.Allocatable().Sub(daemonRequests(env, p, it.NodeLabels(&kt.launch)))
			k.types[p.Index] = append(k.types[p.Index], kt)
		}
		slices.SortStableFunc(k.types[p.Index], func(a, b ktype) int {
			return cmp.Or(cmp.Compare(a.price, b.price), cmp.Compare(a.it.Name, b.it.Name))
		})
	}
	slices.SortStableFunc(k.order, func(a, b int) int {
		pa, pb := env.Pools[a], env.Pools[b]
		return cmp.Or(cmp.Compare(pb.Solver.Weight, pa.Solver.Weight), cmp.Compare(pa.Name, pb.Name))
	})
	return k
}

func allows(reqs scheduling.Requirements, ct string) bool {
	r, ok := reqs.Get(apisv1.CapacityTypeLabelKey)
	return !ok || r.Has(ct)
}

// admits returns which of the pool's types admit pods of a shape (labels and taints).
func (k *ksched) admits(pool, shape int) []bool {
	key := [2]int{pool, shape}
	if m, ok := k.ok[key]; ok {
		return m
	}
	p := k.env.Pools[pool]
	sh := &k.env.Workload.Shapes[shape]
	m := make([]bool, len(k.types[pool]))
	if scheduling.UntoleratedTaint(sh.tolerations, p.Taints) == nil {
		for i, kt := range k.types[pool] {
			for _, a := range sh.alts {
				if scheduling.Compatible(kt.node, a, scheduling.AllowUndefinedWellKnown) == nil {
					m[i] = true
					break
				}
			}
		}
	}
	k.ok[key] = m
	return m
}

// byCPUMemory orders pods as Karpenter's queue does: CPU, then memory, largest first.
func byCPUMemory(v *View, pods []PodID) []PodID {
	out := slices.Clone(pods)
	slices.SortStableFunc(out, func(a, b PodID) int {
		ra, rb := v.Requests(a), v.Requests(b)
		return cmp.Or(cmp.Compare(rb[scheduling.CPU], ra[scheduling.CPU]), cmp.Compare(rb[scheduling.Memory], ra[scheduling.Memory]))
	})
	return out
}

// target is a node with room, as a scheduling simulation tracks it.
type target struct {
	n    *Node
	free scheduling.Resources
}

// targets returns the nodes not disrupting, with their free room.
func targets(nodes []*Node) []target {
	out := make([]target, 0, len(nodes))
	for _, n := range nodes {
		if n.Disrupting {
			continue
		}
		out = append(out, target{n: n, free: n.Free()})
	}
	return out
}

// appendTargets appends the nodes not disrupting that have some room.
func appendTargets(out []target, nodes []*Node) []target {
	for _, n := range nodes {
		if free := n.Free(); !n.Disrupting && free[scheduling.Pods] > 0 {
			out = append(out, target{n: n, free: free})
		}
	}
	return out
}

// schedule places pods on the targets and on new claims.
func (k *ksched) schedule(v *View, pods []PodID, ts []target) (place []Placement, claims []*kclaim, unsched []PodID) {
	for _, id := range byCPUMemory(v, pods) {
		req := v.Requests(id)
		shape := int(v.Pod(id).Shape)
		placed := false
		for i := range ts {
			t := &ts[i]
			if req.Fits(&t.free) && v.Compatible(shape, t.n) {
				t.free = t.free.Sub(*req)
				place = append(place, Placement{Pod: id, Node: t.n.ID})
				placed = true
				break
			}
		}
		if placed {
			continue
		}
		slices.SortStableFunc(claims, func(a, b *kclaim) int { return cmp.Compare(len(a.pods), len(b.pods)) })
		for _, c := range claims {
			if k.add(c, id, req, shape) {
				placed = true
				break
			}
		}
		if placed {
			continue
		}
		for _, pi := range k.order {
			c := &kclaim{pool: pi}
			adm := k.admits(pi, shape)
			for i, kt := range k.types[pi] {
				if adm[i] && req.Fits(&kt.alloc) {
					c.types = append(c.types, int32(i))
				}
			}
			if len(c.types) > 0 {
				c.used = *req
				c.pods = []PodID{id}
				claims = append(claims, c)
				placed = true
				break
			}
		}
		if !placed {
			unsched = append(unsched, id)
		}
	}
	return place, claims, unsched
}

// add puts a pod on a claim if some of its types still hold everything.
func (k *ksched) add(c *kclaim, id PodID, req *scheduling.Resources, shape int) bool {
	adm := k.admits(c.pool, shape)
	need := c.used.Add(*req)
	kept := make([]int32, 0, len(c.types))
	for _, i := range c.types {
		if adm[i] && need.Fits(&k.types[c.pool][i].alloc) {
			kept = append(kept, i)
		}
	}
	if len(kept) == 0 {
		return false
	}
	c.types, c.used = kept, need
	c.pods = append(c.pods, id)
	return true
}

// offer returns the offering type i of a pool launches as now. When what the cloud sells does
// not change (no capacity pools, finite spot or reservations), that is the offering chosen at
// the start (reserved, else spot when allowed, else on-demand; the cheapest of its kind).
// Otherwise it is chosen the same way among the offerings the cloud can sell now, as
// Karpenter's launch skips offerings that ran out of capacity: a reserved offering while its
// reservation has room, spot in a zone whose pool is not full, else on-demand.
func (k *ksched) offer(v *View, pool, i int) (catalog.Offering, float64, bool) {
	kt := &k.types[pool][i]
	if !v.r.dynamic {
		return kt.launch, kt.price, true
	}
	it := k.current(v, pool)[kt.it.Name]
	if it == nil {
		return catalog.Offering{}, 0, false
	}
	if b := launchOffering(it, k.queries[pool], k.reserved, k.allowSpot[pool]); b >= 0 {
		return it.Offerings[b], it.Offerings[b].Price, true
	}
	return catalog.Offering{}, 0, false
}

// launchOffering returns the index of the offering of it Karpenter's launch takes among the
// usable ones q allows: the cheapest reserved one (when reserved is set), else the cheapest
// spot one (when allowSpot is), else the cheapest on-demand one; -1 when there is none.
func launchOffering(it *catalog.InstanceType, q *catalog.Query, reserved, allowSpot bool) int {
	best := [3]int{-1, -1, -1} // reserved, spot, on-demand
	for i := range it.Offerings {
		o := &it.Offerings[i]
		if !o.Usable() || !q.OfferingMatches(o) {
			continue
		}
		slot := 2
		switch o.CapacityType {
		case apisv1.CapacityTypeReserved:
			if !reserved {
				continue
			}
			slot = 0
		case apisv1.CapacityTypeSpot:
			if !allowSpot {
				continue
			}
			slot = 1
		}
		if best[slot] < 0 || o.Price < it.Offerings[best[slot]].Price {
			best[slot] = i
		}
	}
	for _, b := range best {
		if b >= 0 {
			return b
		}
	}
	return -1
}

// current returns the pool's types as the cloud sells them now, by name.
func (k *ksched) current(v *View, pool int) map[string]*catalog.InstanceType {
	types, version := v.instanceTypes(pool)
	if c, ok := k.now[pool]; ok && c.version == version && version != 0 {
		return c.byName
	}
	byName := make(map[string]*catalog.InstanceType, len(types))
	for _, it := range types {
		byName[it.Name] = it
	}
	k.now[pool] = currentTypes{version: version, byName: byName}
	return byName
}

// cheapest returns the claim's type that launches cheapest now, with its offering.
func (k *ksched) cheapest(v *View, c *kclaim) (int, catalog.Offering, float64) {
	best, bestOffer, bestPrice := -1, catalog.Offering{}, 0.0
	for _, i := range c.types {
		// Types are in order of their best price; none after can beat a type at that price.
		if best >= 0 && k.types[c.pool][i].price >= bestPrice {
			break
		}
		if o, p, ok := k.offer(v, c.pool, int(i)); ok && (best < 0 || p < bestPrice) {
			best, bestOffer, bestPrice = int(i), o, p
		}
	}
	return best, bestOffer, bestPrice
}

// price is what the claim launches at now: its cheapest type (+Inf when none can launch).
func (k *ksched) price(v *View, c *kclaim) float64 {
	if i, _, p := k.cheapest(v, c); i >= 0 {
		return p
	}
	return inf
}

// launch turns a claim into a Launch at its cheapest type, with its cheapest types (at most
// KarpenterMaxLaunchTypes) as the options the cloud may fall back on.
func (k *ksched) launch(v *View, c *kclaim) (Launch, bool) {
	i, o, _ := k.cheapest(v, c)
	if i < 0 {
		return Launch{}, false
	}
	names := make([]string, 0, min(len(c.types), KarpenterMaxLaunchTypes))
	for _, t := range c.types[:min(len(c.types), KarpenterMaxLaunchTypes)] {
		names = append(names, k.types[c.pool][t].it.Name)
	}
	opts := k.env.Pools[c.pool].Solver.Requirements.Add(scheduling.In(apisv1.LabelInstanceType, names...))
	return Launch{Pool: c.pool, Type: k.types[c.pool][i].it, Offering: o, Options: opts, Pods: c.pods}, true
}

// cheaperThan counts the claim's types priced below price.
func (k *ksched) cheaperThan(c *kclaim, price float64) int {
	n := 0
	for _, i := range c.types {
		if k.types[c.pool][i].price < price {
			n++
		}
	}
	return n
}

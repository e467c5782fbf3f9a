package solver

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// Prepared is a snapshot compiled once for many solves: the pools with their instance types and
// DaemonSet overhead, the zones, the existing nodes with their free room, and (as solves ask for
// them) per-node counts of running pods for topology groups. The disruption loop prepares a
// snapshot once per pass and simulates every candidate on it; Solve is Prepare followed by one
// solve.
//
// A Prepared is not safe for concurrent use: solves run one after the other.
type Prepared struct {
	base         *solve
	existingKeys map[string]bool // label keys the selectors of running pods look at
	anti         []existingAnti  // required anti-affinity terms of running pods
	memos        map[string]*groupMemo
	guide        *guideBox     // built on the first guided solve; shared with WithNodes' Prepareds
	floor        [2]*floorRoom // built on the first CapacityFloor (all nodes, initialized ones)
}

// existingAnti is a required anti-affinity term of a running pod, on the target at index base.
type existingAnti struct {
	base  int
	id    string
	key   string
	ns    []string
	nsSel labels.Selector
	sel   labels.Selector
}

// groupMemo counts, per prepared target, the running pods a group selects and those whose
// required anti-affinity term the group is.
type groupMemo struct {
	count  []int32
	owners []int32
}

// Prepare compiles a snapshot. The snapshot's Pods are not compiled: Solve takes the pods.
func Prepare(snap *Snapshot) (*Prepared, error) {
	b := &solve{snap: snap, zoneIndex: map[string]int{}, typeKeys: map[string]bool{}, reservationIndex: map[string]int{},
		cache: newCompileCache(nil), units: map[scheduling.Resources]*holdingPrices{}}
	if err := b.indexZones(); err != nil {
		return nil, err
	}
	b.compileDaemons()
	b.compilePools()
	b.reservationsInit = slices.Clone(b.reservations)
	p := prepareNodes(b)
	p.guide = &guideBox{}
	return p, nil
}

// WithNodes prepares snap, which differs from the prepared snapshot only in its nodes (the
// same NodePools, DaemonSets and namespaces): the compiled pools and DaemonSets are reused and
// only the nodes are compiled. The disruption loop uses it after each command it commits. A
// node in a zone the prepared snapshot did not know makes it prepare from scratch.
func (p *Prepared) WithNodes(snap *Snapshot) (*Prepared, error) {
	b := p.base
	for i := range snap.Nodes {
		if !b.knowsZone(&snap.Nodes[i]) {
			return Prepare(snap)
		}
	}
	np := prepareNodes(b.withSnapshot(snap, newCompileCache(b.cache)))
	np.guide = p.guide // the guide's types are the pools' alone
	return np, nil
}

// knowsZone reports whether the node's zone (and its zone ID) is one the compiled pools know.
func (s *solve) knowsZone(n *Node) bool {
	z := n.Labels[apisv1.LabelZone]
	if z == "" {
		return true
	}
	zi, ok := s.zoneIndex[z]
	return ok && (s.zoneIDs[zi] != "" || n.Labels[apisv1.LabelTopologyZoneID] == "")
}

// withSnapshot is a preparation of snap sharing s's compiled pools and DaemonSets.
func (s *solve) withSnapshot(snap *Snapshot, cache *compileCache) *solve {
	return &solve{
		snap: snap, zones: s.zones, zoneIDs: s.zoneIDs, zoneIndex: s.zoneIndex, typeKeys: s.typeKeys,
		daemons: s.daemons, pools: s.pools, reservationIndex: s.reservationIndex, reservationsInit: s.reservationsInit,
		reservationIDs: s.reservationIDs,
		cache:          cache, units: s.units,
	}
}

// SharesPools reports whether p and q use the same compiled pools: one was prepared from the
// other by WithNodes (or both from a third).
func (p *Prepared) SharesPools(q *Prepared) bool {
	if p == nil || q == nil || len(p.base.pools) == 0 || len(p.base.pools) != len(q.base.pools) {
		return false
	}
	return p.base.pools[0] == q.base.pools[0]
}

// prepareNodes compiles the nodes of a solve whose pools and DaemonSets are compiled.
func prepareNodes(b *solve) *Prepared {
	b.compileTargets()
	b.cache.prev = nil // one generation back is enough
	p := &Prepared{base: b, memos: map[string]*groupMemo{}}
	n := 0
	for _, t := range b.targets {
		n += len(t.node.Pods)
	}
	running := make([]*corev1.Pod, 0, n)
	for _, t := range b.targets {
		running = append(running, t.node.Pods...)
		p.anti = appendAnti(p.anti, t)
	}
	p.existingKeys = selectorKeys(running, nil)
	return p
}

// appendAnti appends the required anti-affinity terms of the target's pods.
func appendAnti(anti []existingAnti, t *target) []existingAnti {
	for _, pod := range t.node.Pods {
		aff := pod.Spec.Affinity
		if aff == nil || aff.PodAntiAffinity == nil {
			continue
		}
		for i := range aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			term := &aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[i]
			sel, err := affinitySelector(term, pod.Labels)
			if err != nil || term.TopologyKey == "" {
				continue
			}
			ns, nsSel, err := termNamespaces(term, pod.Namespace)
			if err != nil {
				continue
			}
			anti = append(anti, existingAnti{base: t.base, id: groupID(kindAnti, term.TopologyKey, ns, nsSel, sel), key: term.TopologyKey, ns: ns, nsSel: nsSel, sel: sel})
		}
	}
	return anti
}

// Solve places pods on the prepared snapshot, with opts.ExcludeNodes treated as gone.
//
// Unless opts.NoGuide, a second solve places the packable pods by the LP's patterns (guide.go),
// and the cheaper plan wins: the one that leaves fewer pods unschedulable, then the one with the
// lower price, first-fit on a tie. Pods that split into independent parts (components.go) are
// solved part by part, each part choosing its own plan, and the parts' plans are joined. Pods of
// gangs get capacity for their minCount together or not at all (gang.go).
func (p *Prepared) Solve(pods []*corev1.Pod, opts Options) (*Plan, error) {
	if gangs := p.gangsOf(pods, opts); gangs != nil {
		return p.solveGangs(pods, opts, gangs)
	}
	return p.solvePods(pods, opts)
}

// solvePods is Solve without the gang layer (gang.go).
func (p *Prepared) solvePods(pods []*corev1.Pod, opts Options) (*Plan, error) {
	// Every attempt of the solve places on the same nodes: they are filtered once.
	targets := p.targetsFor(opts.ExcludeNodes)
	s := p.instantiateOn(pods, opts, targets)
	if !opts.NoGuide {
		if parts := s.components(); parts != nil {
			plans := make([]*Plan, 0, len(parts))
			base := 0
			for _, part := range parts {
				rows := guideRows{
					coarse: max(minPartGuideRows, (maxGuideClasses*len(part)+len(pods)-1)/len(pods)),
					fine:   max(minPartGuideRows, (maxFineGuideClasses*len(part)+len(pods)-1)/len(pods)),
				}
				w := p.best(p.instantiateOn(part, opts, targets), part, opts, base, rows)
				base += len(w.claims)
				plans = append(plans, w.plan())
			}
			return p.balanced(mergePlans(plans), opts), nil
		}
	}
	return p.balanced(p.best(s, pods, opts, 0, guideRows{}).plan(), opts), nil
}

// guideRows are the rows a solve's guide LP may have on its first attempt and on a finer grid
// (zero: maxGuideClasses and maxFineGuideClasses); a part of a split solve takes its share of
// each, so that the parts' LPs together are no larger than the whole's.
type guideRows struct{ coarse, fine int }

// balanced pins the claims of zone-balanced pools to zones (balanceZones).
func (p *Prepared) balanced(plan *Plan, opts Options) *Plan {
	var excluded map[string]bool
	for _, n := range opts.ExcludeNodes {
		if excluded == nil {
			excluded = map[string]bool{}
		}
		excluded[n] = true
	}
	balanceZones(plan, p.base.snap, excluded)
	return plan
}

// best runs s, a fresh solve of pods, and unless opts.NoGuide guided solves of the same pods
// (a first attempt on a coarse grid, then a finer one if the budget allows; budget.go), and
// returns the best of them: the one that leaves fewer pods unschedulable, then the one with the
// lower price, the earlier on a tie. Its claims' hostnames are numbered from hostBase; the
// guided solves place on the nodes s does.
func (p *Prepared) best(s *solve, pods []*corev1.Pod, opts Options, hostBase int, rows guideRows) *solve {
	s.hostBase = hostBase
	s.run()
	// A plan that buys nothing and leaves nothing unscheduled cannot be improved on; a disruption
	// simulation whose pods fit on the other nodes is that case, and the common one.
	if opts.NoGuide || len(s.out) == 0 && len(s.unschedulable) == 0 || !s.anyPackable() {
		return s
	}
	if opts.Unguided != nil && !slices.ContainsFunc(s.classes, func(c *class) bool { return !c.packable() }) && opts.Unguided(s.placements) {
		return s
	}
	budget, place := s.guideBudget()
	better := func(g, than *solve) bool {
		return len(g.unschedulable) < len(than.unschedulable) ||
			len(g.unschedulable) == len(than.unschedulable) && g.price() < than.price()-1e-9
	}
	var spent, work int64
	var stats GuideStats
	stopped, attempts, finer := false, 0, 0
	winner := s
	for attempt := 1; attempt <= 2; attempt++ {
		g := p.instantiateOn(pods, opts, s.targets)
		g.hostBase, g.guided = hostBase, true
		g.guideRows, g.guideFineRows = rows.coarse, rows.fine
		if attempt == 2 {
			g.guideRows = finer // the finest grid with at most that many rows
		}
		// The first attempt's LP may spend the whole budget (its rows are few; it is the floor
		// the later attempt must beat); a later one what is left after the placements.
		g.guideLP = budget
		if attempt > 1 && budget > 0 {
			g.guideLP = max(budget-spent-place, 1)
		}
		g.run()
		spent += place + g.guideStats.Work
		work += g.guideStats.Work
		stopped = stopped || g.guideStats.Stopped
		attempts = attempt
		g.guideStats.Price = g.price()
		if better(g, winner) {
			g.guideStats.Won = true
			winner = g
		}
		if attempt == 1 || g.guideStats.Won {
			stats = g.guideStats
		}
		if attempt == 2 || stopped { // a budget or deadline already spent leaves no room for more
			break
		}
		if finer = finerRows(g.guideStats, g.guideFiner, budget, spent, place); finer == 0 {
			break
		}
	}
	stats.Work, stats.Budget, stats.Stopped, stats.Attempts = work, budget, stopped, attempts
	winner.guideStats = stats
	return winner
}

// instantiate starts a solve of pods on the prepared snapshot: fresh copies of everything a
// solve changes (pool limits, reservation capacity, node room), shared compiled data otherwise.
func (p *Prepared) instantiate(pods []*corev1.Pod, opts Options) *solve {
	return p.instantiateOn(pods, opts, p.targetsFor(opts.ExcludeNodes))
}

// targetsFor returns the prepared nodes a solve may place on: all of them but those excluded.
// Without exclusions the prepared slice itself is returned; a solve never changes it.
func (p *Prepared) targetsFor(exclude []string) []*target {
	all := p.base.targets
	if len(exclude) == 0 {
		return all
	}
	excluded := make(map[string]bool, len(exclude))
	for _, n := range exclude {
		excluded[n] = true
	}
	out := make([]*target, 0, len(all))
	for _, t := range all {
		if !excluded[t.node.Name] {
			out = append(out, t)
		}
	}
	return out
}

// instantiateOn is instantiate on the given targets (targetsFor of opts.ExcludeNodes).
func (p *Prepared) instantiateOn(pods []*corev1.Pod, opts Options, targets []*target) *solve {
	if opts.MaxInstanceTypes <= 0 {
		opts.MaxInstanceTypes = MaxInstanceTypes
	}
	if opts.HostnamePrefix == "" {
		opts.HostnamePrefix = "tenon-claim-"
	}
	b := p.base
	s := &solve{
		snap: b.snap, opts: opts, prep: p, pending: pods,
		zones: b.zones, zoneIDs: b.zoneIDs, zoneIndex: b.zoneIndex, typeKeys: b.typeKeys,
		daemons: b.daemons, reservationIndex: b.reservationIndex, reservationIDs: b.reservationIDs,
		reservations: slices.Clone(b.reservationsInit), reservationsInit: b.reservationsInit,
	}
	for i, id := range b.reservationIDs {
		if n := opts.ReservationsTaken[id]; n > 0 {
			s.reservations[i] = max(0, s.reservations[i]-n)
		}
	}
	for _, bp := range b.pools {
		cp := *bp
		if t, ok := opts.PoolsTaken[cp.np.Name]; ok {
			cp.take(nil, &t.Capacity)
			if cp.nodesLeft > 0 {
				cp.nodesLeft = max(0, cp.nodesLeft-t.Nodes)
			}
		}
		s.pools = append(s.pools, &cp)
	}
	// The targets and their room are shared; a solve copies the room of those it places on.
	s.nHosts = len(b.targets)
	s.targets = targets
	// A snapshot with pods it cannot compile (a class error) still solves: those pods come back
	// unschedulable with the error as their reason.
	_ = s.setupPending()
	return s
}

// memo returns the running-pod counts of group g, computing them on first use.
func (p *Prepared) memo(t *topology, g *group) *groupMemo {
	if m, ok := p.memos[g.id]; ok {
		return m
	}
	n := len(p.base.targets)
	m := &groupMemo{count: make([]int32, n), owners: make([]int32, n)}
	for _, bt := range p.base.targets {
		for _, pod := range bt.node.Pods {
			if g.selects(t, pod.Namespace, pod.Labels) {
				m.count[bt.base]++
			}
		}
	}
	for _, a := range p.anti {
		if a.id == g.id {
			m.owners[a.base]++
		}
	}
	p.memos[g.id] = m
	return m
}

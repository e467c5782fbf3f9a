package solver

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// Gangs. A PodGroup with a gang policy (scheduling.k8s.io PodGroup, spec.schedulingPolicy.gang)
// is admitted by kube-scheduler only when minCount of its pods can run at once; capacity bought
// for part of it waits, at full price, for the rest. So the solver gives a gang capacity for
// at least minCount of its pods (those already running count) or for none of them, and when the
// group has a topology constraint it puts every pod of the gang in one domain of the key, the
// domain whose capacity costs least (running members fix it).
//
// It is a layer around the solve (solveGangs): each gang's domain is chosen by solving its pods
// alone, pinned to each domain in turn (a node selector on a copy of each pod); then all pending
// pods are solved together with the gangs pinned, and a gang that did not get its minCount there
// (other pods took the room, or a limit) is taken out, its pods unschedulable with the reason of
// a member that could not be placed, and the rest solved again.

// Gang is a PodGroup with a gang policy.
type Gang struct {
	Namespace, Name string
	// MinCount is how many of its pods must be able to run at once (spec.schedulingPolicy.gang.
	// minCount).
	MinCount int
	// TopologyKey, when set, is the node label whose value every pod of the gang must share
	// (spec.schedulingConstraints.topology[0].key).
	TopologyKey string
}

// ReasonGang: the pod belongs to a gang that cannot get capacity for minCount of its pods at
// once, in one domain of its topology key when it has one (Detail says why).
const ReasonGang ReasonKind = "Gang"

// GangOf returns the namespace/name of the PodGroup a pod names in spec.schedulingGroup, or "".
func GangOf(pod *corev1.Pod) string {
	if g := pod.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil && *g.PodGroupName != "" {
		return pod.Namespace + "/" + *g.PodGroupName
	}
	return ""
}

// gangRun is a gang as one solve sees it.
type gangRun struct {
	Gang
	key     string        // namespace/name
	pending []*corev1.Pod // its pending pods, in the order of the pods solved
	running int           // its pods on nodes that stay
	domain  string        // the domain its running pods fix ("" : none, or no key)
	needed  int           // pods that must get capacity now: MinCount − running
	failed  *Reason       // set once the gang cannot be given capacity
	// chosen says the domain was chosen by the solver (chooseDomain), not fixed by running
	// members: another domain may serve the gang when others take this one's room.
	chosen bool
	// least is leastNeed's answer, once asked.
	least *scheduling.Resources
}

// gangsOf groups the pending pods that name a gang of the snapshot, and counts the gang's pods
// already running on nodes that stay. Pods naming a PodGroup the snapshot has no gang for (a
// basic policy, or a group the driver did not find) are ordinary pods.
func (p *Prepared) gangsOf(pods []*corev1.Pod, opts Options) []*gangRun {
	snap := p.base.snap
	if len(snap.Gangs) == 0 {
		return nil
	}
	// Only the gangs the pods name are looked up: a driver may pass every PodGroup it knows
	// (the simulator passes every gang of a trace) with a batch that names few or none.
	byKey := map[string]*gangRun{}
	for _, pod := range pods {
		if k := GangOf(pod); k != "" {
			byKey[k] = nil
		}
	}
	if len(byKey) == 0 {
		return nil
	}
	for i := range snap.Gangs {
		g := snap.Gangs[i]
		k := g.Namespace + "/" + g.Name
		if _, named := byKey[k]; named {
			byKey[k] = &gangRun{Gang: g, key: k}
		}
	}
	var out []*gangRun
	for _, pod := range pods {
		g := byKey[GangOf(pod)]
		if g == nil {
			continue
		}
		if len(g.pending) == 0 {
			out = append(out, g)
		}
		g.pending = append(g.pending, pod)
	}
	if len(out) == 0 {
		return nil
	}
	excluded := map[string]bool{}
	for _, n := range opts.ExcludeNodes {
		excluded[n] = true
	}
	for i := range snap.Nodes {
		n := &snap.Nodes[i]
		if excluded[n.Name] || n.MarkedForDeletion {
			continue
		}
		for _, pod := range n.Pods {
			g := byKey[GangOf(pod)]
			if g == nil || g.pending == nil {
				continue
			}
			g.running++
			if g.TopologyKey == "" {
				continue
			}
			switch d, ok := n.Labels[g.TopologyKey]; {
			case !ok && g.failed == nil:
				g.failed = &Reason{Kind: ReasonGang, Detail: fmt.Sprintf("podgroup %s must share one value of %s, and its pod %s/%s runs on node %s, which has none",
					g.key, g.TopologyKey, pod.Namespace, pod.Name, n.Name)}
			case !ok:
			case g.domain == "":
				g.domain = d
			case d != g.domain && g.failed == nil:
				g.failed = &Reason{Kind: ReasonGang, Detail: fmt.Sprintf("podgroup %s must share one value of %s, and its running pods already have %s and %s",
					g.key, g.TopologyKey, g.domain, d)}
			}
		}
	}
	slices.SortFunc(out, func(a, b *gangRun) int { return strings.Compare(a.key, b.key) })
	for _, g := range out {
		g.needed = max(g.MinCount-g.running, 0)
		if g.failed != nil {
			continue
		}
		if len(g.pending) < g.needed {
			g.failed = &Reason{Kind: ReasonGang, Detail: fmt.Sprintf("podgroup %s needs %d pods at once; %d are pending and %d running", g.key, g.MinCount, len(g.pending), g.running)}
			continue
		}
		if g.TopologyKey == "" {
			continue
		}
		// kube-scheduler puts the gang in one domain but judges each pod's own spread over that
		// key among every domain; the solver would see only the pinned one. Such gangs are not
		// planned (yet): they are refused, with the pod that spreads.
		for _, pod := range g.pending {
			for _, tsc := range pod.Spec.TopologySpreadConstraints {
				if tsc.TopologyKey == g.TopologyKey && tsc.WhenUnsatisfiable != corev1.ScheduleAnyway {
					g.failed = &Reason{Kind: ReasonGang, Detail: fmt.Sprintf("podgroup %s must share one value of %s, over which pod %s/%s spreads (maxSkew %d); tenon does not plan such gangs",
						g.key, g.TopologyKey, pod.Namespace, pod.Name, tsc.MaxSkew)}
				}
			}
		}
	}
	return out
}

// solveGangs is Solve for pending pods among which some belong to gangs.
func (p *Prepared) solveGangs(pods []*corev1.Pod, opts Options, gangs []*gangRun) (*Plan, error) {
	inner := opts
	inner.SkipBound = true
	// The copies pinned to a domain stand for their pods in the plans; orig maps them back.
	orig := map[*corev1.Pod]*corev1.Pod{}
	pinned := map[*gangRun][]*corev1.Pod{}
	for _, g := range gangs {
		if g.failed != nil {
			continue
		}
		switch {
		case g.TopologyKey == "":
			pinned[g] = g.pending
		case g.domain != "":
			pinned[g] = pin(g.pending, g.TopologyKey, g.domain, orig)
		default:
			if err := p.chooseDomain(g, inner, orig, pinned); err != nil {
				return nil, err
			}
		}
	}
	inGang := map[*corev1.Pod]*gangRun{}
	for _, g := range gangs {
		for _, pod := range g.pending {
			inGang[pod] = g
		}
	}
	solveWith := func(o Options) (*Plan, error) {
		var solve []*corev1.Pod
		for _, pod := range pods {
			if inGang[pod] == nil {
				solve = append(solve, pod)
			}
		}
		for _, g := range gangs {
			if g.failed == nil {
				solve = append(solve, pinned[g]...)
			}
		}
		return p.solvePods(solve, o)
	}
	plan, err := solveWith(opts)
	if err != nil {
		return nil, err
	}
	if len(shortGangs(plan, gangs, pinned)) == 0 {
		return finishGangs(plan, gangs, pinned, orig), nil
	}
	// Some gang fell short beside the others. Which gangs get capacity is decided on
	// first-fit solves (no LP guide, no bound), several times faster than the guided one; the
	// plan is then solved again as asked.
	fast := inner
	fast.NoGuide = true
	wasIn := make([]bool, len(gangs))
	for i, g := range gangs {
		wasIn[i] = g.failed == nil
	}
	room := p.gangRoom(opts.ExcludeNodes)
	move := func(g *gangRun) (bool, error) {
		return p.moveGang(g, gangs, pinned, orig, room, func() (*Plan, error) { return solveWith(fast) })
	}
	if err := admitGangs(gangs, pinned, func() (*Plan, error) { return solveWith(fast) }, move); err != nil {
		return nil, err
	}
	// The guided plan may place differently from first-fit; a gang it leaves short is taken out
	// with any other, and the rest solved again, until every gang in has its minCount.
	for {
		if plan, err = solveWith(opts); err != nil {
			return nil, err
		}
		short := shortGangs(plan, gangs, pinned)
		if len(short) == 0 {
			break
		}
		for _, s := range short {
			s.fail()
		}
	}
	// First-fit may leave out a gang that the guided plan has room for (the guide puts other
	// pods elsewhere). The gangs taken out are tried again on the guided solve, in name order,
	// each kept in if every gang in still gets its minCount; only those the room of the nodes
	// and the pools' limits could hold beside the gangs in (gangRoom) cost a solve, and at most
	// gangResolves of them.
	tries := 0
	for i, g := range gangs {
		if !wasIn[i] || g.failed == nil || tries == gangResolves || !room.holds(g, gangs) {
			continue
		}
		tries++
		reason := g.failed
		g.failed = nil
		again, err := solveWith(opts)
		if err != nil {
			return nil, err
		}
		if len(shortGangs(again, gangs, pinned)) > 0 {
			g.failed = reason
			continue
		}
		plan = again
	}
	return finishGangs(plan, gangs, pinned, orig), nil
}

// moveGang tries gang g, which fell short beside the others in its chosen domain, in each other
// domain of its key, solving (solve) with its pods pinned there; it keeps the cheapest domain
// where every gang in gets its minCount, and reports whether it found one. (A move that only
// helped while some other gang was still short could leave g where it fits only beside that
// gang's pods, which may be taken out next.) It tries nothing when the room could not hold g
// beside the gangs in anyway.
func (p *Prepared) moveGang(g *gangRun, gangs []*gangRun, pinned map[*gangRun][]*corev1.Pod, orig map[*corev1.Pod]*corev1.Pod, room gangRoom, solve func() (*Plan, error)) (bool, error) {
	if !room.holds(g, gangs) {
		return false, nil
	}
	from, fromPods := g.domain, pinned[g]
	best, bestPrice := "", 0.0
	var bestPods []*corev1.Pod
	for _, v := range p.domainValues(g.TopologyKey) {
		if v == from {
			continue
		}
		copies := pin(g.pending, g.TopologyKey, v, nil)
		pinned[g], g.domain = copies, v
		plan, err := solve()
		if err != nil {
			pinned[g], g.domain = fromPods, from
			return false, err
		}
		if len(shortGangs(plan, gangs, pinned)) == 0 && (best == "" || plan.Price < bestPrice-1e-9) {
			best, bestPrice, bestPods = v, plan.Price, copies
		}
	}
	if best == "" {
		pinned[g], g.domain = fromPods, from
		return false, nil
	}
	pinned[g], g.domain = bestPods, best
	for i, c := range bestPods {
		orig[c] = g.pending[i]
	}
	return true, nil
}

// gangRoom is, per resource, the most that pending pods can get on a prepared snapshot: the free
// room of the nodes that stay and what the pools may still launch (their limits, or without
// bound when some type of theirs has the resource).
type gangRoom scheduling.Resources

func (p *Prepared) gangRoom(exclude []string) gangRoom {
	f := p.floorState(false)
	room := f.total
	for _, name := range exclude {
		if i, ok := f.byName[name]; ok {
			room = room.Sub(f.free[i])
		}
	}
	for _, pl := range p.base.pools {
		if pl.reason != nil || pl.nodesLeft == 0 {
			continue
		}
		var has scheduling.Resources
		for _, t := range pl.types {
			has = has.Max(t.alloc)
		}
		for r := range has {
			switch {
			case has[r] <= 0:
			case pl.limited[r]:
				room[r] = scheduling.SatAdd(room[r], max(pl.remaining[r], 0))
			default:
				room[r] = scheduling.Saturated
			}
		}
	}
	return gangRoom(room)
}

// holds reports whether the room could hold, in every resource, the least that gang g needs
// beside the least the other gangs in need: a gang it cannot hold is not worth a solve.
func (room gangRoom) holds(g *gangRun, gangs []*gangRun) bool {
	need := leastNeed(g)
	for _, o := range gangs {
		if o != g && o.failed == nil {
			need = need.Add(leastNeed(o))
		}
	}
	for r, v := range need {
		if v > room[r] {
			return false
		}
	}
	return true
}

// leastNeed is, per resource, the sum of the needed smallest requests among a gang's pending
// pods: no plan that gives the gang its minCount places less.
func leastNeed(g *gangRun) scheduling.Resources {
	if g.least == nil {
		g.least = new(scheduling.Resources)
		*g.least = readLeastNeed(g)
	}
	return *g.least
}

func readLeastNeed(g *gangRun) scheduling.Resources {
	var out scheduling.Resources
	if g.needed == 0 {
		return out
	}
	reqs := make([]scheduling.Resources, 0, len(g.pending))
	for _, pod := range g.pending {
		if r, err := scheduling.PodRequests(pod); err == nil {
			reqs = append(reqs, r)
		}
	}
	if len(reqs) < g.needed {
		return out
	}
	col := make([]int64, len(reqs))
	for r := range out {
		for i := range reqs {
			col[i] = reqs[i][r]
		}
		slices.Sort(col)
		for _, v := range col[:g.needed] {
			out[r] = scheduling.SatAdd(out[r], v)
		}
	}
	return out
}

// shortGang is a gang given capacity in a plan that got less than its minCount: placed of its
// pods, and why one was not.
type shortGang struct {
	*gangRun
	placed int
	why    string
}

// fail takes the gang out, saying why.
func (s shortGang) fail() {
	s.failed = &Reason{Kind: ReasonGang, Detail: fmt.Sprintf("podgroup %s needs %d pods at once%s; only %d could be placed with the other pending pods: %s",
		s.key, s.MinCount, inDomain(s.gangRun), s.placed, s.why)}
}

// shortGangs returns the gangs given capacity in plan that got less than their minCount.
func shortGangs(plan *Plan, gangs []*gangRun, pinned map[*gangRun][]*corev1.Pod) []shortGang {
	var out []shortGang
	for _, g := range gangs {
		if g.failed == nil {
			if placed, why := gangPlaced(plan, pinned[g]); placed < g.needed {
				out = append(out, shortGang{gangRun: g, placed: placed, why: why})
			}
		}
	}
	return out
}

// finishGangs records each gang's outcome in the plan, makes the pods of the gangs left out
// unschedulable with its reason, and puts the pods back in place of their pinned copies.
func finishGangs(plan *Plan, gangs []*gangRun, pinned map[*gangRun][]*corev1.Pod, orig map[*corev1.Pod]*corev1.Pod) *Plan {
	for _, g := range gangs {
		out := GangOutcome{Gang: g.Gang, Pending: len(g.pending), Running: g.running, Reason: g.failed}
		if g.failed == nil {
			out.Placed, _ = gangPlaced(plan, pinned[g])
			if g.TopologyKey != "" {
				out.Domain = g.TopologyKey + "=" + g.domain
			}
		} else {
			for _, pod := range g.pending {
				plan.Unschedulable = append(plan.Unschedulable, Unschedulable{Pod: pod, Reasons: []Reason{*g.failed}})
			}
		}
		plan.Gangs = append(plan.Gangs, out)
	}
	restore(plan, orig)
	return plan
}

// admitGangs decides which gangs get capacity, taking out (failed set) the gangs that fall
// short of their minCount beside the others in the plans solve makes. One is taken out at a
// time (the one of the lowest priority, then the one placed least in proportion, then by name)
// and the rest solved again: taking out every short gang at once would leave out gangs that fit
// once a competitor is gone, and buy nothing when each of two gangs fell short beside the other.
// After gangResolves such solves the short gangs left are taken out together. Then the first
// gangResolves taken out are tried again, in that order, each kept in if every gang in still
// gets its minCount: one taken out while another short gang was still in may fit now. A gang
// whose domain the solver chose is tried in the other domains of its key (move) before it is
// taken out, and again when it is tried again: alone it was cheapest where other gangs' pods
// may have gone.
func admitGangs(gangs []*gangRun, pinned map[*gangRun][]*corev1.Pod, solve func() (*Plan, error), move func(*gangRun) (bool, error)) error {
	var dropped []*gangRun
	moved := map[*gangRun]bool{}
	for {
		plan, err := solve()
		if err != nil {
			return err
		}
		short := shortGangs(plan, gangs, pinned)
		if len(short) == 0 {
			break
		}
		slices.SortStableFunc(short, func(a, b shortGang) int {
			switch {
			case gangFailsFirst(a, b):
				return -1
			case gangFailsFirst(b, a):
				return 1
			}
			return 0
		})
		if len(dropped) < gangResolves {
			// The gang to take out may fit in another domain of its key beside the others
			// (each gang is tried in the other domains once).
			if g := short[0].gangRun; g.chosen && !moved[g] && move != nil {
				moved[g] = true
				ok, err := move(g)
				if err != nil {
					return err
				}
				if ok {
					continue
				}
			}
			short = short[:1]
		}
		for _, s := range short {
			s.fail()
			dropped = append(dropped, s.gangRun)
		}
	}
	if len(dropped) < 2 {
		return nil
	}
	for _, g := range dropped[:min(len(dropped), gangResolves)] {
		reason := g.failed
		g.failed = nil
		plan, err := solve()
		if err != nil {
			return err
		}
		if len(shortGangs(plan, gangs, pinned)) == 0 {
			continue
		}
		// With fewer gangs in, another domain of its key may hold it now.
		if g.chosen && move != nil {
			ok, err := move(g)
			if err != nil {
				return err
			}
			if ok {
				continue
			}
		}
		g.failed = reason
	}
	return nil
}

// gangResolves bounds the solves admitGangs spends taking short gangs out one at a time, and
// again those it spends trying them again.
const gangResolves = 8

// gangFailsFirst reports whether short gang a is to be taken out before short gang b: the
// lower priority first (as kube-scheduler admits the higher first), then the smaller share of
// the pods it needs placed, then the later name.
func gangFailsFirst(a, b shortGang) bool {
	if pa, pb := gangPriority(a.gangRun), gangPriority(b.gangRun); pa != pb {
		return pa < pb
	}
	// a.placed/a.needed < b.placed/b.needed, without division (needed > 0 for a short gang).
	if l, r := a.placed*b.needed, b.placed*a.needed; l != r {
		return l < r
	}
	return a.key > b.key
}

// gangPriority is the highest priority among a gang's pending pods.
func gangPriority(g *gangRun) int32 {
	var best int32
	for i, pod := range g.pending {
		if pr := scheduling.Priority(pod); i == 0 || pr > best {
			best = pr
		}
	}
	return best
}

// chooseDomain picks, for a gang with a topology key and nothing running, the domain where
// capacity for its pods costs least, solving them alone pinned to each domain; it records the
// pinned copies, or why no domain holds the gang.
func (p *Prepared) chooseDomain(g *gangRun, opts Options, orig map[*corev1.Pod]*corev1.Pod, pinned map[*gangRun][]*corev1.Pod) error {
	values := p.domainValues(g.TopologyKey)
	if len(values) == 0 {
		g.failed = &Reason{Kind: ReasonGang, Detail: fmt.Sprintf("podgroup %s must share one value of %s, which no nodepool or node sets", g.key, g.TopologyKey)}
		return nil
	}
	best, bestPrice, mostPlaced, why := "", 0.0, -1, ""
	var bestPods []*corev1.Pod
	for _, v := range values {
		copies := pin(g.pending, g.TopologyKey, v, nil)
		plan, err := p.solvePods(copies, opts)
		if err != nil {
			return err
		}
		placed, reason := gangPlaced(plan, copies)
		if placed < g.needed {
			if placed > mostPlaced {
				mostPlaced, why = placed, fmt.Sprintf("%s=%s: %s", g.TopologyKey, v, reason)
			}
			continue
		}
		if best == "" || plan.Price < bestPrice-1e-9 {
			best, bestPrice, bestPods = v, plan.Price, copies
		}
	}
	if best == "" {
		g.failed = &Reason{Kind: ReasonGang, Detail: fmt.Sprintf("podgroup %s needs %d pods at once in one domain of %s; no domain holds them (best %d, %s)",
			g.key, g.MinCount, g.TopologyKey, max(mostPlaced, 0), why)}
		return nil
	}
	g.domain, g.chosen = best, true
	for i, c := range bestPods {
		orig[c] = g.pending[i]
	}
	pinned[g] = bestPods
	return nil
}

// domainValues lists, sorted, the values of a node label that capacity could have: the zones of
// the snapshot for the zone label, else what the NodePools' labels and requirements (In) and the
// instance types' labels say, and existing nodes' labels.
func (p *Prepared) domainValues(key string) []string {
	b := p.base
	seen := map[string]bool{}
	if key == apisv1.LabelZone {
		for _, z := range b.zones {
			seen[z] = true
		}
	}
	for i := range b.snap.NodePools {
		np := &b.snap.NodePools[i]
		if v, ok := np.Labels[key]; ok {
			seen[v] = true
		}
		if r, ok := np.Requirements.Get(key); ok && !r.IsComplement() {
			for _, v := range r.Values() {
				seen[v] = true
			}
		}
	}
	if b.typeKeys[key] {
		for _, pl := range b.pools {
			for _, t := range pl.types {
				if r, ok := t.it.Requirements.Get(key); ok && !r.IsComplement() {
					for _, v := range r.Values() {
						seen[v] = true
					}
				}
			}
		}
	}
	for i := range b.snap.Nodes {
		if v, ok := b.snap.Nodes[i].Labels[key]; ok {
			seen[v] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// pin returns copies of pods that may only go where label key is value (a node selector), and
// records each copy's pod in orig when orig is not nil.
func pin(pods []*corev1.Pod, key, value string, orig map[*corev1.Pod]*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, len(pods))
	for i, pod := range pods {
		c := pod.DeepCopy()
		if c.Spec.NodeSelector == nil {
			c.Spec.NodeSelector = map[string]string{}
		}
		if have, ok := c.Spec.NodeSelector[key]; !ok || have == value {
			c.Spec.NodeSelector[key] = value
		} else {
			// The pod holds itself to another value: it cannot go to this domain. A required
			// term for this one, beside its selector for the other, says so.
			c.Spec.Affinity = withRequired(c.Spec.Affinity, key, value)
		}
		out[i] = c
		if orig != nil {
			orig[c] = pod
		}
	}
	return out
}

// gangPlaced counts the pods of a gang (as solved) that the plan places, and names one that it
// could not place, with its reasons.
func gangPlaced(plan *Plan, pods []*corev1.Pod) (int, string) {
	member := map[*corev1.Pod]bool{}
	for _, pod := range pods {
		member[pod] = true
	}
	placed := 0
	for _, pl := range plan.Placements {
		if member[pl.Pod] {
			placed++
		}
	}
	for _, c := range plan.Claims {
		for _, pod := range c.Pods {
			if member[pod] {
				placed++
			}
		}
	}
	why := ""
	for _, u := range plan.Unschedulable {
		if member[u.Pod] {
			why = fmt.Sprintf("pod %s/%s: %s", u.Pod.Namespace, u.Pod.Name, u.Message())
			break
		}
	}
	return placed, why
}

func inDomain(g *gangRun) string {
	if g.TopologyKey == "" {
		return ""
	}
	return fmt.Sprintf(" in %s=%s", g.TopologyKey, g.domain)
}

// restore puts the pods back in place of their pinned copies.
func restore(plan *Plan, orig map[*corev1.Pod]*corev1.Pod) {
	if len(orig) == 0 {
		return
	}
	back := func(p *corev1.Pod) *corev1.Pod {
		if o, ok := orig[p]; ok {
			return o
		}
		return p
	}
	for i := range plan.Placements {
		plan.Placements[i].Pod = back(plan.Placements[i].Pod)
	}
	for _, c := range plan.Claims {
		for i := range c.Pods {
			c.Pods[i] = back(c.Pods[i])
		}
	}
	for i := range plan.Unschedulable {
		plan.Unschedulable[i].Pod = back(plan.Unschedulable[i].Pod)
	}
}

// withRequired returns aff with key In [value] added to every required node-affinity term (or
// as the only term when there is none).
func withRequired(aff *corev1.Affinity, key, value string) *corev1.Affinity {
	req := corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{value}}
	if aff == nil {
		aff = &corev1.Affinity{}
	}
	if aff.NodeAffinity == nil {
		aff.NodeAffinity = &corev1.NodeAffinity{}
	}
	sel := aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if sel == nil || len(sel.NodeSelectorTerms) == 0 {
		aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{req}}}}
		return aff
	}
	for i := range sel.NodeSelectorTerms {
		sel.NodeSelectorTerms[i].MatchExpressions = append(sel.NodeSelectorTerms[i].MatchExpressions, req)
	}
	return aff
}

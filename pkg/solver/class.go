package solver

import (
	"cmp"
	"container/heap"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// class is a set of pending pods that are identical for scheduling: same namespace, labels,
// requests, node requirements, tolerations, host ports, topology spread and pod affinity. The
// solver places a class with counts, not pod by pod.
type class struct {
	index    int
	pods     []*corev1.Pod
	next     int // pods[:next] are placed or given up
	placed   int
	ns       string
	labels   map[string]string
	requests scheduling.Resources
	slots    []int // the resources requests asks for
	// alts are the required node-affinity alternatives (ORed), each with the node selector.
	alts []scheduling.Requirements
	// prefs are the preferred node-affinity terms, heaviest first; prefs[pref] is enforced as if
	// required until relaxed (pref == len(prefs) when none is left).
	prefs       []scheduling.WeightedRequirements
	pref        int
	tolerations []corev1.Toleration
	hostPorts   []scheduling.HostPort
	spreads     []*spreadTerm
	affinity    []*affinityTerm // pod affinity, required and preferred
	anti        []*affinityTerm // pod anti-affinity, required and preferred
	// matches lists the topology groups whose selector selects this class's pods.
	matches []*group
	// invalid is set when the pod's constraints could not be read, or it asks for what no node
	// can serve (an *unsupportedError); the class is unschedulable.
	invalid error
	// compiled[p] holds the alternatives compiled against pool p (nil entries: incompatible),
	// and poolReason[p] why none is compatible.
	compiled   [][]*altInPool
	poolReason []*Reason
	// required[p] holds the required alternatives alone compiled against pool p (nil entries:
	// incompatible; the whole slice nil when the class has no preferred node-affinity term, and
	// compiled serves). The domains of a topology spread come from these: a preferred term may
	// choose among the domains, it never removes one from the spread's count.
	required [][]*altInPool

	// Derived state, refreshed when preferences are relaxed.
	active        []scheduling.Requirements // alternatives with the enforced preference
	dims          []int                     // constrained non-hostname dimensions
	owned         []*group                  // groups of the class's required anti-affinity terms
	selfGroups    []*group                  // groups of the class's own terms that select it
	firmGroups    []*group                  // spread groups of the class's hard terms that select it
	nodeSpecific  bool                      // requirements name hostnames or node names
	sigCompat     []int8
	eligibleCache map[int][]int
	relaxedFrom   int // pods placed before the first relaxation (-1: never relaxed)
	// honourMatched keeps the skew of spread groups that select the class's pods without being
	// its own terms; it is relaxed last.
	honourMatched bool
	// countPlanned keeps the skew of the class's own spreads among every selected pod where it
	// is planned, not only among the firm ones; it is relaxed after honourMatched.
	countPlanned bool
	// priced is newPrice's latest answer for the class (n == 0: none), kept while the class's
	// compiled alternatives are.
	priced struct {
		pool, n int
		price   float64
	}
}

func (c *class) remaining() int { return len(c.pods) - c.next }

// altInPool is one node-affinity alternative of a class compiled against one pool.
type altInPool struct {
	reqs  scheduling.Requirements // the alternative with the active preferred term folded in
	types scheduling.Bitset       // pool types that allow it (requirements only)
	// maxAlloc is the element-wise largest allocatable among types.
	maxAlloc scheduling.Resources
	zones    zoneMask
	cts      ctMask
	// residual holds the alternative's requirements on keys no type or offering decides.
	residual scheduling.Requirements
}

// activeAlts returns the alternatives with the enforced preferred node-affinity term folded in.
func (c *class) activeAlts() []scheduling.Requirements {
	if c.pref >= len(c.prefs) {
		return c.alts
	}
	out := make([]scheduling.Requirements, len(c.alts))
	for i, a := range c.alts {
		out[i] = a.Intersect(c.prefs[c.pref].Requirements)
	}
	return out
}

// compileClasses groups the pending pods into classes and compiles each against every pool.
func (s *solve) compileClasses() error {
	byKey := map[string]*class{}
	var buf []byte
	var sc keyScratch
	keys := s.selectorKeys()
	for _, pod := range s.pending {
		buf = deviceKey(classKey(buf[:0], pod, keys, &sc), pod, s.snap.Devices)
		if c, ok := byKey[string(buf)]; ok {
			c.pods = append(c.pods, pod)
			continue
		}
		c := s.newClass(pod)
		c.index = len(s.classes)
		byKey[string(buf)] = c
		s.classes = append(s.classes, c)
	}
	// Classes that need nodes of their own (hostname anti-affinity or spread) first, since they
	// decide how many nodes there are; then larger pods first (GPUs, then CPU, then memory), so
	// that small pods fill what is left.
	// Classes with pod affinity go last: the pods they follow are then where they will be,
	// whatever order kube-scheduler binds them in.
	slices.SortStableFunc(s.classes, func(a, b *class) int {
		if x := cmp.Compare(b.rigid(), a.rigid()); x != 0 {
			return x
		}
		if x := cmp.Compare(min(len(a.affinity), 1), min(len(b.affinity), 1)); x != 0 {
			return x
		}
		for _, r := range []int{scheduling.NvidiaGPU, scheduling.AMDGPU, scheduling.Neuron, scheduling.CPU, scheduling.Memory} {
			if c := cmp.Compare(b.requests[r], a.requests[r]); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.index, b.index)
	})
	return nil
}

// followersLast reorders the classes with required pod affinity so that a class comes after
// the classes whose pods its terms select and that do not carry the same term themselves
// (stable otherwise; classes that follow each other in a cycle keep their order). A pod whose
// term selects itself may open a domain of its own only while no pod of the group is placed
// anywhere: placed before a class of its group that follows another group elsewhere, it could
// end up alone, a plan no binding order keeps valid. Classes that carry the term alike need no
// order among them (the first opens the domain, the others join it), so they get no edges: a
// group of thousands of distinct shapes costs nothing.
func followersLast(classes []*class) []*class {
	// The classes with affinity the sort put last (a rigid class with affinity, sorted before
	// others, keeps its place).
	start := len(classes)
	for start > 0 && len(classes[start-1].affinity) > 0 {
		start--
	}
	tail := classes[start:]
	if len(tail) < 2 {
		return classes
	}
	requires := func(c *class, g *group) bool {
		return slices.ContainsFunc(c.affinity, func(at *affinityTerm) bool { return at.weight == 0 && at.g == g })
	}
	byGroup := map[*group][]int{} // the classes a group selects that do not carry it themselves
	for i, c := range tail {
		for _, g := range c.matches {
			if !requires(c, g) {
				byGroup[g] = append(byGroup[g], i)
			}
		}
	}
	after := make([][]int, len(tail)) // after[i]: the classes that must come after class i
	indeg := make([]int, len(tail))
	edgeTo := make([]int, len(tail)) // edgeTo[y] == x+1: the edge y → x is in
	for x, c := range tail {
		for _, at := range c.affinity {
			if at.weight != 0 {
				continue
			}
			for _, y := range byGroup[at.g] {
				if y != x && edgeTo[y] != x+1 {
					edgeTo[y] = x + 1
					after[y] = append(after[y], x)
					indeg[x]++
				}
			}
		}
	}
	// Kahn's order, the ready class of least position first; a cycle releases the first left.
	out := make([]*class, 0, len(tail))
	done := make([]bool, len(tail))
	ready := &intHeap{}
	for i := range tail {
		if indeg[i] == 0 {
			heap.Push(ready, i)
		}
	}
	cursor := 0 // no class before it is left undone
	for len(out) < len(tail) {
		var next int
		if ready.Len() > 0 {
			next = heap.Pop(ready).(int)
		} else {
			for done[cursor] {
				cursor++
			}
			next = cursor
		}
		if done[next] {
			continue
		}
		done[next] = true
		out = append(out, tail[next])
		for _, x := range after[next] {
			if indeg[x]--; indeg[x] == 0 && !done[x] {
				heap.Push(ready, x)
			}
		}
	}
	copy(tail, out)
	return classes
}

// intHeap is a min-heap of ints (container/heap).
type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// domainAlts is the class's required alternatives compiled against pool pi: what decides the
// domains of its topology spreads.
func (c *class) domainAlts(pi int) []*altInPool {
	if c.required != nil {
		return c.required[pi]
	}
	return c.compiled[pi]
}

// firmIn reports whether the class's pods count towards the least-filled domain of group g:
// they carry one of its hard spread terms.
func (c *class) firmIn(g *group) bool { return slices.Contains(c.firmGroups, g) }

// rigid reports whether the class's own terms cap how many of its pods share a node.
func (c *class) rigid() int {
	for _, st := range c.spreads {
		if st.g.dim == dimHostname && st.hard {
			return 1
		}
	}
	for _, at := range c.anti {
		if at.g.dim == dimHostname && at.weight == 0 {
			return 1
		}
	}
	return 0
}

func (s *solve) newClass(pod *corev1.Pod) *class {
	c := &class{pods: []*corev1.Pod{pod}, ns: pod.Namespace, labels: pod.Labels, tolerations: pod.Spec.Tolerations, relaxedFrom: -1, honourMatched: true, countPlanned: true}
	if r := deviceReason(pod, s.snap.Devices); r != nil {
		c.invalid = &unsupportedError{*r}
		return c
	}
	var err error
	if c.requests, err = scheduling.PodRequests(pod); err != nil {
		c.invalid = err
		return c
	}
	need := s.snap.Devices[pod]
	if !need.addTo(&c.requests) {
		c.invalid = &unsupportedError{Reason{Kind: ReasonDevices, Detail: fmt.Sprintf("devices counted as %s, a resource no instance type has", need.Resource)}}
		return c
	}
	for i, r := range c.requests {
		if r > 0 {
			c.slots = append(c.slots, i)
		}
	}
	if c.alts, err = scheduling.PodNodeRequirements(pod); err != nil {
		c.invalid = err
		return c
	}
	need.narrow(c.alts)
	if c.prefs, err = scheduling.PodPreferredNodeRequirements(pod); err != nil {
		c.invalid = err
		return c
	}
	for _, a := range c.alts {
		c.nodeSpecific = c.nodeSpecific || a.Has(corev1.LabelHostname) || a.Has(scheduling.FieldNodeName)
	}
	for _, w := range c.prefs {
		c.nodeSpecific = c.nodeSpecific || w.Requirements.Has(corev1.LabelHostname) || w.Requirements.Has(scheduling.FieldNodeName)
	}
	c.active = c.activeAlts()
	c.hostPorts = scheduling.PodHostPorts(pod)
	if err := s.topo.compileTerms(c, pod); err != nil {
		c.invalid = fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return c
}

// compileForPools compiles the class's active alternatives against every pool, and once its
// required alternatives alone when a preference is folded into the active ones.
func (s *solve) compileForPools(c *class) {
	c.priced.n = 0
	c.compiled = make([][]*altInPool, len(s.pools))
	c.poolReason = make([]*Reason, len(s.pools))
	if len(c.prefs) > 0 && c.required == nil {
		c.required = make([][]*altInPool, len(s.pools))
		for pi, p := range s.pools {
			c.required[pi] = make([]*altInPool, len(c.alts))
			if p.reason != nil {
				continue
			}
			for ai, alt := range c.alts {
				c.required[pi][ai], _ = s.compileAlt(p, c, alt)
			}
		}
	}

	alts := c.activeAlts()
	for pi, p := range s.pools {
		c.compiled[pi] = make([]*altInPool, len(alts))
		if p.reason != nil {
			c.poolReason[pi] = p.reason
			continue
		}
		// A pool whose taints the class does not tolerate still compiles: its zones are domains
		// of the class's topology spreads (kube-scheduler ignores taints there by default).
		taint := scheduling.UntoleratedTaint(c.tolerations, p.taints)
		var reason *Reason
		any := false
		for ai, alt := range alts {
			a, r := s.compileAlt(p, c, alt)
			if a == nil {
				if reason == nil {
					reason = r
				}
				continue
			}
			c.compiled[pi][ai] = a
			any = true
		}
		if taint != nil {
			c.poolReason[pi] = &Reason{Kind: ReasonTaint, NodePool: p.name(), Detail: taintString(taint)}
			continue
		}
		if !any {
			if reason == nil {
				reason = &Reason{Kind: ReasonRequirement, NodePool: p.name()}
			}
			c.poolReason[pi] = reason
			continue
		}
		if !s.canHold(p, c) {
			c.poolReason[pi] = &Reason{Kind: ReasonResources, NodePool: p.name(), Detail: scheduling.FormatPodRequests(c.requests, c.pods[0])}
		}
	}
}

// compileAlt compiles one alternative against a pool, or explains why it cannot hold there.
//
// What it finds depends on the alternative alone unless the class has host ports (DaemonSets'
// ports rule types out) or the pool keeps minValues strictly (the class's requests rule types
// out), so otherwise it is kept and shared: thousands of pods of distinct shapes but the same
// constraints compile once. The result is never modified once made (claims clone its types).
func (s *solve) compileAlt(p *pool, c *class, alt scheduling.Requirements) (*altInPool, *Reason) {
	if len(c.hostPorts) > 0 || len(p.minValues) > 0 && s.strictMinValues() {
		return s.compileAltFor(p, c, alt)
	}
	memo := s.altMemo
	for i := len(memo) - 1; i >= max(0, len(memo)-altMemoDepth); i-- {
		if m := &memo[i]; m.pool == p.index && m.reqs.Equal(alt) {
			return m.a, m.r
		}
	}
	a, r := s.compileAltFor(p, c, alt)
	s.altMemo = append(memo, altMemo{pool: p.index, reqs: alt, a: a, r: r})
	return a, r
}

// altMemoDepth is how many of the latest compiled alternatives compileAlt compares with: pods
// come in runs of like constraints, and a class with constraints of its own costs one compile,
// not a scan of all.
const altMemoDepth = 16

// altMemo is one alternative compileAlt compiled against a pool.
type altMemo struct {
	pool int
	reqs scheduling.Requirements
	a    *altInPool
	r    *Reason
}

// compileAltFor compiles one alternative against a pool for class c.
func (s *solve) compileAltFor(p *pool, c *class, alt scheduling.Requirements) (*altInPool, *Reason) {
	a := &altInPool{reqs: alt}
	for _, r := range alt.Items() {
		if !s.typeKeys[r.Key] && !offeringKey(r.Key) {
			a.residual = a.residual.Add(r)
		}
	}
	if inc := scheduling.Compatible(p.residual, a.residual, scheduling.AllowUndefinedWellKnown); inc != nil {
		return nil, &Reason{Kind: ReasonRequirement, NodePool: p.name(), Key: inc.Key, Requirement: inc.Pod.String(), Detail: inc.Node.String()}
	}
	types, empty := p.typeSet(alt)
	if empty != nil {
		return nil, &Reason{Kind: ReasonRequirement, NodePool: p.name(), Key: empty.Key, Requirement: empty.String(), Detail: "the instance types"}
	}
	if len(c.hostPorts) > 0 && p.dsPorts {
		if r := s.dropDaemonPortClashes(p, c, types); r != nil {
			return nil, r
		}
	}
	a.types = types
	if types.Count() == len(p.types) {
		a.maxAlloc = p.maxAlloc
	} else {
		a.maxAlloc = maxAlloc(p, types)
	}
	zones, cts := s.offeringMasks(alt)
	a.zones, a.cts = zones&p.zones, cts&p.cts
	mask := offerBits(a.zones, a.cts)
	viable := false
	for ti := a.types.Next(0); ti >= 0; ti = a.types.Next(ti + 1) {
		if p.types[ti].bits&mask != 0 {
			viable = true
			break
		}
	}
	if !viable {
		var named []string
		for _, k := range []string{"topology.kubernetes.io/zone", "topology.k8s.aws/zone-id", "karpenter.sh/capacity-type", "karpenter.k8s.aws/capacity-reservation-id"} {
			if r, ok := alt.Get(k); ok {
				named = append(named, r.String())
			}
		}
		return nil, &Reason{Kind: ReasonNoOffering, NodePool: p.name(), Requirement: strings.Join(named, ", ")}
	}
	if s.strictMinValues() {
		// The pod's requirements and requests alone must leave the pool's minValues.
		if mv, left := s.minValuesShort(p, a.types, mask, &c.requests); mv != nil {
			return nil, minValuesReason(p, mv, left)
		}
	}
	return a, nil
}

// dropDaemonPortClashes removes from types those whose DaemonSets bind a host port the class
// asks for: on a new node of such a type the port is taken before the pod arrives. When no type
// is left it says which port and DaemonSet took the last one.
func (s *solve) dropDaemonPortClashes(p *pool, c *class, types scheduling.Bitset) *Reason {
	var reason *Reason
	for ti := types.Next(0); ti >= 0; ti = types.Next(ti + 1) {
		t := p.types[ti]
		for i, dp := range t.dsPorts {
			if hp, clash := scheduling.HostPortConflict([]scheduling.HostPort{dp}, c.hostPorts); clash {
				types.Clear(ti)
				if reason == nil {
					reason = &Reason{Kind: ReasonHostPort, NodePool: p.name(),
						Detail: fmt.Sprintf("%s (bound by daemonset %s)", hp, s.daemons[t.dsPortOwner[i]].name)}
				}
				break
			}
		}
	}
	if types.IsEmpty() {
		return reason
	}
	return nil
}

// canHold reports whether some type of pool p, with an offer the class's alternatives allow,
// holds at least one pod of the class.
func (s *solve) canHold(p *pool, c *class) bool {
	return s.holds(p, c, c.compiled[p.index])
}

// holds reports whether some type of pool p, with an offer one of alts allows, holds at least
// one pod of the class.
func (s *solve) holds(p *pool, c *class, alts []*altInPool) bool {
	// Candidates are the types whose allocatable holds a pod in every indexed resource (the
	// pool's index skips the rest: a GPU pod looks at none of a CPU pool's types).
	var want slotVec
	for j, r := range indexedSlots {
		want[j] = c.requests[r]
	}
	for _, a := range alts {
		if a == nil {
			continue
		}
		mask := offerBits(a.zones, a.cts)
		for ti := p.fits.first(0, &want); ti >= 0; ti = p.fits.first(ti+1, &want) {
			t := p.types[ti]
			if a.types.Has(ti) && t.bits&mask != 0 && c.fit(&t.alloc) > 0 {
				return true
			}
		}
	}
	return false
}

// newPrice is the least that new claims of pool p would cost to hold n pods of the class: over
// the types its alternatives allow, the price of as many nodes of the type as n pods need.
//
// Without reservations an offering's price never changes within a solve, so the answer for
// the class, pool and n is kept: first-fit asks it of every open claim a class could grow.
func (s *solve) newPrice(p *pool, c *class, n int) float64 {
	memo := len(s.reservations) == 0
	if memo && c.priced.n == n && c.priced.pool == p.index {
		return c.priced.price
	}
	best := s.newPriceOf(p, c, n)
	if memo {
		c.priced.pool, c.priced.n, c.priced.price = p.index, n, best
	}
	return best
}

func (s *solve) newPriceOf(p *pool, c *class, n int) float64 {
	best := inf
	for _, a := range c.compiled[p.index] {
		if a == nil {
			continue
		}
		mask := offerBits(a.zones, a.cts)
		for ti := a.types.Next(0); ti >= 0; ti = a.types.Next(ti + 1) {
			t := p.types[ti]
			if t.offers[0].price >= best {
				break // cheapest first: no later type costs less, even for one node
			}
			fit := c.fit(&t.alloc)
			if fit == 0 {
				ti = int(p.larger[ti]) - 1 // none up to the next larger type holds a pod
				continue
			}
			if t.bits&mask == 0 {
				continue
			}
			price, _, ok := s.offerPrice(p, ti, mask)
			if !ok {
				continue
			}
			best = min(best, price*float64((n+fit-1)/fit))
		}
	}
	return best
}

// fitCount is how many copies of req fit in free. As in kube-scheduler, only the resources req
// asks for are compared.
func fitCount(req, free scheduling.Resources) int {
	n := int64(1 << 40)
	for i, r := range req {
		if r > 0 {
			n = min(n, free[i]/r)
		}
	}
	return int(max(n, 0))
}

// fit is fitCount for the class's requests, over the resources it asks for only.
func (c *class) fit(free *scheduling.Resources) int {
	n := int64(1 << 40)
	for _, i := range c.slots {
		n = min(n, free[i]/c.requests[i])
	}
	return int(max(n, 0))
}

func taintString(t *corev1.Taint) string {
	if t.Value == "" {
		return fmt.Sprintf("%s:%s", t.Key, t.Effect)
	}
	return fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect)
}

// selectorKeys collects the label keys that any topology spread or pod (anti-)affinity selector
// of a pending or running pod looks at, matchLabelKeys and mismatchLabelKeys included.
func (s *solve) selectorKeys() map[string]bool {
	return selectorKeys(s.pending, s.prep.existingKeys)
}

// selectorKeys collects the keys the selectors of pods look at, added to base.
func selectorKeys(pods []*corev1.Pod, base map[string]bool) map[string]bool {
	keys := map[string]bool{}
	addSel := func(ls *metav1.LabelSelector) {
		if ls == nil {
			return
		}
		for k := range ls.MatchLabels {
			keys[k] = true
		}
		for _, e := range ls.MatchExpressions {
			keys[e.Key] = true
		}
	}
	addTerm := func(t *corev1.PodAffinityTerm) {
		addSel(t.LabelSelector)
		for _, k := range t.MatchLabelKeys {
			keys[k] = true
		}
		for _, k := range t.MismatchLabelKeys {
			keys[k] = true
		}
	}
	visit := func(p *corev1.Pod) {
		for i := range p.Spec.TopologySpreadConstraints {
			tsc := &p.Spec.TopologySpreadConstraints[i]
			addSel(tsc.LabelSelector)
			for _, k := range tsc.MatchLabelKeys {
				keys[k] = true
			}
		}
		aff := p.Spec.Affinity
		if aff == nil {
			return
		}
		if pa := aff.PodAffinity; pa != nil {
			for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
				addTerm(&pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
			}
			for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
				addTerm(&pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
			}
		}
		if pa := aff.PodAntiAffinity; pa != nil {
			for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
				addTerm(&pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
			}
			for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
				addTerm(&pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
			}
		}
	}
	for _, p := range pods {
		visit(p)
	}
	for k := range base {
		keys[k] = true
	}
	return keys
}

// keyScratch is classKey's reusable room for sorting map keys.
type keyScratch struct {
	strs  []string
	names []corev1.ResourceName
}

// classKey appends to buf a key that is equal for two pods exactly when they are identical for
// scheduling. It reads only the fields scheduling depends on, so pods of one controller share a
// key even though their names, hostnames or environment differ.
//
// Only the labels some selector looks at (keys) are part of the key: other labels cannot change
// where a pod may go.
func classKey(buf []byte, pod *corev1.Pod, keys map[string]bool, sc *keyScratch) []byte {
	str := func(s string) {
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	strMap := func(m map[string]string) {
		buf = binary.AppendUvarint(buf, uint64(len(m)))
		sc.strs = sc.strs[:0]
		for k := range m {
			sc.strs = append(sc.strs, k)
		}
		slices.Sort(sc.strs)
		for _, k := range sc.strs {
			str(k)
			str(m[k])
		}
	}
	resources := func(l corev1.ResourceList) {
		buf = binary.AppendUvarint(buf, uint64(len(l)))
		sc.names = sc.names[:0]
		for k := range l {
			sc.names = append(sc.names, k)
		}
		slices.Sort(sc.names)
		for _, k := range sc.names {
			q := l[k]
			str(string(k))
			// Milli-units, unless they overflow: then the quantity's own spelling, so that a
			// huge request never shares a class with one its millis wrap onto.
			if q.CmpInt64(math.MaxInt64/1000) < 0 && q.Sign() >= 0 {
				buf = binary.AppendVarint(buf, q.MilliValue())
			} else {
				buf = binary.AppendVarint(buf, -1)
				str(q.String())
			}
		}
	}
	container := func(c *corev1.Container) {
		resources(c.Resources.Requests)
		resources(c.Resources.Limits) // requests default to limits
		if c.RestartPolicy != nil {
			str(string(*c.RestartPolicy))
		} else {
			str("")
		}
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				str(p.HostIP)
				str(string(p.Protocol))
				buf = binary.AppendVarint(buf, int64(p.HostPort))
			}
		}
		str("|")
	}
	proto := func(m interface{ Marshal() ([]byte, error) }) {
		b, err := m.Marshal()
		if err != nil {
			b = []byte(err.Error())
		}
		str(string(b))
	}
	spec := &pod.Spec
	str(pod.Namespace)
	sc.strs = sc.strs[:0]
	for k := range pod.Labels {
		if keys[k] {
			sc.strs = append(sc.strs, k)
		}
	}
	slices.Sort(sc.strs)
	for _, k := range sc.strs {
		str(k)
		str(pod.Labels[k])
	}
	str("|")
	for i := range spec.InitContainers {
		container(&spec.InitContainers[i])
	}
	str("||")
	for i := range spec.Containers {
		container(&spec.Containers[i])
	}
	resources(spec.Overhead)
	if spec.Resources != nil {
		proto(spec.Resources)
	}
	strMap(spec.NodeSelector)
	if spec.Affinity != nil {
		proto(spec.Affinity)
	}
	for i := range spec.Tolerations {
		proto(&spec.Tolerations[i])
	}
	str("|||")
	for i := range spec.TopologySpreadConstraints {
		proto(&spec.TopologySpreadConstraints[i])
	}
	buf = binary.AppendUvarint(buf, uint64(len(spec.ResourceClaims)))
	return buf
}

// deviceKey appends what the pod's dynamic resource claims need to its class key: pods whose
// claims resolved alike share a class.
func deviceKey(buf []byte, pod *corev1.Pod, devices map[*corev1.Pod]*DeviceNeed) []byte {
	if len(pod.Spec.ResourceClaims) == 0 {
		return buf
	}
	need := devices[pod]
	switch {
	case need == nil:
		return append(buf, 0)
	case need.Reason != nil:
		return append(append(buf, 1), need.Reason.String()...)
	}
	return append(append(buf, 2), need.Key...)
}

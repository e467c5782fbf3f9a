package solver

import (
	"math"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// upgradeSlack lets a claim grow to a larger type when the price difference is at most this much
// above what the joining pods would cost at the class's best rate (or, in growthPays, when the
// larger type's price per unit of room is at most this much above the current one's). It was
// 0.10; since growthPays exists, 0 does as well everywhere and better on the spread mix (1.089
// against 1.103), and never buys a dearer shape than the pods' own.
const upgradeSlack = 0.0

// run places every class, relaxing preferences where a class does not fit, then finalizes.
// With guided packing on, the packable classes wait until the others are placed, then go where
// the LP's patterns put them (see guide.go); first-fit places what is left.
func (s *solve) run() {
	var deferred []*class
	for _, c := range s.classes {
		if s.guided && c.packable() {
			deferred = append(deferred, c)
			continue
		}
		s.placeAll(c)
	}
	if len(deferred) > 0 {
		s.pack(deferred)
		for _, c := range deferred {
			s.placeAll(c)
		}
	}
	s.repair()
	s.finalize()
}

// placeAll places the class's remaining pods, relaxing its preferences as needed, and gives up
// on those that fit nowhere.
func (s *solve) placeAll(c *class) {
	if c.invalid != nil {
		s.giveUp(c, []Reason{invalidReason(c.invalid)})
		return
	}
	if c.remaining() > 0 {
		s.placeClass(c)
	}
	for c.remaining() > 0 && s.relax(c) {
		s.placeClass(c)
	}
	if c.relaxedFrom >= 0 {
		s.relaxed += c.next - c.relaxedFrom
	}
	if c.remaining() > 0 {
		s.giveUp(c, s.reasons(c))
	}
}

// placeClass places as many of the class's remaining pods as its active constraints allow.
func (s *solve) placeClass(c *class) {
	c.dims = s.constrainedDims(c)
	if d := s.drivingDim(c); d >= 0 {
		s.placeByDomain(c, d)
		return
	}
	s.placeFree(c)
}

// placeFree places a class without constraints on zones (or other non-hostname domains):
// existing nodes, then open claims, then new claims.
func (s *solve) placeFree(c *class) {
	for _, t := range s.targets {
		if c.remaining() == 0 {
			return
		}
		s.tryTarget(c, t, c.remaining())
	}
	// Fill what open claims have room for before growing any of them.
	s.grow = false
	for i := s.cidx.first(c, 0, &c.requests, false); i >= 0 && c.remaining() > 0; i = s.cidx.first(c, i+1, &c.requests, false) {
		s.tryClaim(c, s.claims[i], c.remaining(), -1, -1)
	}
	// Then growth, on the claims whose largest type could take a pod (the index skips the
	// others, which would refuse it).
	s.grow = true
	for i := s.cidx.first(c, 0, &c.requests, true); i >= 0 && c.remaining() > 0; i = s.cidx.first(c, i+1, &c.requests, true) {
		s.tryClaim(c, s.claims[i], c.remaining(), -1, -1)
	}
	for c.remaining() > 0 {
		cl := s.openClaim(c, -1, -1, c.remaining())
		if cl == nil || s.tryClaim(c, cl, c.remaining(), -1, -1) == 0 {
			break
		}
	}
	// No new claim can be opened: grow open claims beyond what is worth it, as the last resort.
	s.force = true
	for i := s.cidx.first(c, 0, &c.requests, true); i >= 0 && c.remaining() > 0; i = s.cidx.first(c, i+1, &c.requests, true) {
		s.tryClaim(c, s.claims[i], c.remaining(), -1, -1)
	}
	s.force = false
}

// placeByDomain places a class whose constraints pick domains of dimension d (zones, say): it
// chooses a domain, fills what it may there, and repeats.
func (s *solve) placeByDomain(c *class, d int) {
	values := s.eligible(c, d)
	n := 0
	for _, v := range values {
		n = max(n, v+1)
	}
	exhausted := make([]bool, n)
	tcur := make([]int, n)
	ccur := [2][]int{make([]int, n), make([]int, n)}
	for c.remaining() > 0 {
		v, k := s.chooseDomain(c, d, values, exhausted)
		if v < 0 {
			return
		}
		k = min(k, c.remaining())
		// The class will put about an even share of its remaining pods in each domain still
		// open to it: claims in v are sized and grown for that many, not just for the k placed
		// this round.
		open := 0
		for _, w := range values {
			if !exhausted[w] {
				open++
			}
		}
		s.hint = (c.remaining() + open - 1) / max(open, 1)
		placed := 0
		for tcur[v] < len(s.targets) && placed < k {
			t := s.targets[tcur[v]]
			want := k - placed
			got := 0
			if t.domain(s, d) == v {
				got = s.tryTarget(c, t, want)
			}
			placed += got
			if got < want {
				tcur[v]++
			}
		}
		// Room in open claims first (found through the claim index), then growth.
		s.grow = false
		for placed < k {
			i := s.cidx.first(c, ccur[0][v], &c.requests, false)
			if i < 0 {
				ccur[0][v] = len(s.claims)
				break
			}
			want := k - placed
			got := s.tryClaim(c, s.claims[i], want, d, v)
			placed += got
			ccur[0][v] = i
			if got < want {
				ccur[0][v] = i + 1
			}
		}
		s.grow = true
		for cur := ccur[1]; placed < k; {
			i := s.cidx.first(c, cur[v], &c.requests, true)
			if i < 0 {
				cur[v] = len(s.claims)
				break
			}
			cur[v] = i
			want := k - placed
			got := s.tryClaim(c, s.claims[i], want, d, v)
			placed += got
			if got < want {
				cur[v]++
			}
		}
		for placed < k {
			cl := s.openClaim(c, d, v, k-placed)
			if cl == nil {
				break
			}
			got := s.tryClaim(c, cl, k-placed, d, v)
			if got == 0 {
				break
			}
			placed += got
		}
		if placed < k {
			// Last resort in this domain: grow open claims beyond what is worth it.
			s.force = true
			for i := s.cidx.first(c, 0, &c.requests, true); i >= 0 && placed < k; i = s.cidx.first(c, i+1, &c.requests, true) {
				placed += s.tryClaim(c, s.claims[i], k-placed, d, v)
			}
			s.force = false
		}
		if placed == 0 {
			exhausted[v] = true
		}
	}
	s.hint = 0
}

// drivingDim returns the first non-hostname dimension the class's active constraints act on,
// or -1.
func (s *solve) drivingDim(c *class) int {
	dims := s.constrainedDims(c)
	if len(dims) == 0 {
		return -1
	}
	return dims[0]
}

// constrainedDims lists the non-hostname dimensions the class's active terms act on, and those
// where running pods' anti-affinity repels it.
func (s *solve) constrainedDims(c *class) []int {
	var dims []int
	add := func(d int) {
		if d == dimHostname {
			return
		}
		for _, x := range dims {
			if x == d {
				return
			}
		}
		dims = append(dims, d)
	}
	for _, st := range c.spreads {
		if st.active {
			add(st.g.dim)
		}
	}
	for _, at := range c.affinity {
		if at.active {
			add(at.g.dim)
		}
	}
	for _, at := range c.anti {
		if at.active {
			add(at.g.dim)
		}
	}
	for _, g := range c.matches {
		// Pods a group counts must land in a known domain, or the counts would be wrong.
		add(g.dim)
	}
	return dims
}

// balanceCount is what the class's pods weigh on in domain v of dimension d: the counts of the
// spread groups that select them there.
func (s *solve) balanceCount(c *class, d, v int) int32 {
	var cnt int32
	for _, g := range c.matches {
		if g.kind == kindSpread && g.dim == d {
			cnt += g.count(v)
		}
	}
	for _, st := range c.spreads {
		if st.active && st.g.dim == d && !st.self {
			cnt += st.g.count(v)
		}
	}
	return cnt
}

// domainCap returns how many pods of the class the terms on dimension d allow into domain v,
// ignoring resources (math.MaxInt32 for no limit).
func (s *solve) domainCap(c *class, d, v int) int {
	n := math.MaxInt32
	for _, st := range c.spreads {
		if !st.active || st.g.dim != d {
			continue
		}
		if v < 0 {
			return 0 // a node without the key is no domain of the constraint
		}
		cnt := st.g.count(v)
		if !st.self {
			// The class's pods are outside the selector: placing them changes no count, so a
			// domain is open to all of them while its count (every selected pod, counted where
			// it is placed) is within maxSkew of the least, as kube-scheduler judges it. The
			// least-filled domain always is.
			if cnt-s.minCountGroup(c, st.g, st.minDomains, true) > st.maxSkew {
				return 0
			}
			continue
		}
		// Other pods of the group may carry a tighter skew; the final placement must keep
		// theirs too.
		skew := st.maxSkew
		if st.hard && st.g.maxSkew > 0 {
			skew = min(skew, st.g.maxSkew)
		}
		// The skew must hold among the firm pods (running, or carrying a hard term of the
		// group: pods that stay where they are put) and, while the class counts planned pods
		// (relaxed last), among every selected pod counted where it is planned, since
		// kube-scheduler may bind the pods that do not carry the term before or after these.
		n = min(n, int(s.minCount(c, st)+skew-st.g.firmCount(v)))
		if c.countPlanned {
			n = min(n, int(s.minCountGroup(c, st.g, st.minDomains, true)+skew-cnt))
		}
	}
	for _, at := range c.affinity {
		if !at.active || at.g.dim != d {
			continue
		}
		if v < 0 {
			return 0
		}
		if at.g.total == 0 {
			if !at.self {
				return 0
			}
		} else if at.g.count(v) == 0 {
			return 0
		}
	}
	for _, at := range c.anti {
		if !at.active || at.g.dim != d || v < 0 {
			continue
		}
		if at.g.count(v) > 0 {
			return 0
		}
		if at.self {
			n = min(n, 1)
		}
	}
	for _, g := range c.matches {
		if g.kind == kindAnti && g.dim == d && v >= 0 && g.ownerCount(v) > 0 {
			return 0
		}
		// A spread group that counts this class's pods without being one of its terms: keep
		// its skew too (while the class honours it), or pods that do carry the constraint could
		// find no domain left, whatever order kube-scheduler binds them in.
		if c.honourMatched && g.kind == kindSpread && g.dim == d && g.maxSkew > 0 && !c.ownsSpread(g) {
			if v < 0 {
				continue
			}
			n = min(n, int(s.minCountGroup(c, g, 0, false)+g.maxSkew-g.count(v)))
		}
	}
	return max(n, 0)
}

// ownsSpread reports whether one of the class's active spread terms is group g.
func (c *class) ownsSpread(g *group) bool {
	for _, st := range c.spreads {
		if st.active && st.g == g {
			return true
		}
	}
	return false
}

// minCount is the least firm count of the spread term's group over the domains the class may
// land in (zero when they are fewer than minDomains, or for hostnames, where a new node is a
// domain).
func (s *solve) minCount(c *class, st *spreadTerm) int32 {
	return s.minCountGroup(c, st.g, st.minDomains, false)
}

// minCountGroup is the least count of group g over the domains the class may land in: of its
// firm pods, or of all the pods it selects (all).
func (s *solve) minCountGroup(c *class, g *group, minDomains int32, all bool) int32 {
	if g.dim == dimHostname {
		return 0
	}
	values := s.eligible(c, g.dim)
	if len(values) == 0 || int32(len(values)) < minDomains {
		return 0
	}
	low := int32(math.MaxInt32)
	for _, v := range values {
		if all {
			low = min(low, g.count(v))
		} else {
			low = min(low, g.firmCount(v))
		}
	}
	return low
}

// chooseDomain picks the domain of dimension d to fill next, and how many pods may go there:
// the least-filled domain for spreads, a domain with matching pods for affinity, an empty one
// for anti-affinity.
func (s *solve) chooseDomain(c *class, d int, values []int, exhausted []bool) (int, int) {
	best, bestCap, bestCount := -1, 0, int32(math.MaxInt32)
	for _, v := range values {
		if exhausted[v] {
			continue
		}
		k := s.domainCap(c, d, v)
		if k <= 0 {
			continue
		}
		if cnt := s.balanceCount(c, d, v); cnt < bestCount {
			best, bestCap, bestCount = v, k, cnt
		}
	}
	return best, bestCap
}

// eligible returns the domains of dimension d where the class could land: those of existing
// nodes it may run on, and those new claims of compatible pools could launch in.
func (s *solve) eligible(c *class, d int) []int {
	if c.eligibleCache == nil {
		c.eligibleCache = map[int][]int{}
	}
	if vs, ok := c.eligibleCache[d]; ok {
		return vs
	}
	// Taints keep a node out of a spread's domains only when a spread honours them.
	honourTaints := false
	for _, st := range c.spreads {
		honourTaints = honourTaints || st.honorTaints
	}
	seen := map[int]bool{}
	for _, t := range s.targets {
		if v := t.domain(s, d); v >= 0 && !seen[v] && s.domainTarget(c, t, honourTaints) {
			seen[v] = true
		}
	}
	for pi, p := range s.pools {
		if !s.domainPool(c, pi, honourTaints) {
			continue
		}
		for _, a := range c.domainAlts(pi) {
			if a == nil {
				continue
			}
			for _, v := range s.claimValues(p, d, a.zones, a.cts, p.residual.Intersect(a.residual)) {
				seen[v] = true
			}
		}
	}
	var vs []int
	for v := range seen {
		vs = append(vs, v)
	}
	sortInts(vs)
	c.eligibleCache[d] = vs
	return vs
}

// domainTarget reports whether node t is in the domains of the class's topology spreads: its
// labels meet the class's required node affinity (a preferred term does not narrow the domains)
// and, when a spread honours taints, the class tolerates it.
func (s *solve) domainTarget(c *class, t *target, honourTaints bool) bool {
	if c.required == nil {
		return s.compatTarget(c, t) || !honourTaints && s.matchesTarget(c, t)
	}
	matches := false
	for _, a := range c.alts {
		if a.Matches(t.labels) == nil {
			matches = true
			break
		}
	}
	return matches && (!honourTaints || s.toleratesTarget(c, t))
}

// domainPool reports whether new claims of pool pi add domains to the class's topology
// spreads: the pool can hold the class under its required node affinity and, when a spread
// honours taints, the class tolerates the pool.
func (s *solve) domainPool(c *class, pi int, honourTaints bool) bool {
	if c.required == nil {
		r := c.poolReason[pi]
		return r == nil || r.Kind == ReasonTaint && !honourTaints
	}
	p := s.pools[pi]
	if p.reason != nil || honourTaints && scheduling.UntoleratedTaint(c.tolerations, p.taints) != nil {
		return false
	}
	return s.holds(p, c, c.required[pi])
}

// claimValues lists the domains of dimension d a claim of pool p restricted to zones, cts and
// residual requirements could end up in.
func (s *solve) claimValues(p *pool, d int, zones zoneMask, cts ctMask, residual scheduling.Requirements) []int {
	var out []int
	switch d {
	case dimZone:
		for z := range s.zones {
			if zones&(1<<z) != 0 && s.poolOffers(p, zones&(1<<z), cts) {
				out = append(out, z)
			}
		}
	case dimCapacityType:
		for ct := 0; ct < numCT; ct++ {
			if cts&(1<<ct) != 0 && s.poolOffers(p, zones, cts&(1<<ct)) {
				out = append(out, ct)
			}
		}
	default:
		r, ok := residual.Get(s.topo.dims[d])
		if !ok || r.IsComplement() {
			return nil // the node would not carry the key, or its value is not known
		}
		for _, v := range r.Values() {
			out = append(out, s.topo.value(d, v))
		}
	}
	return out
}

func (s *solve) poolOffers(p *pool, zones zoneMask, cts ctMask) bool {
	mask := offerBits(zones, cts)
	for _, t := range p.types {
		if t.bits&mask != 0 {
			return true
		}
	}
	return false
}

func sortInts(v []int) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}

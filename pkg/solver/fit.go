package solver

import (
	"math"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// ephemeralTaints are taints a node carries only while it starts; pods are planned onto
// uninitialized nodes and in-flight claims as if they were gone.
var ephemeralTaints = map[string]bool{
	corev1.TaintNodeNotReady:     true,
	corev1.TaintNodeUnreachable:  true,
	apisv1.UnregisteredTaintKey:  true,
	corev1.TaintNodeOutOfService: false,
}

// compatTarget reports whether the class's requirements and tolerations admit the node.
func (s *solve) compatTarget(c *class, t *target) bool {
	if !c.nodeSpecific {
		if c.sigCompat == nil {
			c.sigCompat = make([]int8, len(s.prep.base.targets)+1)
		}
		if t.sig < len(c.sigCompat) && c.sigCompat[t.sig] != 0 {
			return c.sigCompat[t.sig] > 0
		}
	}
	ok := s.checkTarget(c, t)
	if !c.nodeSpecific && t.sig < len(c.sigCompat) {
		c.sigCompat[t.sig] = -1
		if ok {
			c.sigCompat[t.sig] = 1
		}
	}
	return ok
}

// matchesTarget reports whether the node's labels satisfy the class's requirements, taints
// aside.
func (s *solve) matchesTarget(c *class, t *target) bool {
	for _, a := range c.active {
		if a.Matches(t.labels) == nil {
			return true
		}
	}
	return false
}

func (s *solve) checkTarget(c *class, t *target) bool {
	if !s.toleratesTarget(c, t) {
		return false
	}
	for _, a := range c.active {
		if a.Matches(t.labels) == nil {
			return true
		}
	}
	return false
}

// toleratesTarget reports whether the class tolerates the node's taints (the ephemeral ones of
// a starting node aside).
func (s *solve) toleratesTarget(c *class, t *target) bool {
	taints := t.node.Taints
	if !t.node.Initialized || t.node.InFlight {
		taints = nil
		for _, tn := range t.node.Taints {
			if !ephemeralTaints[tn.Key] {
				taints = append(taints, tn)
			}
		}
	}
	return scheduling.UntoleratedTaint(c.tolerations, taints) == nil
}

// tryTarget places up to want pods of the class on an existing node or in-flight claim and
// returns how many it placed (in a dry run, how many it could place).
func (s *solve) tryTarget(c *class, t *target, want int) int {
	if !s.compatTarget(c, t) {
		return 0
	}
	n := min(want, c.fit(s.roomOf(t)))
	if n == 0 {
		return 0
	}
	if len(c.hostPorts) > 0 {
		if _, clash := scheduling.HostPortConflict(t.ports, c.hostPorts); clash {
			return 0
		}
		if _, clash := scheduling.HostPortConflict(s.portsAdded(t), c.hostPorts); clash {
			return 0
		}
		n = 1
	}
	n = min(n, s.domainCap(c, dimHostname, t.host))
	for _, d := range c.dims {
		if n == 0 {
			break
		}
		n = min(n, s.domainCap(c, d, t.domain(s, d)))
	}
	if n <= 0 || s.dry {
		return max(n, 0)
	}
	s.take(t, c.requests.Scale(int64(n)))
	if len(c.hostPorts) > 0 {
		if s.addedPorts == nil {
			s.addedPorts = make([][]scheduling.HostPort, s.nHosts)
		}
		s.addedPorts[t.base] = append(s.addedPorts[t.base], c.hostPorts...)
	}
	s.consume(c, n)
	for _, pod := range c.take(n) {
		s.placements = append(s.placements, Placement{Pod: pod, Node: t.node.Name, InFlight: t.node.InFlight})
	}
	for _, g := range c.matches {
		g.add(t.domain(s, g.dim), int32(n), c.firmIn(g))
	}
	for _, g := range c.owned {
		g.addOwners(t.domain(s, g.dim), int32(n))
	}
	return n
}

// tryClaim places up to want pods of the class on a claim opened in this solve, pinning it to
// domain dv of dimension D when D ≥ 0, and returns how many it placed.
func (s *solve) tryClaim(c *class, cl *newClaim, want int, D, dv int) int {
	if c.poolReason[cl.pool.index] != nil {
		return 0
	}
	for _, a := range c.compiled[cl.pool.index] {
		if a == nil {
			continue
		}
		if n := s.tryClaimAlt(c, cl, a, want, D, dv); n > 0 {
			return n
		}
	}
	return 0
}

func (s *solve) tryClaimAlt(c *class, cl *newClaim, a *altInPool, want int, D, dv int) int {
	p := cl.pool
	zones, cts := cl.zones&a.zones, cl.cts&a.cts
	if zones == 0 || cts == 0 || !cl.types.Intersects(a.types) {
		return 0
	}
	residual := cl.residual
	if a.residual.Len() > 0 {
		if scheduling.Compatible(cl.residual, a.residual, scheduling.AllowUndefinedWellKnown) != nil {
			return 0
		}
		residual = cl.residual.Intersect(a.residual)
	}
	n := want
	if len(c.hostPorts) > 0 {
		if _, clash := scheduling.HostPortConflict(cl.ports, c.hostPorts); clash {
			return 0
		}
		n = 1
	}
	n = min(n, s.domainCap(c, dimHostname, cl.host))
	if n <= 0 {
		return 0
	}
	custom := cl.custom
	for _, d := range c.dims {
		v := claimDomain(d, zones, cts, custom)
		if v < 0 {
			if d == D {
				v = dv
			} else {
				v = s.pickValue(c, p, d, zones, cts, residual)
			}
			if v < 0 {
				return 0
			}
			var ok bool
			if zones, cts, custom, residual, ok = s.pin(p, d, v, zones, cts, custom, residual); !ok {
				return 0
			}
		} else if d == D && v != dv {
			return 0
		}
		if n = min(n, s.domainCap(c, d, v)); n <= 0 {
			return 0
		}
	}
	types := s.scratch(len(cl.types))
	copy(types, cl.types)
	types.And(a.types)
	mask := offerBits(zones, cts)
	n, tgt := s.claimFit(cl, c, types, mask, n)
	n = s.keepMinValues(c, cl, types, mask, n)
	if n <= 0 || s.dry {
		return max(n, 0)
	}
	s.commitClaim(c, cl, a, n, types, zones, cts, custom, residual, tgt, mask)
	return n
}

// claimDomain is the domain of a claim with these masks and pins in dimension d (-1 when not
// yet decided). Hostnames are handled by the caller.
func claimDomain(d int, zones zoneMask, cts ctMask, custom []int) int {
	switch d {
	case dimZone:
		if zones != 0 && zones&(zones-1) == 0 {
			return trailingZeros(uint64(zones))
		}
		return -1
	case dimCapacityType:
		if cts != 0 && cts&(cts-1) == 0 {
			return trailingZeros(uint64(cts))
		}
		return -1
	}
	if i := d - numBuiltinDims; i >= 0 && i < len(custom) {
		return custom[i]
	}
	return -1
}

func trailingZeros(x uint64) int {
	n := 0
	for x&1 == 0 {
		x >>= 1
		n++
	}
	return n
}

// pin restricts a claim's masks or custom values to domain v of dimension d.
func (s *solve) pin(p *pool, d, v int, zones zoneMask, cts ctMask, custom []int, residual scheduling.Requirements) (zoneMask, ctMask, []int, scheduling.Requirements, bool) {
	switch d {
	case dimZone:
		if zones&(1<<v) == 0 {
			return zones, cts, custom, residual, false
		}
		return 1 << v, cts, custom, residual, true
	case dimCapacityType:
		if cts&(1<<v) == 0 {
			return zones, cts, custom, residual, false
		}
		return zones, 1 << v, custom, residual, true
	}
	key, value := s.topo.dims[d], s.topo.values[d][v]
	r, ok := residual.Get(key)
	if !ok || !r.Has(value) {
		return zones, cts, custom, residual, false
	}
	i := d - numBuiltinDims
	next := make([]int, max(len(custom), i+1))
	for j := range next {
		next[j] = -1
	}
	copy(next, custom)
	next[i] = v
	return zones, cts, next, residual.Add(scheduling.In(key, value)), true
}

// pickValue chooses, for a claim not yet decided in dimension d, the domain the class's terms
// allow that is least filled.
func (s *solve) pickValue(c *class, p *pool, d int, zones zoneMask, cts ctMask, residual scheduling.Requirements) int {
	best, bestCount := -1, int32(1<<30)
	for _, v := range s.claimValues(p, d, zones, cts, residual) {
		if s.domainCap(c, d, v) <= 0 {
			continue
		}
		if cnt := s.balanceCount(c, d, v); cnt < bestCount {
			best, bestCount = v, cnt
		}
	}
	return best
}

// claimFit decides how many of want pods of the class join the claim with the narrowed types
// and offer mask, and the claim's target type afterwards.
func (s *solve) claimFit(cl *newClaim, c *class, types scheduling.Bitset, mask uint64, want int) (int, int) {
	p := cl.pool
	// The claim's own reservation hold must not count against it while it is judged.
	if cl.resv >= 0 {
		s.reservations[cl.resv]++
		defer func() { s.reservations[cl.resv]-- }()
	}
	T := cl.target
	nT := 0
	viable := types.Has(T) && p.types[T].cheapest(mask, s.reservations) != nil
	if viable {
		nT = c.fit(&cl.free)
		if nT >= want {
			return want, T
		}
	}
	// Grow: as many as the largest allowed type could take, at most want. Growing is worth it
	// when it costs no more than a new claim holding the same pods would.
	room := cl.maxAlloc.Sub(cl.used)
	w := min(want, c.fit(&room))
	if (s.grow || s.force || !viable) && w > nT {
		// Size the growth for the pods the class is expected to bring here (s.hint), not only
		// for this round's.
		w2 := max(w, min(s.hint, c.fit(&room)))
		need := cl.used.Add(c.requests.Scale(int64(w2)))
		best, bestPrice := s.cheapestFitting(p, types, mask, need, T)
		if best >= 0 {
			worth := (1 + upgradeSlack) * s.newPrice(p, c, w2-nT)
			if !viable || s.force || bestPrice-cl.price <= worth+1e-9 || s.growthPays(cl, best, bestPrice, need) {
				return w, best
			}
		}
	}
	if viable {
		return nT, T
	}
	// The target is gone from the narrowed mask: move to the cheapest type that holds one more.
	best, _ := s.cheapestFitting(p, types, mask, cl.used.Add(c.requests), T)
	if best < 0 {
		return 0, T
	}
	free := p.types[best].alloc.Sub(cl.used)
	return min(want, c.fit(&free)), best
}

func (s *solve) commitClaim(c *class, cl *newClaim, a *altInPool, n int, types scheduling.Bitset, zones zoneMask, cts ctMask, custom []int, residual scheduling.Requirements, tgt int, mask uint64) {
	// Domains decided by this join: the pods already on the claim now count there.
	var newly []int
	for _, d := range s.topo.dimsInUse() {
		if d != dimHostname && cl.domain(s, d) < 0 && claimDomain(d, zones, cts, custom) >= 0 {
			newly = append(newly, d)
		}
	}
	oldMask := offerBits(cl.zones, cl.cts)
	if !types.Equal(cl.types) {
		copy(cl.types, types)
		cl.maxAlloc = maxAlloc(cl.pool, cl.types)
	}
	cl.zones, cl.cts, cl.custom, cl.residual = zones, cts, custom, residual
	if tgt != cl.target || mask != oldMask {
		s.setTarget(cl, tgt, mask)
	}
	for _, d := range newly {
		v := cl.domain(s, d)
		for _, m := range cl.members {
			for _, g := range m.c.matches {
				if g.dim == d {
					g.add(v, int32(len(m.pods)), m.c.firmIn(g))
				}
			}
			for _, g := range m.owned {
				if g.dim == d {
					g.addOwners(v, int32(len(m.pods)))
				}
			}
		}
	}
	cl.used = cl.used.Add(c.requests.Scale(int64(n)))
	s.refreshFree(cl)
	cl.ports = append(cl.ports, c.hostPorts...)
	s.consume(c, n)
	pods := c.take(n)
	cl.members = append(cl.members, member{c: c, alt: a, pods: pods, owned: c.owned})
	for _, g := range c.matches {
		g.add(cl.domain(s, g.dim), int32(n), c.firmIn(g))
	}
	for _, g := range c.owned {
		g.addOwners(cl.domain(s, g.dim), int32(n))
	}
}

// openClaim opens a new claim for the class, in domain dv of dimension D when D ≥ 0: across the
// pools of the highest weight that can hold the class, the pool, alternative and type with the
// least price per pod of the class it will hold. It returns nil when no pool can.
func (s *solve) openClaim(c *class, D, dv int, want int) *newClaim {
	host := s.nHosts + len(s.claims)
	capN := min(want, s.domainCap(c, dimHostname, host))
	if len(c.hostPorts) > 0 {
		capN = min(capN, 1)
	}
	if capN <= 0 {
		return nil
	}
	type choice struct {
		p        *pool
		a        *altInPool
		ti       int
		zones    zoneMask
		cts      ctMask
		custom   []int
		residual scheduling.Requirements
		score    float64
		price    float64
	}
	var best *choice
	for pi := 0; pi < len(s.pools); pi++ {
		p := s.pools[pi]
		if best != nil && p.np.Weight < best.p.np.Weight {
			break // a heavier pool can hold the class
		}
		if p.nodesLeft == 0 || c.poolReason[pi] != nil {
			continue
		}
		// The share of what is pending in this pool and not yet covered by room in open claims
		// that the new claim should hold: all of it, or, when pods that need nodes of their own
		// (per group) force more claims, its part of it.
		share := s.demand[pi].Sub(s.room[pi])
		expect := s.claimsStillNeeded(pi)
		for i := range share {
			share[i] = max(share[i], 0) / int64(expect)
		}
		share = share.Max(c.requests.Scale(int64(max(min(capN, c.remaining()), min(s.hint, s.domainCap(c, dimHostname, host))))))
		for _, a := range c.compiled[pi] {
			if a == nil {
				continue
			}
			zones, cts, residual := a.zones, a.cts, p.residual.Intersect(a.residual)
			var custom []int
			n := capN
			ok := true
			for _, d := range c.dims {
				v := -1
				if d == D {
					v = dv
				} else {
					v = s.pickValue(c, p, d, zones, cts, residual)
				}
				if v < 0 {
					ok = false
					break
				}
				if zones, cts, custom, residual, ok = s.pin(p, d, v, zones, cts, custom, residual); !ok {
					break
				}
				n = min(n, s.domainCap(c, d, v))
			}
			if !ok || n <= 0 {
				continue
			}
			mask := offerBits(zones, cts)
			for ti := a.types.Next(0); ti >= 0; ti = a.types.Next(ti + 1) {
				t := p.types[ti]
				if best != nil && t.offers[0].price >= best.score {
					break // types come cheapest first; a score is never below the price
				}
				if t.bits&mask == 0 || !p.withinLimits(nil, &t.capacity) || c.fit(&t.alloc) == 0 {
					continue
				}
				price, _, ok := s.offerPrice(p, ti, mask)
				if !ok {
					continue
				}
				// Price per share held: a type holding the whole share costs its price; a
				// smaller one costs its price scaled up to the share.
				score := price / min(1, shareOf(&t.alloc, &share))
				if best == nil || score < best.score-1e-12 || (score <= best.score+1e-12 && price < best.price) {
					best = &choice{p: p, a: a, ti: ti, zones: zones, cts: cts, custom: custom, residual: residual, score: score, price: price}
				}
			}
		}
	}
	if best == nil {
		return nil
	}
	cl := &newClaim{
		index: len(s.claims), host: host, pool: best.p, types: best.a.types.Clone(),
		zones: best.zones, cts: best.cts, residual: best.residual, custom: best.custom,
		target: -1, resv: -1, maxAlloc: best.a.maxAlloc,
	}
	if s.dry {
		return cl
	}
	s.claims = append(s.claims, cl)
	s.openClaims[best.p.index]++
	s.setTarget(cl, best.ti, offerBits(cl.zones, cl.cts))
	if best.p.nodesLeft > 0 {
		best.p.nodesLeft--
	}
	return cl
}

// scratch returns a reusable bitset of n words.
func (s *solve) scratch(n int) scheduling.Bitset {
	if cap(s.scratchBits) < n {
		s.scratchBits = make(scheduling.Bitset, n)
	}
	return s.scratchBits[:n]
}

// shareOf is how much of share one node with allocatable alloc holds: the least ratio over the
// resources share asks for.
func shareOf(alloc, share *scheduling.Resources) float64 {
	f := math.Inf(1)
	for i, v := range share {
		if v > 0 {
			f = min(f, float64(alloc[i])/float64(v))
		}
	}
	return f
}

// claimsStillNeeded is how many more claims pool pi must open at least, whatever the types:
// every group of pods that cap how many of them share a node (hostname anti-affinity, hostname
// spread) needs as many nodes as its pending pods over its cap, less the open claims that still
// have a free slot for it.
func (s *solve) claimsStillNeeded(pi int) int {
	n := 1
	for _, g := range s.topo.order {
		if g.dim != dimHostname || g.cap <= 0 || g.pendingSelf <= 0 || g.pools&(1<<pi) == 0 {
			continue
		}
		need := (int(g.pendingSelf) + int(g.cap) - 1) / int(g.cap)
		slots := s.openClaims[pi] - int(g.fullClaims)
		n = max(n, need-slots)
	}
	return n
}

// consume records that n pods of the class were placed: they no longer count as pending demand
// of the pools they could have gone to.
func (s *solve) consume(c *class, n int) {
	if s.dry {
		return
	}
	for _, g := range c.selfGroups {
		g.pendingSelf -= int32(n)
	}
	req := c.requests.Scale(int64(n))
	for pi := range s.pools {
		if c.poolReason != nil && c.poolReason[pi] == nil {
			s.demand[pi] = s.demand[pi].Sub(req)
		}
	}
}

// growthPays reports whether growing a claim to type best is worth it
// although a new claim would hold the class's pods for less: the larger type costs no more per
// unit of room than the claim's current one, and the pods still to place can fill the room it
// adds. A greedy that opens the small new claim instead leaves both nodes part empty once the
// later pods have had to grow other claims anyway.
//
// In a guided solve the pods still to place are what the patterns' nodes left over, and those
// nodes' own free room already waits for them: only the demand beyond that room may fill what a
// growth adds. (Counting all of it, first-fit grew dozens of the 250 nodes the patterns bought
// for 20,000 distinct web pods by a size each, to place the 213 pods they left: $433.9 after the
// patterns, $447.9/h in the end; net of the room it opens 43 small claims instead: $437.4.)
// Plain first-fit keeps the whole demand: net of its room, its topology-spread plans grew
// dearer (SolveAWS/mix=spread +5.5%).
func (s *solve) growthPays(cl *newClaim, best int, bestPrice float64, need scheduling.Resources) bool {
	p := cl.pool
	if cl.price <= 0 {
		return false
	}
	grown, cur := p.types[best].alloc, p.types[cl.target].alloc
	surplus := grown.Sub(need)
	rem := s.demand[p.index]
	if s.guided {
		rem = rem.Sub(s.room[p.index])
	}
	if surplus[scheduling.CPU] > rem[scheduling.CPU] || surplus[scheduling.Memory] > rem[scheduling.Memory] {
		return false
	}
	return bestPrice/size(&grown) <= (1+upgradeSlack)*cl.price/size(&cur)
}

// size weighs a node's room as vCPUs plus GiB of memory over 4 (the general-purpose ratio).
func size(r *scheduling.Resources) float64 {
	return float64(r[scheduling.CPU])/1000 + float64(r[scheduling.Memory])/float64(4<<30)
}

// portsAdded are the host ports this solve placed on t.
func (s *solve) portsAdded(t *target) []scheduling.HostPort {
	if s.addedPorts == nil {
		return nil
	}
	return s.addedPorts[t.base]
}

// roomOf is the room left on t in this solve; the caller must not change it (see take).
func (s *solve) roomOf(t *target) *scheduling.Resources {
	if s.freeIdx != nil {
		if i := s.freeIdx[t.base]; i > 0 {
			return &s.freeBuf[i-1]
		}
	}
	return &t.free0
}

// take records pods placed on t: its room in this solve shrinks by r. A solve copies the room
// of the targets it places on, and only theirs; the others' is read from the prepared snapshot.
func (s *solve) take(t *target, r scheduling.Resources) {
	if s.freeIdx == nil {
		s.freeIdx = make([]int32, s.nHosts)
	}
	i := s.freeIdx[t.base]
	if i == 0 {
		s.freeBuf = append(s.freeBuf, t.free0)
		i = int32(len(s.freeBuf))
		s.freeIdx[t.base] = i
	}
	s.freeBuf[i-1] = s.freeBuf[i-1].Sub(r)
}

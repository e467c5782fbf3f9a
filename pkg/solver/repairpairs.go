package solver

import (
	"cmp"
	"slices"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// Pair repair. The single-claim repair (repair.go) only empties a claim into room the others
// already have, and never moves a pod that a hostname-level topology counts. Two claims that
// each hold a little too much for a smaller type — typical when a constraint fixes the number
// of nodes, such as one pod of a hostname anti-affinity group per node — can often be re-split
// between them so that both launch cheaper types, or one grows a little and the other shrinks
// more. For a pair (a, b) of the same pool, the pods that may change sides are handed out
// again: for each of the cheapest types a may launch, a keeps what cannot move and is filled
// with the movable pods of both, largest first; b takes the rest on its cheapest type. The
// cheapest split is kept when it costs less than the pair does now and holds no more of a
// resource the pool limits.
//
// A pod may change sides when it has no host ports and no node-specific requirements, its new
// claim lies in the same domain of every other dimension its class's groups count, and keeps
// its offerings and types (the single-claim repair's rules without the hostname dimension).
// Pods that hostname-level groups count or constrain change sides only as an exchange: classes
// with the same hostname-level involvement (the groups that select them, the hostname terms
// they carry) form one signature, and each claim ends with as many pods of a signature as it
// had, so every hostname count stays as it is; only what the pods request changes sides.

// pairPiece is a member of a or b whose pods may move to the other claim of the pair.
type pairPiece struct {
	fromB bool
	m     int     // member index on its claim
	n     int     // its pods
	sig   int     // −1: free; else the index of the signature's first piece
	size  float64 // sort key: the larger of its CPU and memory shares of a's type
	take  int     // pods a takes in the trial
}

// maxPairTypes caps the types a pair trial tries for its first claim.
const maxPairTypes = 16

// repairPairs re-splits pairs of the pool's claims (rcs, least utilised first) until work runs
// out, and returns what is left of it.
//
// Only claims that hold pods a hostname-level group counts take part: the others' pods are the
// single-claim repair's to move, and a re-split of theirs alone was measured to pay nowhere in
// the benchmarks while costing up to a third of a solve.
func (s *solve) repairPairs(rcs []repairClaim, work int64) int64 {
	// kind[i]: 0 if claim i takes no part, 1 + the class of its pods when all are of one class,
	// else −1. Two claims holding pods of one and the same class have nothing to exchange.
	kind := slices.Grow(s.pairKind[:0], len(rcs))[:len(rcs)]
	defer func() { s.pairKind = kind[:0] }()
	for i := range rcs {
		x := &rcs[i]
		kind[i] = 0
		if len(x.cl.members) == 0 || x.ti < 0 {
			continue
		}
		counted := false
		for mi := range x.cl.members {
			c := x.cl.members[mi].c
			counted = counted || s.exchangeable(c) && s.hostSignature(c) >= 0
			switch {
			case mi == 0:
				kind[i] = 1 + c.index
			case kind[i] != 1+c.index:
				kind[i] = -1
			}
		}
		if !counted {
			kind[i] = 0
		}
	}
	for i := 0; i < len(rcs) && work > 0; i++ {
		if kind[i] == 0 {
			continue
		}
		for j := i + 1; j < len(rcs) && work > 0; j++ {
			if s.opts.repairLimit > 0 && s.repaired >= s.opts.repairLimit {
				return 0
			}
			work--
			if kind[j] == 0 || kind[i] > 0 && kind[i] == kind[j] {
				continue
			}
			a, b := &rcs[i], &rcs[j]
			w, ok := s.repairPair(a, b)
			work -= w
			if !ok {
				w, _ = s.repairPair(b, a)
				work -= w
			}
			if ok {
				kind[i], kind[j] = -1, -1 // a changed pair holds what it holds now
			}
		}
	}
	return work
}

// repairPair tries the splits that fill a first (see above), keeps the cheapest if it pays,
// and reports the work spent and whether it kept one.
func (s *solve) repairPair(a, b *repairClaim) (int64, bool) {
	p := a.cl.pool
	var work int64
	pieces := s.pairPieces[:0]
	defer func() { s.pairPieces = pieces[:0] }()
	fixedA, fixedB := a.cl.used, b.cl.used
	scale := &p.types[a.ti].alloc
	add := func(x, y *repairClaim, fromB bool, fixed *scheduling.Resources) {
		for mi := range x.cl.members {
			m := &x.cl.members[mi]
			work++
			if !s.exchangeable(m.c) || !s.acceptsBesideHost(y.cl, x.cl, m) {
				continue
			}
			*fixed = fixed.Sub(m.c.requests.Scale(int64(len(m.pods))))
			size := 0.0
			for _, r := range [...]int{scheduling.CPU, scheduling.Memory} {
				if scale[r] > 0 {
					size = max(size, float64(m.c.requests[r])/float64(scale[r]))
				}
			}
			pieces = append(pieces, pairPiece{fromB: fromB, m: mi, n: len(m.pods), sig: -1, size: size})
		}
	}
	add(a, b, false, &fixedA)
	add(b, a, true, &fixedB)
	if len(pieces) == 0 {
		return work, false
	}
	slices.SortStableFunc(pieces, func(x, y pairPiece) int { return cmp.Compare(y.size, x.size) })
	// Signatures, and what a holds of each (need, indexed by the signature's first piece).
	// When every piece is counted and each signature's pieces ask for the same, no split
	// differs from the one the pair has.
	need := slices.Grow(s.pairNeed[:0], len(pieces))[:len(pieces)]
	defer func() { s.pairNeed = need[:0] }()
	constrained, differs := false, false
	for k := range pieces {
		pc := &pieces[k]
		c := s.pairMember(a, b, pc).c
		sig := s.hostSignature(c)
		if sig < 0 {
			differs = true
			continue
		}
		constrained = true
		pc.sig = k
		for j := range k {
			work++
			if pieces[j].sig == j && s.hostSignature(s.pairMember(a, b, &pieces[j]).c) == sig {
				pc.sig = j
				differs = differs || s.pairMember(a, b, &pieces[j]).c.requests != c.requests
				break
			}
		}
	}
	if !differs {
		return work, false
	}
	haveA := func() {
		clear(need)
		for _, pc := range pieces {
			if pc.sig >= 0 && !pc.fromB {
				need[pc.sig] += pc.n
			}
		}
	}

	total := a.price + b.price
	best := total - 1e-9
	bestTA, bestTB := -1, -1
	var bestPA, bestPB float64
	bestTake := s.pairTake[:0]
	defer func() { s.pairTake = bestTake[:0] }()
	maskA := offerBits(a.cl.zones, a.cl.cts)
	old := p.types[a.ti].capacity.Add(p.types[b.ti].capacity)
	tried := 0
	wantA := indexedWant(&fixedA)
trials:
	for ta := p.fits.first(0, &wantA); ta >= 0 && tried < maxPairTypes; ta = p.fits.first(ta+1, &wantA) {
		t := p.types[ta]
		if t.offers[0].price >= best {
			break
		}
		work++
		if !a.cl.types.Has(ta) || !fixedA.Fits(&t.alloc) {
			continue
		}
		o := t.cheapest(maskA, s.reservations)
		if o == nil || o.price >= best {
			continue
		}
		tried++
		free := t.alloc.Sub(fixedA)
		// a takes, largest first, exactly what it holds now of each signature, then what it
		// can of the free pods.
		haveA()
		for pass := 0; pass < 2; pass++ {
			for k := range pieces {
				pc := &pieces[k]
				if pass == 0 {
					pc.take = 0
				}
				if (pass == 0) != (pc.sig >= 0) {
					continue
				}
				work++
				m := s.pairMember(a, b, pc)
				if pc.fromB && !m.alt.types.Has(ta) {
					continue
				}
				n := min(pc.n, m.c.fit(&free))
				if pc.sig >= 0 {
					n = min(n, need[pc.sig])
					need[pc.sig] -= n
				}
				pc.take = n
				free = free.Sub(m.c.requests.Scale(int64(n)))
			}
		}
		if constrained {
			for k, pc := range pieces {
				if pc.sig == k && need[k] > 0 {
					continue trials
				}
			}
		}
		// b takes the rest, on its types narrowed by a's pods it takes.
		needB := fixedB
		tb := append(s.pairTypes[:0], b.cl.types...)
		s.pairTypes = tb
		for k := range pieces {
			pc := &pieces[k]
			if left := pc.n - pc.take; left > 0 {
				m := s.pairMember(a, b, pc)
				needB = needB.Add(m.c.requests.Scale(int64(left)))
				if !pc.fromB {
					tb.And(m.alt.types)
				}
			}
		}
		tiB, priceB := -1, 0.0
		if !needB.IsZero() {
			if tiB, priceB = s.launchTypeIn(b.cl, tb, &needB, nil); tiB < 0 {
				continue
			}
		}
		if o.price+priceB >= best {
			continue
		}
		sum := t.capacity
		if tiB >= 0 {
			sum = sum.Add(p.types[tiB].capacity)
		}
		if !limitedFits(p, &sum, &old) {
			continue
		}
		best, bestTA, bestTB, bestPA, bestPB = o.price+priceB, ta, tiB, o.price, priceB
		bestTake = bestTake[:0]
		for _, pc := range pieces {
			bestTake = append(bestTake, pc.take)
		}
	}
	if bestTA < 0 {
		return work, false
	}
	// Moves: b's pods a takes, a's pods it does not keep. Member indices stay valid, since
	// movePods only shortens a member's pods and appends to the receiver.
	for k, pc := range pieces {
		if pc.fromB && bestTake[k] > 0 {
			s.movePods(b.cl, pc.m, a.cl, bestTake[k])
		} else if !pc.fromB && pc.n-bestTake[k] > 0 {
			s.movePods(a.cl, pc.m, b.cl, pc.n-bestTake[k])
		}
	}
	for _, x := range [...]*repairClaim{a, b} {
		x.cl.members = slices.DeleteFunc(x.cl.members, func(m member) bool { return len(m.pods) == 0 })
	}
	s.repaired++
	a.ti, a.price = bestTA, bestPA
	a.util = utilisation(&a.cl.used, &p.types[bestTA].alloc)
	b.ti, b.price, b.util = bestTB, bestPB, 0
	if bestTB >= 0 {
		b.util = utilisation(&b.cl.used, &p.types[bestTB].alloc)
	}
	return work, true
}

// pairMember is the member a piece stands for.
func (s *solve) pairMember(a, b *repairClaim, pc *pairPiece) *member {
	if pc.fromB {
		return &b.cl.members[pc.m]
	}
	return &a.cl.members[pc.m]
}

// exchangeable reports whether pods of class c may change claims at all: no host ports, no
// node-specific requirements. Hostname-level groups are left to the signatures.
func (s *solve) exchangeable(c *class) bool {
	return c.invalid == nil && len(c.hostPorts) == 0 && !c.nodeSpecific
}

// acceptsBesideHost is accepts for a claim y whatever it launches, with hostname-level groups
// left out (a pair exchange keeps their counts).
func (s *solve) acceptsBesideHost(y, x *newClaim, m *member) bool {
	return s.acceptsIn(y, -1, x, m, true)
}

// hostSignature numbers c's hostname-level involvement (−1: none): classes with the same
// number have the same signature (sameHostSignature). Memoized per solve.
func (s *solve) hostSignature(c *class) int {
	if len(s.hostSigs) != len(s.classes) {
		s.hostSigs = make([]int, len(s.classes))
		s.hostSigReps = s.hostSigReps[:0]
	}
	if v := s.hostSigs[c.index]; v != 0 {
		return v - 2
	}
	v := -1
	if hostInvolved(c) {
		v = len(s.hostSigReps)
		for i, r := range s.hostSigReps {
			if sameHostSignature(r, c) {
				v = i
				break
			}
		}
		if v == len(s.hostSigReps) {
			s.hostSigReps = append(s.hostSigReps, c)
		}
	}
	s.hostSigs[c.index] = v + 2
	return v
}

// hostInvolved reports whether a hostname-level group selects c's pods or c carries a
// hostname-level term.
func hostInvolved(c *class) bool {
	for _, g := range c.matches {
		if g.dim == dimHostname {
			return true
		}
	}
	for _, g := range c.owned {
		if g.dim == dimHostname {
			return true
		}
	}
	for _, st := range c.spreads {
		if st.g.dim == dimHostname {
			return true
		}
	}
	for _, at := range c.affinity {
		if at.g.dim == dimHostname {
			return true
		}
	}
	for _, at := range c.anti {
		if at.g.dim == dimHostname {
			return true
		}
	}
	return false
}

// sameHostSignature reports whether classes c and d have the same hostname-level involvement:
// the same hostname groups select them, and they carry the same hostname terms, with the same
// nodes eligible for their spreads.
func sameHostSignature(c, d *class) bool {
	hostGroups := func(gs []*group) []*group {
		var out []*group
		for _, g := range gs {
			if g.dim == dimHostname {
				out = append(out, g)
			}
		}
		return out
	}
	if !slices.Equal(hostGroups(c.matches), hostGroups(d.matches)) || !slices.Equal(hostGroups(c.owned), hostGroups(d.owned)) {
		return false
	}
	if !slices.Equal(hostTerms(c.affinity, affinityDim), hostTerms(d.affinity, affinityDim)) || !slices.Equal(hostTerms(c.anti, affinityDim), hostTerms(d.anti, affinityDim)) {
		return false
	}
	cs, ds := hostTerms(c.spreads, spreadDim), hostTerms(d.spreads, spreadDim)
	if !slices.Equal(cs, ds) {
		return false
	}
	for _, st := range cs {
		if st.honorAffinity && !slices.EqualFunc(c.alts, d.alts, scheduling.Requirements.Equal) {
			return false
		}
		if st.honorTaints && (len(c.tolerations) > 0 || len(d.tolerations) > 0) {
			return false
		}
	}
	return true
}

// hostTerms returns copies of the terms in the hostname dimension.
func hostTerms[T any](ts []*T, dim func(*T) int) []T {
	var out []T
	for _, t := range ts {
		if dim(t) == dimHostname {
			out = append(out, *t)
		}
	}
	return out
}

func affinityDim(t *affinityTerm) int { return t.g.dim }
func spreadDim(t *spreadTerm) int     { return t.g.dim }

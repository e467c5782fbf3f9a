package solver

import (
	"math"
	"math/bits"

	corev1 "k8s.io/api/core/v1"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

var inf = math.Inf(1)

// newClaim is a claim opened in this solve. It has a target type, the type the solver is
// filling; pods join while they fit in it, and it grows to a larger type when what the new pods
// are worth pays for the difference. At the end it launches the cheapest type that holds
// everything on it.
type newClaim struct {
	index int
	host  int // hostname domain
	pool  *pool
	// types are the pool types every pod on the claim allows (requirements only); zones and
	// cts the offerings it may launch as.
	types scheduling.Bitset
	zones zoneMask
	cts   ctMask
	// residual holds requirements on keys no type or offering decides (custom labels);
	// custom pins custom topology dimensions (value per dimension index − numBuiltinDims).
	residual scheduling.Requirements
	reqs     scheduling.Requirements
	custom   []int
	target   int     // index into pool.types
	price    float64 // target's cheapest offer within zones × cts
	resv     int     // reservation counter the target's offer holds, or -1
	used     scheduling.Resources
	free     scheduling.Resources // target's allocatable − used
	maxAlloc scheduling.Resources // element-wise max allocatable over types (for pruning)
	slot     int32                // 1 + its position among its pool's claims in the claim index (0: not yet)
	ports    []scheduling.HostPort
	members  []member
}

type member struct {
	c     *class
	alt   *altInPool
	pods  []*corev1.Pod
	owned []*group // required anti-affinity groups the pods own
}

func (cl *newClaim) domain(s *solve, d int) int {
	switch d {
	case dimHostname:
		return cl.host
	case dimZone:
		if bits.OnesCount32(uint32(cl.zones)) == 1 {
			return bits.TrailingZeros32(uint32(cl.zones))
		}
		return -1
	case dimCapacityType:
		if bits.OnesCount8(uint8(cl.cts)) == 1 {
			return bits.TrailingZeros8(uint8(cl.cts))
		}
		return -1
	}
	if i := d - numBuiltinDims; i < len(cl.custom) {
		return cl.custom[i]
	}
	return -1
}

// price returns the cheapest offer of pool type ti within zones × cts, honouring reservation
// capacity left, with the reservation counter it would take.
func (s *solve) offerPrice(p *pool, ti int, mask uint64) (float64, int, bool) {
	o := p.types[ti].cheapest(mask, s.reservations)
	if o == nil {
		return 0, -1, false
	}
	return o.price, o.resv, true
}

// withinLimits reports whether swapping capacity from (a type of capacity from) to to keeps
// the pool within its limits.
func (p *pool) withinLimits(from, to *scheduling.Resources) bool {
	for i, lim := range p.limited {
		if !lim {
			continue
		}
		var f int64
		if from != nil {
			f = from[i]
		}
		if scheduling.SatSub(to[i], f) > p.remaining[i] {
			return false
		}
	}
	return true
}

func (p *pool) take(from, to *scheduling.Resources) {
	for i, lim := range p.limited {
		if !lim {
			continue
		}
		if from != nil {
			p.remaining[i] = scheduling.SatAdd(p.remaining[i], from[i])
		}
		p.remaining[i] = scheduling.SatSub(p.remaining[i], to[i])
	}
}

// cheapestFitting returns the cheapest pool type in types whose allocatable holds need, with an
// offer within mask, that the limits allow in place of the current target (cur, or -1). Pool
// types are ordered by their cheapest offer, so the walk stops once no later type can be cheaper.
func (s *solve) cheapestFitting(p *pool, types scheduling.Bitset, mask uint64, need scheduling.Resources, cur int) (int, float64) {
	best, bestPrice := -1, inf
	var from *scheduling.Resources
	if cur >= 0 {
		from = &p.types[cur].capacity
	}
	// Candidates in price order: the types whose allocatable holds need in every indexed
	// resource (the index skips the rest), checked exactly.
	want := indexedWant(&need)
	for ti := p.fits.first(0, &want); ti >= 0; ti = p.fits.first(ti+1, &want) {
		t := p.types[ti]
		if t.offers[0].price >= bestPrice {
			break
		}
		if !types.Has(ti) || !need.Fits(&t.alloc) || !p.withinLimits(from, &t.capacity) {
			continue
		}
		if price, _, ok := s.offerPrice(p, ti, mask); ok && price < bestPrice {
			best, bestPrice = ti, price
		}
	}
	return best, bestPrice
}

// indexedWant is need in the resources the pools' type indexes hold.
func indexedWant(need *scheduling.Resources) slotVec {
	var want slotVec
	for j, r := range indexedSlots {
		want[j] = need[r]
	}
	return want
}

func maxAlloc(p *pool, types scheduling.Bitset) scheduling.Resources {
	var m scheduling.Resources
	for ti := types.Next(0); ti >= 0; ti = types.Next(ti + 1) {
		m = m.Max(p.types[ti].alloc)
	}
	return m
}

// setTarget moves the claim to target ti at price, updating limits and reservation holds.
func (s *solve) setTarget(cl *newClaim, ti int, mask uint64) {
	p := cl.pool
	var from *scheduling.Resources
	if cl.target >= 0 {
		from = &p.types[cl.target].capacity
	}
	if cl.resv >= 0 {
		s.reservations[cl.resv]++
	}
	p.take(from, &p.types[ti].capacity)
	price, resv, _ := s.offerPrice(p, ti, mask)
	if resv >= 0 {
		s.reservations[resv]--
	}
	cl.target, cl.price, cl.resv = ti, price, resv
	s.refreshFree(cl)
}

// refreshFree recomputes the claim's free room in its target and updates the claim index.
func (s *solve) refreshFree(cl *newClaim) {
	if s.dry || cl.target < 0 {
		return
	}
	pi := cl.pool.index
	s.room[pi] = s.room[pi].Sub(cl.free)
	cl.free = cl.pool.types[cl.target].alloc.Sub(cl.used)
	s.room[pi] = s.room[pi].Add(cl.free)
	s.cidx.set(cl)
}

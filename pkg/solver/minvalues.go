package solver

import (
	"fmt"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// MinValuesPolicy says what a solve does when a claim would keep fewer distinct values of a
// key than a NodePool requirement's minValues asks for. The names and meanings are Karpenter's
// (--min-values-policy).
type MinValuesPolicy string

const (
	// MinValuesStrict (the default) keeps minValues through every narrowing: a pod that would
	// leave a claim with fewer values does not join it, and a pod that leaves fewer on any new
	// claim of the pool is unschedulable there.
	MinValuesStrict MinValuesPolicy = "Strict"
	// MinValuesBestEffort places pods as if minValues were lowered to what is left, and the
	// claim records the lowered requirement (Claim.MinValuesRelaxed).
	MinValuesBestEffort MinValuesPolicy = "BestEffort"
)

// ParseMinValuesPolicy reads a policy name ("" is Strict).
func ParseMinValuesPolicy(s string) (MinValuesPolicy, error) {
	switch MinValuesPolicy(s) {
	case "", MinValuesStrict:
		return MinValuesStrict, nil
	case MinValuesBestEffort:
		return MinValuesBestEffort, nil
	}
	return "", fmt.Errorf("invalid min values policy %q: want %s or %s", s, MinValuesStrict, MinValuesBestEffort)
}

// String, Set and Type let a command line take the policy as a flag value.
func (p *MinValuesPolicy) String() string {
	if *p == "" {
		return string(MinValuesStrict)
	}
	return string(*p)
}

// Set parses a policy name.
func (p *MinValuesPolicy) Set(s string) error {
	v, err := ParseMinValuesPolicy(s)
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// Type names the flag's value kind.
func (p *MinValuesPolicy) Type() string { return "policy" }

// minValue is a requirement of a pool with minValues on a key the instance types decide.
type minValue struct {
	key string
	min int
	ki  *keyIndex
}

// compileMinValues lists the pool's requirements that carry minValues. A key no instance type
// decides has no values to count among the claim's options and is left to the NodePool.
func (p *pool) compileMinValues() {
	for _, r := range p.reqs.Items() {
		if r.MinValues <= 0 {
			continue
		}
		for i := range p.keys {
			if p.keys[i].key == r.Key {
				p.minValues = append(p.minValues, minValue{key: r.Key, min: r.MinValues, ki: &p.keys[i]})
				break
			}
		}
	}
}

// minValuesShort reports the first minValues requirement of pool p that the types in types fall
// short of, once narrowed to those with an offer in mask that hold need within the limits, and
// how many distinct values are left for it. It returns nil when every requirement holds.
func (s *solve) minValuesShort(p *pool, types scheduling.Bitset, mask uint64, need *scheduling.Resources) (*minValue, int) {
	if len(p.minValues) == 0 {
		return nil, 0
	}
	viable := s.mvScratch[:0]
	viable = append(viable, make(scheduling.Bitset, len(types))...)
	for ti := types.Next(0); ti >= 0; ti = types.Next(ti + 1) {
		t := p.types[ti]
		if t.bits&mask != 0 && need.Fits(&t.alloc) && p.withinLimits(nil, &t.capacity) {
			viable.Set(ti)
		}
	}
	s.mvScratch = viable
	for i := range p.minValues {
		mv := &p.minValues[i]
		if n := countValues(mv.ki, viable, mv.min); n < mv.min {
			return mv, n
		}
	}
	return nil, 0
}

// countValues counts the distinct values of the key among the types in set, stopping at enough.
func countValues(ki *keyIndex, set scheduling.Bitset, enough int) int {
	n := 0
	for _, vs := range ki.sets {
		if vs.Intersects(set) {
			if n++; n >= enough {
				break
			}
		}
	}
	return n
}

// strictMinValues reports whether the solve enforces minValues while placing.
func (s *solve) strictMinValues() bool { return s.opts.MinValuesPolicy != MinValuesBestEffort }

// minValuesReason explains a pool's minValues requirement that a pod cannot keep.
func minValuesReason(p *pool, mv *minValue, left int) *Reason {
	return &Reason{Kind: ReasonMinValues, NodePool: p.name(), Key: mv.key,
		Detail: fmt.Sprintf("%d distinct values left, minValues %d", left, mv.min)}
}

// keepMinValues lowers n, the pods of the class joining a claim with types and mask, to the
// most that leave every minValues requirement of the pool met (0 when even one does not).
func (s *solve) keepMinValues(c *class, cl *newClaim, types scheduling.Bitset, mask uint64, n int) int {
	p := cl.pool
	if len(p.minValues) == 0 || !s.strictMinValues() {
		return n
	}
	ok := func(k int) bool {
		need := cl.used.Add(c.requests.Scale(int64(k)))
		mv, _ := s.minValuesShort(p, types, mask, &need)
		return mv == nil
	}
	if ok(n) {
		return n
	}
	lo, hi := 0, n // ok(lo) holds (nothing joins), ok(hi) does not
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if ok(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

package bound

import (
	"cmp"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
)

// A type's effective capacity, for dropDominated (reduce.go): what a node of it can ever use,
// given the classes that may use it, their counts and the group caps. A type as large as another's
// effective capacity holds every pattern of it.

// upper is a bound on a candidate's effective capacity, cheap because candidates with the same
// classes share most of it: the least of its capacity and what its classes could use of a node
// of unbounded capacity, each class within its count, each group within its cap.
// The result is scratch, valid until the next call.
func (in *instance) upper(cache map[string][]int64, c *candidate) []int64 {
	most := in.demandOf(cache, c.classes)
	in.effUp = grow64(in.effUp, len(most))
	for j, v := range most {
		in.effUp[j] = min(v, c.capa[j])
	}
	return in.effUp
}

// demandOf is what the classes in the bitset could use of a node of unbounded capacity, cached
// by bitset.
func (in *instance) demandOf(cache map[string][]int64, classes []uint64) []int64 {
	in.effKey = in.effKey[:0]
	for _, x := range classes {
		in.effKey = binary.LittleEndian.AppendUint64(in.effKey, x)
	}
	if u, ok := cache[string(in.effKey)]; ok { // no allocation for the lookup
		return u
	}
	key := string(in.effKey)
	nR := in.nR
	most := make([]int64, nR)
	var heavy []int
	for k := 0; k < in.nK; k++ {
		if classes[k/64]&(1<<(k%64)) != 0 && in.group[k] < 0 {
			for j := 0; j < nR; j++ {
				most[j] = satAdd(most[j], satMul(in.count[k], in.dem[k*nR+j]))
			}
		}
	}
	for g, cap := range in.gcap {
		for j := 0; j < nR; j++ {
			heavy = heavy[:0]
			for k := 0; k < in.nK; k++ {
				if classes[k/64]&(1<<(k%64)) != 0 && in.group[k] == g {
					heavy = append(heavy, k)
				}
			}
			slices.SortFunc(heavy, func(a, b int) int { return cmp.Compare(in.dem[b*nR+j], in.dem[a*nR+j]) })
			left := cap
			for _, k := range heavy {
				q := min(in.count[k], left)
				most[j] = satAdd(most[j], satMul(q, in.dem[k*nR+j]))
				if left -= q; left == 0 {
					break
				}
			}
		}
	}
	cache[key] = most
	return most
}

// effective is a candidate's effective capacity (computed once): in each resource, the least of
// its capacity and the most its classes could use of one node, each class within its count and
// what fits alone, each group within its cap. A node never uses more, so a type at least that
// large (with the same classes) can hold every pattern of it.
func (in *instance) effective(c *candidate) []int64 {
	if c.eff != nil {
		return c.eff
	}
	nR := in.nR
	in.effU = grow64(in.effU, in.nK)
	in.effG = grow64(in.effG, len(in.gcap))
	u, groupPods := in.effU, in.effG
	clear(groupPods)
	ks, heavy := in.effKs[:0], in.effHeavy[:0]
	for w, word := range c.classes {
		for ; word != 0; word &= word - 1 {
			k := w*64 + bits.TrailingZeros64(word)
			q := in.count[k]
			g := in.group[k]
			if g >= 0 {
				q = min(q, in.gcap[g])
			}
			for j := 0; j < nR; j++ {
				if d := in.dem[k*nR+j]; d > 0 && satMul(q, d) > c.capa[j] {
					q = c.capa[j] / d
				}
			}
			u[k] = q
			ks = append(ks, k)
			if g >= 0 {
				groupPods[g] += q
			}
		}
	}
	eff := make([]int64, nR)
	for _, k := range ks {
		if g := in.group[k]; g < 0 || groupPods[g] <= in.gcap[g] {
			for j := 0; j < nR; j++ {
				eff[j] = satAdd(eff[j], satMul(u[k], in.dem[k*nR+j]))
			}
		}
	}
	for g, cap := range in.gcap {
		if groupPods[g] <= cap {
			continue // counted in full above
		}
		for j := 0; j < nR; j++ {
			// The group's heaviest pods in this resource, up to its cap.
			heavy = heavy[:0]
			for _, k := range ks {
				if in.group[k] == g && u[k] > 0 {
					heavy = append(heavy, k)
				}
			}
			slices.SortFunc(heavy, func(a, b int) int { return cmp.Compare(in.dem[b*nR+j], in.dem[a*nR+j]) })
			left := cap
			for _, k := range heavy {
				q := min(u[k], left)
				eff[j] = satAdd(eff[j], satMul(q, in.dem[k*nR+j]))
				if left -= q; left == 0 {
					break
				}
			}
		}
	}
	for j := range eff {
		eff[j] = min(eff[j], c.capa[j])
	}
	in.effKs, in.effHeavy = ks, heavy
	c.eff = eff
	return eff
}

func grow64(s []int64, n int) []int64 {
	if cap(s) < n {
		return make([]int64, n)
	}
	return s[:n]
}

// satAdd and satMul are a+b and a·b for non-negative values, saturating at the int64 maximum.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func satMul(a, b int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(lo)
}

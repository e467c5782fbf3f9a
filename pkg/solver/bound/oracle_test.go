package bound

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// bruteForce returns the exact optimum of a small problem (+Inf when infeasible), straight from
// the definition in Problem's docs and independent of the package's code: it buys nodes one at a
// time, each holding at least one pod of the first class with pods left (every packing can be
// listed that way), and memoizes on the pods and limited nodes left.
func bruteForce(p *Problem) float64 {
	b := brute{p: p, memo: map[string]float64{}}
	left := make([]int, len(p.Classes))
	for k, c := range p.Classes {
		left[k] = max(c.Count, 0)
	}
	limits := make([]int, len(p.Types))
	for t, ty := range p.Types {
		limits[t] = ty.MaxCount
	}
	return b.solve(left, limits)
}

type brute struct {
	p    *Problem
	memo map[string]float64
}

func (b *brute) solve(left, limits []int) float64 {
	first := slices.IndexFunc(left, func(n int) bool { return n > 0 })
	if first < 0 {
		return 0
	}
	key := fmt.Sprint(left, limits)
	if v, ok := b.memo[key]; ok {
		return v
	}
	best := math.Inf(1)
	for t := range b.p.Types {
		if limits[t] == 0 && b.p.Types[t].MaxCount > 0 {
			continue
		}
		if !b.allowed(first, t) {
			continue
		}
		take := make([]int, len(left))
		b.patterns(t, 0, take, left, first, func() {
			rest := slices.Clone(left)
			for k := range rest {
				rest[k] -= take[k]
			}
			lim := slices.Clone(limits)
			if b.p.Types[t].MaxCount > 0 {
				lim[t]--
			}
			best = min(best, b.p.Types[t].Price+b.solve(rest, lim))
		})
	}
	b.memo[key] = best
	return best
}

func (b *brute) allowed(k, t int) bool {
	return slices.Contains(b.p.Classes[k].Types, t)
}

// patterns calls f for every take ≤ left with take[first] ≥ 1 that fits one node of type t.
func (b *brute) patterns(t, k int, take, left []int, first int, f func()) {
	if k == len(left) {
		if take[first] > 0 && b.fits(t, take) {
			f()
		}
		return
	}
	hi := left[k]
	if hi > 0 && !b.allowed(k, t) {
		hi = 0
	}
	for q := 0; q <= hi; q++ {
		take[k] = q
		b.patterns(t, k+1, take, left, first, f)
	}
	take[k] = 0
}

// fits sums the take exactly (an amount beyond int64 fits nowhere) and compares it with the
// capacity of type t.
func (b *brute) fits(t int, take []int) bool {
	var used [scheduling.NumResources]uint64
	perGroup := make([]int, len(b.p.Groups))
	for k, q := range take {
		if q == 0 {
			continue
		}
		for r, d := range b.p.Classes[k].Demand {
			hi, lo := bits.Mul64(uint64(d), uint64(q))
			sum, carry := bits.Add64(used[r], lo, 0)
			if hi != 0 || carry != 0 || sum > math.MaxInt64 {
				return false
			}
			used[r] = sum
		}
		if g := b.p.Classes[k].Group; g >= 0 {
			perGroup[g] += q
		}
	}
	for g, n := range perGroup {
		if n > b.p.Groups[g].PerNode {
			return false
		}
	}
	for r, u := range used {
		if int64(u) > b.p.Types[t].Capacity[r] {
			return false
		}
	}
	return true
}

// describe prints a problem for failure messages.
func describe(p *Problem) string {
	var s strings.Builder
	for t, ty := range p.Types {
		fmt.Fprintf(&s, "type %d: $%g max=%d cap=%v\n", t, ty.Price, ty.MaxCount, short(ty.Capacity))
	}
	for k, c := range p.Classes {
		fmt.Fprintf(&s, "class %d: n=%d demand=%v types=%v group=%d\n", k, c.Count, short(c.Demand), c.Types, c.Group)
	}
	for g, gr := range p.Groups {
		fmt.Fprintf(&s, "group %d: perNode=%d\n", g, gr.PerNode)
	}
	return s.String()
}

func short(r scheduling.Resources) []int64 {
	return []int64{r[scheduling.CPU], r[scheduling.Memory], r[scheduling.Pods], r[scheduling.NvidiaGPU]}
}

package bound

import (
	"testing"

	"pgregory.net/rapid"
)

// TestDropDominated checks the sweep against the definition: a type is dropped exactly when an
// unlimited type dominates it, the first of identical types being kept.
func TestDropDominated(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 12).Draw(rt, "types")
		list := make([]*candidate, n)
		for i := range list {
			list[i] = &candidate{
				orig:    i,
				price:   float64(rapid.IntRange(0, 3).Draw(rt, "price")),
				capa:    []int64{int64(rapid.IntRange(1, 3).Draw(rt, "cpu")), int64(rapid.IntRange(1, 3).Draw(rt, "mem"))},
				limit:   int64(rapid.IntRange(0, 1).Draw(rt, "limit")),
				classes: []uint64{uint64(rapid.IntRange(1, 7).Draw(rt, "classes"))},
			}
			list[i].eff = list[i].capa
		}
		want := make([]bool, n)
		for si, s := range list {
			for ti, t := range list {
				if ti != si && t.limit == 0 && t.price <= s.price && dominates(t, s) &&
					!(s.limit == 0 && s.price <= t.price && dominates(s, t) && si < ti) {
					want[si] = true
				}
			}
		}
		capacity := func(c *candidate) []int64 { return c.capa }
		dropDominated(list, capacity, capacity)
		for i, c := range list {
			if c.dropped != want[i] {
				rt.Fatalf("type %d: dropped %v, want %v", i, c.dropped, want[i])
			}
		}
	})
}

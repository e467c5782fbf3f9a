package scheduling

import (
	"testing"

	"pgregory.net/rapid"
)

func TestPropertyBitsetMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 300).Draw(t, "n")
		a, b := NewBitset(n), NewBitset(n)
		ra, rb := map[int]bool{}, map[int]bool{}
		for _, i := range rapid.SliceOf(rapid.IntRange(0, n-1)).Draw(t, "a") {
			a.Set(i)
			ra[i] = true
		}
		for _, i := range rapid.SliceOf(rapid.IntRange(0, n-1)).Draw(t, "b") {
			b.Set(i)
			rb[i] = true
		}
		and := a.Clone()
		and.And(b)
		or := a.Clone()
		or.Or(b)
		andNot := a.Clone()
		andNot.AndNot(b)
		count, intersects := 0, false
		for i := 0; i < n; i++ {
			if and.Has(i) != (ra[i] && rb[i]) || or.Has(i) != (ra[i] || rb[i]) || andNot.Has(i) != (ra[i] && !rb[i]) {
				t.Fatalf("bit %d wrong", i)
			}
			if ra[i] {
				count++
			}
			intersects = intersects || (ra[i] && rb[i])
		}
		if a.Count() != count || a.Intersects(b) != intersects || a.IsEmpty() != (count == 0) {
			t.Fatalf("count/intersects/empty disagree with the reference")
		}
		seen := 0
		for i := a.Next(0); i >= 0; i = a.Next(i + 1) {
			if !ra[i] {
				t.Fatalf("Next visited %d, not a member", i)
			}
			seen++
		}
		if seen != count {
			t.Fatalf("Next visited %d members, want %d", seen, count)
		}
		if full := FullBitset(n); full.Count() != n || full.Has(n) {
			t.Fatalf("FullBitset(%d) wrong", n)
		}
	})
}

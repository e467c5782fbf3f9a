package static

import (
	"slices"
	"testing"
	"time"
)

func TestToRemoveCheapestFirst(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cs := []Candidate{
		{Name: "busy", Launched: true, Pods: 5, Created: t0},
		{Name: "protected", Launched: true, Pods: 0, DoNotDisrupt: true, Created: t0},
		{Name: "empty-old", Launched: true, Pods: 0, Created: t0},
		{Name: "pending", Launched: false, Created: t0},
		{Name: "empty-new", Launched: true, Pods: 0, Created: t0.Add(time.Minute)},
		{Name: "light", Launched: true, Pods: 1, Created: t0},
	}
	names := func(idx []int) []string {
		out := make([]string, len(idx))
		for i, j := range idx {
			out[i] = cs[j].Name
		}
		return out
	}
	want := []string{"pending", "empty-new", "empty-old", "light", "busy", "protected"}
	for n := 0; n <= len(cs)+1; n++ {
		got := names(ToRemove(cs, n))
		if w := want[:min(n, len(want))]; !slices.Equal(got, w) {
			t.Errorf("ToRemove(n=%d) = %v, want %v", n, got, w)
		}
	}
	if got := ToRemove(cs, -1); len(got) != 0 {
		t.Errorf("ToRemove(n=-1) = %v, want none", got)
	}
}

func TestToRemoveTiesByName(t *testing.T) {
	cs := []Candidate{{Name: "b", Launched: true}, {Name: "a", Launched: true}}
	if got := ToRemove(cs, 1); !slices.Equal(got, []int{1}) {
		t.Errorf("ToRemove = %v, want [1] (a before b)", got)
	}
}

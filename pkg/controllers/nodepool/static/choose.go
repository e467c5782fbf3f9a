package static

import (
	"cmp"
	"slices"
	"time"
)

// Candidate is one of a static NodePool's NodeClaims as scale-down weighs it.
type Candidate struct {
	Name string
	// Launched is set once the claim has a provider ID.
	Launched bool
	// Pods counts the pods bound to its node, DaemonSet pods excepted.
	Pods int
	// DoNotDisrupt is set when one of those pods carries an active karpenter.sh/do-not-disrupt.
	DoNotDisrupt bool
	Created      time.Time
}

// ToRemove returns the indexes of the n candidates cheapest to remove, in the order they
// should go: claims not launched yet first, then nodes without do-not-disrupt pods before
// those with one, then fewer pods first, then the newest, then by name, so the choice depends
// only on the input. n beyond len(cs) returns every index.
func ToRemove(cs []Candidate, n int) []int {
	idx := make([]int, len(cs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		x, y := &cs[a], &cs[b]
		if x.Launched != y.Launched {
			return boolOrder(x.Launched)
		}
		if x.DoNotDisrupt != y.DoNotDisrupt {
			return boolOrder(x.DoNotDisrupt)
		}
		if c := cmp.Compare(x.Pods, y.Pods); c != 0 {
			return c
		}
		if c := y.Created.Compare(x.Created); c != 0 {
			return c
		}
		return cmp.Compare(x.Name, y.Name)
	})
	return idx[:max(0, min(n, len(idx)))]
}

// boolOrder sorts false before true: it is the comparison of a set flag against an unset one.
func boolOrder(set bool) int {
	if set {
		return 1
	}
	return -1
}

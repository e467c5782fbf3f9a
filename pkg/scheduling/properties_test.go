package scheduling

import (
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"
)

// The generators draw from a small domain so that collisions (and empty intersections) are common.
var (
	genValues = []string{"a", "b", "c", "1", "2", "3", "5", "8", "03"}
	genOps    = []corev1.NodeSelectorOperator{
		corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists,
		corev1.NodeSelectorOpDoesNotExist, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt, OpGte, OpLte,
	}
)

// universe holds every label state that can tell two generated requirements apart: absence,
// each generated value, a fresh string, and every integer in range in plain and padded spellings.
// A NotIn can name at most two spellings of one integer ("3" and "03"), so a third ("003") stays
// a witness whenever the integer bounds admit the number.
var universe = func() []labelState {
	u := []labelState{{}}
	for _, v := range genValues {
		u = append(u, labelState{v, true})
	}
	u = append(u, labelState{"zz", true}, labelState{"99", true})
	for i := 0; i <= 15; i++ {
		u = append(u, labelState{strconv.Itoa(i), true}, labelState{"0" + strconv.Itoa(i), true},
			labelState{"00" + strconv.Itoa(i), true})
	}
	return u
}()

type labelState struct {
	v       string
	present bool
}

// atom is one operator as written in a manifest; reference evaluates it with Kubernetes'
// node-affinity rules, independently of Requirement.
type atom struct {
	op     corev1.NodeSelectorOperator
	values []string
}

func (a atom) reference(s labelState) bool {
	switch a.op {
	case corev1.NodeSelectorOpIn:
		return s.present && contains(a.values, s.v)
	case corev1.NodeSelectorOpNotIn:
		return !s.present || !contains(a.values, s.v)
	case corev1.NodeSelectorOpExists:
		return s.present
	case corev1.NodeSelectorOpDoesNotExist:
		return !s.present
	}
	if !s.present {
		return false
	}
	n, err := strconv.ParseInt(s.v, 10, 64)
	if err != nil || n < 0 {
		return false
	}
	bound, _ := strconv.ParseInt(a.values[0], 10, 64)
	switch a.op {
	case corev1.NodeSelectorOpGt:
		return n > bound
	case corev1.NodeSelectorOpLt:
		return n < bound
	case OpGte:
		return n >= bound
	default:
		return n <= bound
	}
}

func contains(vs []string, v string) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

func drawAtom(t *rapid.T, label string) atom {
	op := rapid.SampledFrom(genOps).Draw(t, label+"op")
	switch op {
	case corev1.NodeSelectorOpIn:
		return atom{op, rapid.SliceOfNDistinct(rapid.SampledFrom(genValues), 1, 4, rapid.ID[string]).Draw(t, label+"values")}
	case corev1.NodeSelectorOpNotIn:
		return atom{op, rapid.SliceOfNDistinct(rapid.SampledFrom(genValues), 0, 4, rapid.ID[string]).Draw(t, label+"values")}
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		return atom{op: op}
	}
	return atom{op, []string{strconv.Itoa(rapid.IntRange(0, 12).Draw(t, label+"bound"))}}
}

// drawRequirement returns a requirement built from one to three atoms, and its reference predicate.
func drawRequirement(t *rapid.T, label string) (Requirement, func(labelState) bool) {
	atoms := make([]atom, rapid.IntRange(1, 3).Draw(t, label+"n"))
	r := Unconstrained("k")
	for i := range atoms {
		atoms[i] = drawAtom(t, fmt.Sprintf("%s%d", label, i))
		r = r.Intersect(MustRequirement("k", atoms[i].op, atoms[i].values...))
	}
	return r, func(s labelState) bool {
		for _, a := range atoms {
			if !a.reference(s) {
				return false
			}
		}
		return true
	}
}

func TestPropertyIntersectMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r, ref := drawRequirement(t, "r")
		for _, s := range universe {
			if got, want := r.Matches(s.v, s.present), ref(s); got != want {
				t.Fatalf("%s on %+v: got %v, reference %v", r, s, got, want)
			}
		}
		someState := false
		for _, s := range universe {
			someState = someState || ref(s)
		}
		if r.IsEmpty() == someState {
			t.Fatalf("%s: IsEmpty=%v but the reference admits a state: %v", r, r.IsEmpty(), someState)
		}
	})
}

func TestPropertyIntersectAlgebra(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, _ := drawRequirement(t, "a")
		b, _ := drawRequirement(t, "b")
		c, _ := drawRequirement(t, "c")
		if ab, ba := a.Intersect(b), b.Intersect(a); !ab.Equal(ba) {
			t.Fatalf("not commutative: %s ∩ %s = %s but %s", a, b, ab, ba)
		}
		if l, r := a.Intersect(b).Intersect(c), a.Intersect(b.Intersect(c)); !l.Equal(r) {
			t.Fatalf("not associative: (%s ∩ %s) ∩ %s = %s but %s", a, b, c, l, r)
		}
		if aa := a.Intersect(a); !aa.Equal(a) {
			t.Fatalf("not idempotent: %s ∩ itself = %s", a, aa)
		}
	})
}

func TestPropertyCompatibleIffIntersectionNonEmpty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, refA := drawRequirement(t, "a")
		b, refB := drawRequirement(t, "b")
		witness := false
		for _, s := range universe {
			witness = witness || (refA(s) && refB(s))
		}
		compatible := Compatible(NewRequirements(a), NewRequirements(b), nil) == nil
		if compatible != !a.Intersect(b).IsEmpty() || compatible != witness {
			t.Fatalf("%s vs %s: Compatible=%v, intersection empty=%v, reference witness=%v",
				a, b, compatible, a.Intersect(b).IsEmpty(), witness)
		}
	})
}

// TestPropertyUndefinedKeys checks Compatible on keys only one side defines against the same
// reference: a node that leaves a key undefined has the label absent.
func TestPropertyUndefinedKeys(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p, ref := drawRequirement(t, "p")
		got := Compatible(Requirements{}, NewRequirements(p), nil) == nil
		if want := ref(labelState{}); got != want {
			t.Fatalf("pod %s against a node without the label: Compatible=%v, reference %v", p, got, want)
		}
		got = Compatible(Requirements{}, NewRequirements(p), AllowUndefined("k")) == nil
		if want := !p.IsEmpty(); got != want {
			t.Fatalf("pod %s against a node free on the key: Compatible=%v, want %v", p, got, want)
		}
	})
}

package scheduling

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Operators beyond the core NodeSelectorOperator set; NodePools and NodeClaims may use them.
const (
	OpGte corev1.NodeSelectorOperator = "Gte"
	OpLte corev1.NodeSelectorOperator = "Lte"
)

// Requirement is the set of label states allowed for one key (see the package documentation).
// The zero value allows nothing. Requirement is a value type: operations never modify their
// receiver or arguments.
//
// Representation: values is sorted and free of duplicates. If complement is false the allowed
// values are exactly values (already filtered by any bounds); if complement is true they are the
// integers within the bounds (or all values when there are no bounds) except values. absent says
// whether a node without the label is allowed.
type Requirement struct {
	Key        string
	complement bool
	absent     bool
	hasMin     bool
	hasMax     bool
	min, max   int64
	values     []string
	// MinValues is the least number of distinct values the key must keep across a claim's
	// instance-type options (0 when unconstrained).
	MinValues int
}

// NewRequirement builds the requirement for key, operator and values. It returns an error for an
// unknown operator, for In without values, for Gt/Lt/Gte/Lte without exactly one integer value,
// and for Exists/DoesNotExist with values.
func NewRequirement(key string, op corev1.NodeSelectorOperator, values ...string) (Requirement, error) {
	r := Requirement{Key: key}
	switch op {
	case corev1.NodeSelectorOpIn:
		if len(values) == 0 {
			return Requirement{}, fmt.Errorf("requirement %s In needs at least one value", key)
		}
		r.values = normalize(values)
	case corev1.NodeSelectorOpNotIn:
		r.complement, r.absent = true, true
		r.values = normalize(values)
	case corev1.NodeSelectorOpExists:
		if len(values) != 0 {
			return Requirement{}, fmt.Errorf("requirement %s Exists takes no values, got %v", key, values)
		}
		r.complement = true
	case corev1.NodeSelectorOpDoesNotExist:
		if len(values) != 0 {
			return Requirement{}, fmt.Errorf("requirement %s DoesNotExist takes no values, got %v", key, values)
		}
		r.absent = true
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt, OpGte, OpLte:
		if len(values) != 1 {
			return Requirement{}, fmt.Errorf("requirement %s %s needs exactly one integer value, got %d values", key, op, len(values))
		}
		n, err := strconv.ParseInt(values[0], 10, 64)
		if err != nil {
			return Requirement{}, fmt.Errorf("requirement %s %s needs an integer value, got %q", key, op, values[0])
		}
		r.complement = true
		switch op {
		case corev1.NodeSelectorOpGt:
			if n == math.MaxInt64 {
				return emptyRequirement(key), nil
			}
			r.hasMin, r.min = true, n+1
		case OpGte:
			r.hasMin, r.min = true, n
		case corev1.NodeSelectorOpLt:
			if n == math.MinInt64 {
				return emptyRequirement(key), nil
			}
			r.hasMax, r.max = true, n-1
		case OpLte:
			r.hasMax, r.max = true, n
		}
	default:
		return Requirement{}, fmt.Errorf("requirement %s has unknown operator %q", key, op)
	}
	return r.canonical(), nil
}

// MustRequirement is NewRequirement for literals known to be valid; it panics otherwise.
func MustRequirement(key string, op corev1.NodeSelectorOperator, values ...string) Requirement {
	r, err := NewRequirement(key, op, values...)
	if err != nil {
		panic(err)
	}
	return r
}

// In is the requirement that key has one of values.
func In(key string, values ...string) Requirement {
	return Requirement{Key: key, values: normalize(values)}
}

// NotIn is the requirement that key is absent or has none of values.
func NotIn(key string, values ...string) Requirement {
	return Requirement{Key: key, complement: true, absent: true, values: normalize(values)}
}

// Exists is the requirement that key is present with any value.
func Exists(key string) Requirement { return Requirement{Key: key, complement: true} }

// DoesNotExist is the requirement that key is absent.
func DoesNotExist(key string) Requirement { return Requirement{Key: key, absent: true} }

// Unconstrained allows every state of key, absent included.
func Unconstrained(key string) Requirement {
	return Requirement{Key: key, complement: true, absent: true}
}

func emptyRequirement(key string) Requirement { return Requirement{Key: key} }

func normalize(values []string) []string {
	if len(values) == 0 {
		return nil
	}
	out := slices.Clone(values)
	slices.Sort(out)
	return slices.Compact(out)
}

// canonical brings r into the one representation of its set, so that equal sets compare equal.
func (r Requirement) canonical() Requirement {
	// Label values are never negative numbers ("-1" is not a valid label value), so a lower
	// bound below zero says nothing more than zero does.
	if r.hasMin && r.min < 0 {
		r.min = 0
	}
	if r.hasMax || r.hasMin {
		lo, hi := r.bounds()
		if lo > hi {
			// No integer satisfies the bounds: only absence may remain.
			r.complement, r.values, r.hasMin, r.hasMax = false, nil, false, false
			return r
		}
		if !r.complement {
			r.values = slices.DeleteFunc(slices.Clone(r.values), func(v string) bool { return !r.withinBounds(v) })
			r.hasMin, r.hasMax = false, false
		} else {
			// Excluded values the bounds exclude anyway carry no information.
			r.values = slices.DeleteFunc(slices.Clone(r.values), func(v string) bool { return !r.withinBounds(v) })
		}
	}
	if len(r.values) == 0 {
		r.values = nil
	}
	return r
}

func (r Requirement) bounds() (int64, int64) {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if r.hasMin {
		lo = r.min
	}
	if r.hasMax {
		hi = r.max
	}
	if lo < 0 {
		lo = 0
	}
	return lo, hi
}

func (r Requirement) withinBounds(v string) bool {
	if !r.hasMin && !r.hasMax {
		return true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return false
	}
	lo, hi := r.bounds()
	return n >= lo && n <= hi
}

// Intersect returns the states allowed by both r and o. The key of the result is r's key.
func (r Requirement) Intersect(o Requirement) Requirement {
	out := Requirement{
		Key:       r.Key,
		absent:    r.absent && o.absent,
		MinValues: max(r.MinValues, o.MinValues),
	}
	out.hasMin, out.min = mergeMin(r, o)
	out.hasMax, out.max = mergeMax(r, o)
	switch {
	case r.complement && o.complement:
		out.complement = true
		out.values = union(r.values, o.values)
	case r.complement:
		out.values = difference(o.values, r.values)
	case o.complement:
		out.values = difference(r.values, o.values)
	default:
		out.values = intersection(r.values, o.values)
	}
	return out.canonical()
}

func mergeMin(a, b Requirement) (bool, int64) {
	switch {
	case a.hasMin && b.hasMin:
		return true, max(a.min, b.min)
	case a.hasMin:
		return true, a.min
	case b.hasMin:
		return true, b.min
	}
	return false, 0
}

func mergeMax(a, b Requirement) (bool, int64) {
	switch {
	case a.hasMax && b.hasMax:
		return true, min(a.max, b.max)
	case a.hasMax:
		return true, a.max
	case b.hasMax:
		return true, b.max
	}
	return false, 0
}

// Has reports whether a node whose label key has value v satisfies r.
func (r Requirement) Has(v string) bool {
	_, found := slices.BinarySearch(r.values, v)
	if r.complement {
		return !found && r.withinBounds(v)
	}
	return found
}

// AllowsAbsent reports whether a node without the label satisfies r.
func (r Requirement) AllowsAbsent() bool { return r.absent }

// Matches reports whether a node's label state satisfies r: present with value v, or absent.
func (r Requirement) Matches(v string, present bool) bool {
	if !present {
		return r.absent
	}
	return r.Has(v)
}

// IsEmpty reports whether no label state satisfies r.
func (r Requirement) IsEmpty() bool { return !r.absent && !r.complement && len(r.values) == 0 }

// AllowsSomeValue reports whether some present value satisfies r.
func (r Requirement) AllowsSomeValue() bool { return r.complement || len(r.values) > 0 }

// IsComplement reports whether r is defined by what it excludes (NotIn, Exists, Gt, ...), so that
// its allowed values are unbounded.
func (r Requirement) IsComplement() bool { return r.complement }

// Values returns the allowed values when r is not a complement, or the excluded ones when it is.
// The slice is shared; do not modify it.
func (r Requirement) Values() []string { return r.values }

// Len is the number of allowed values, or math.MaxInt when they are unbounded.
func (r Requirement) Len() int {
	if r.complement {
		return math.MaxInt
	}
	return len(r.values)
}

// Bounds returns the integer bounds (inclusive) of a complement requirement.
func (r Requirement) Bounds() (min int64, hasMin bool, max int64, hasMax bool) {
	return r.min, r.hasMin, r.max, r.hasMax
}

// Operator returns the operator that best describes r, as it would be written in a manifest.
func (r Requirement) Operator() corev1.NodeSelectorOperator {
	switch {
	case r.complement && (r.hasMin || r.hasMax):
		if r.hasMin {
			return OpGte
		}
		return OpLte
	case r.complement && len(r.values) > 0:
		return corev1.NodeSelectorOpNotIn
	case r.complement && r.absent:
		return corev1.NodeSelectorOpExists // unconstrained; closest single operator
	case r.complement:
		return corev1.NodeSelectorOpExists
	case len(r.values) > 0:
		return corev1.NodeSelectorOpIn
	default:
		return corev1.NodeSelectorOpDoesNotExist
	}
}

// Any returns one value r allows, chosen deterministically (the least allowed value), or "" when
// r allows no value.
func (r Requirement) Any() string {
	if !r.complement {
		if len(r.values) == 0 {
			return ""
		}
		return r.values[0]
	}
	if r.hasMin || r.hasMax {
		lo, hi := r.bounds()
		// At most len(values) integers are excluded, so one of the first len(values)+1 is free.
		for n := lo; n <= hi && n-lo <= int64(len(r.values)); n++ {
			if s := strconv.FormatInt(n, 10); r.Has(s) {
				return s
			}
		}
		return ""
	}
	for i := 0; ; i++ {
		s := "tenon-" + strconv.Itoa(i)
		if r.Has(s) {
			return s
		}
	}
}

// Equal reports whether r and o allow the same states (keys and MinValues included).
func (r Requirement) Equal(o Requirement) bool {
	return r.Key == o.Key && r.complement == o.complement && r.absent == o.absent &&
		r.hasMin == o.hasMin && r.hasMax == o.hasMax &&
		(!r.hasMin || r.min == o.min) && (!r.hasMax || r.max == o.max) &&
		r.MinValues == o.MinValues && slices.Equal(r.values, o.values)
}

// NodeSelectorRequirements returns r written as node-selector requirements (their conjunction
// is r). Unconstrained requirements produce none.
func (r Requirement) NodeSelectorRequirements() []corev1.NodeSelectorRequirement {
	switch {
	case r.IsEmpty():
		// Nothing is allowed: In with no values cannot be written, so use two contradicting terms.
		return []corev1.NodeSelectorRequirement{
			{Key: r.Key, Operator: corev1.NodeSelectorOpExists},
			{Key: r.Key, Operator: corev1.NodeSelectorOpDoesNotExist},
		}
	case !r.complement && len(r.values) == 0:
		return []corev1.NodeSelectorRequirement{{Key: r.Key, Operator: corev1.NodeSelectorOpDoesNotExist}}
	case !r.complement:
		return []corev1.NodeSelectorRequirement{{Key: r.Key, Operator: corev1.NodeSelectorOpIn, Values: slices.Clone(r.values)}}
	}
	var out []corev1.NodeSelectorRequirement
	if len(r.values) > 0 {
		out = append(out, corev1.NodeSelectorRequirement{Key: r.Key, Operator: corev1.NodeSelectorOpNotIn, Values: slices.Clone(r.values)})
	}
	if r.hasMin {
		out = append(out, corev1.NodeSelectorRequirement{Key: r.Key, Operator: OpGte, Values: []string{strconv.FormatInt(r.min, 10)}})
	}
	if r.hasMax {
		out = append(out, corev1.NodeSelectorRequirement{Key: r.Key, Operator: OpLte, Values: []string{strconv.FormatInt(r.max, 10)}})
	}
	if !r.absent && len(r.values) > 0 && !r.hasMin && !r.hasMax {
		out = append(out, corev1.NodeSelectorRequirement{Key: r.Key, Operator: corev1.NodeSelectorOpExists})
	}
	if !r.absent && len(out) == 0 {
		out = append(out, corev1.NodeSelectorRequirement{Key: r.Key, Operator: corev1.NodeSelectorOpExists})
	}
	return out
}

// String formats r as it would read in a manifest, e.g. "zone In [a b]"; a requirement that
// needs several operators lists them joined by " and ".
func (r Requirement) String() string {
	if r.IsEmpty() {
		return r.Key + " (nothing allowed)"
	}
	var parts []string
	for _, nsr := range r.NodeSelectorRequirements() {
		if len(nsr.Values) == 0 {
			parts = append(parts, string(nsr.Operator))
		} else {
			parts = append(parts, fmt.Sprintf("%s [%s]", nsr.Operator, strings.Join(nsr.Values, " ")))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "(any)")
	}
	s := r.Key + " " + strings.Join(parts, " and ")
	if r.MinValues > 0 {
		s += fmt.Sprintf(" minValues %d", r.MinValues)
	}
	return s
}

func union(a, b []string) []string {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	out := make([]string, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch c := strings.Compare(a[i], b[j]); {
		case c < 0:
			out = append(out, a[i])
			i++
		case c > 0:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

func intersection(a, b []string) []string {
	var out []string
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch c := strings.Compare(a[i], b[j]); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}

// difference returns a \ b.
func difference(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	var out []string
	j := 0
	for _, v := range a {
		for j < len(b) && b[j] < v {
			j++
		}
		if j < len(b) && b[j] == v {
			continue
		}
		out = append(out, v)
	}
	return out
}

package scheduling

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// FieldNodeName is the pseudo label key under which a node-selector term's matchFields on
// metadata.name is kept. Only existing nodes define it, so a pod pinned to a node by name never
// asks for a new one.
const FieldNodeName = "metadata.name"

// Requirements is a conjunction of Requirements on distinct keys, kept sorted by key. The zero
// value constrains nothing. It is a value type: operations return new values.
type Requirements struct {
	items []Requirement
}

// NewRequirements returns the conjunction of rs; requirements on the same key are intersected.
func NewRequirements(rs ...Requirement) Requirements {
	items := slices.Clone(rs)
	slices.SortStableFunc(items, func(a, b Requirement) int { return strings.Compare(a.Key, b.Key) })
	out := items[:0]
	for _, r := range items {
		if n := len(out); n > 0 && out[n-1].Key == r.Key {
			out[n-1] = out[n-1].Intersect(r)
			continue
		}
		out = append(out, r)
	}
	return Requirements{items: out}
}

// FromLabels returns the requirements that a node carrying exactly these labels satisfies on
// their keys: key In [value] for each label. Node selectors are read the same way.
func FromLabels(labels map[string]string) Requirements {
	items := make([]Requirement, 0, len(labels))
	for k, v := range labels {
		items = append(items, Requirement{Key: k, values: []string{v}})
	}
	slices.SortFunc(items, func(a, b Requirement) int { return strings.Compare(a.Key, b.Key) })
	return Requirements{items: items}
}

// FromNodeSelectorRequirements parses node-selector requirements (Gte and Lte included), with
// deprecated label keys rewritten to their current names. The error names the offending
// requirement.
func FromNodeSelectorRequirements(nsrs ...corev1.NodeSelectorRequirement) (Requirements, error) {
	var out Requirements
	for i, nsr := range nsrs {
		r, err := NewRequirement(NormalizeKey(nsr.Key), nsr.Operator, nsr.Values...)
		if err != nil {
			return Requirements{}, fmt.Errorf("requirement %d: %w", i, err)
		}
		out = out.Add(r)
	}
	return out, nil
}

// FromNodeSelectorTerm parses one node-selector term. A term with neither expressions nor
// fields matches no node (as in kube-scheduler); ok is false for it. matchFields may only name
// metadata.name, which becomes a requirement on FieldNodeName.
func FromNodeSelectorTerm(term corev1.NodeSelectorTerm) (reqs Requirements, ok bool, err error) {
	if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
		return Requirements{}, false, nil
	}
	reqs, err = FromNodeSelectorRequirements(term.MatchExpressions...)
	if err != nil {
		return Requirements{}, false, err
	}
	for i, f := range term.MatchFields {
		if f.Key != FieldNodeName {
			return Requirements{}, false, fmt.Errorf("matchFields %d: only %s is supported, got %q", i, FieldNodeName, f.Key)
		}
		if f.Operator != corev1.NodeSelectorOpIn && f.Operator != corev1.NodeSelectorOpNotIn {
			return Requirements{}, false, fmt.Errorf("matchFields %d: operator must be In or NotIn for %s, got %q", i, FieldNodeName, f.Operator)
		}
		if len(f.Values) != 1 {
			return Requirements{}, false, fmt.Errorf("matchFields %d: %s needs exactly one value, got %d", i, FieldNodeName, len(f.Values))
		}
		r, err := NewRequirement(FieldNodeName, f.Operator, f.Values...)
		if err != nil {
			return Requirements{}, false, fmt.Errorf("matchFields %d: %w", i, err)
		}
		reqs = reqs.Add(r)
	}
	return reqs, true, nil
}

// NormalizeKey rewrites a deprecated well-known label key to the key tenon uses.
func NormalizeKey(key string) string {
	if k, ok := apisv1.NormalizedLabels[key]; ok {
		return k
	}
	return key
}

// Len is the number of constrained keys.
func (rs Requirements) Len() int { return len(rs.items) }

// Items returns the requirements in key order. The slice is shared; do not modify it.
func (rs Requirements) Items() []Requirement { return rs.items }

// Keys returns the constrained keys in order.
func (rs Requirements) Keys() []string {
	keys := make([]string, len(rs.items))
	for i, r := range rs.items {
		keys[i] = r.Key
	}
	return keys
}

func (rs Requirements) find(key string) (int, bool) {
	return slices.BinarySearchFunc(rs.items, key, func(r Requirement, k string) int { return strings.Compare(r.Key, k) })
}

// Has reports whether key is constrained.
func (rs Requirements) Has(key string) bool {
	_, ok := rs.find(key)
	return ok
}

// Get returns the requirement on key; an unconstrained key yields Unconstrained(key), false.
func (rs Requirements) Get(key string) (Requirement, bool) {
	if i, ok := rs.find(key); ok {
		return rs.items[i], true
	}
	return Unconstrained(key), false
}

// Add returns rs with r intersected in.
func (rs Requirements) Add(r Requirement) Requirements {
	i, ok := rs.find(r.Key)
	items := make([]Requirement, 0, len(rs.items)+1)
	items = append(items, rs.items[:i]...)
	if ok {
		items = append(items, rs.items[i].Intersect(r))
		items = append(items, rs.items[i+1:]...)
	} else {
		items = append(items, r)
		items = append(items, rs.items[i:]...)
	}
	return Requirements{items: items}
}

// Without returns rs with key unconstrained.
func (rs Requirements) Without(key string) Requirements {
	i, ok := rs.find(key)
	if !ok {
		return rs
	}
	return Requirements{items: slices.Concat(rs.items[:i], rs.items[i+1:])}
}

// Intersect returns the conjunction of rs and o.
func (rs Requirements) Intersect(o Requirements) Requirements {
	if len(o.items) == 0 {
		return rs
	}
	if len(rs.items) == 0 {
		return o
	}
	items := make([]Requirement, 0, len(rs.items)+len(o.items))
	i, j := 0, 0
	for i < len(rs.items) && j < len(o.items) {
		a, b := rs.items[i], o.items[j]
		switch c := strings.Compare(a.Key, b.Key); {
		case c < 0:
			items = append(items, a)
			i++
		case c > 0:
			items = append(items, b)
			j++
		default:
			items = append(items, a.Intersect(b))
			i++
			j++
		}
	}
	items = append(items, rs.items[i:]...)
	items = append(items, o.items[j:]...)
	return Requirements{items: items}
}

// IsSatisfiable reports whether some node could satisfy every requirement.
func (rs Requirements) IsSatisfiable() bool {
	for _, r := range rs.items {
		if r.IsEmpty() {
			return false
		}
	}
	return true
}

// Equal reports whether rs and o constrain the same keys the same way.
func (rs Requirements) Equal(o Requirements) bool {
	return slices.EqualFunc(rs.items, o.items, Requirement.Equal)
}

// Undefined says how a key that the node side does not constrain is read by Compatible.
type Undefined func(key string) bool

// AllowUndefined returns an Undefined that treats the given keys, when unconstrained on the node
// side, as free (a provider will set them to whatever the other side needs) instead of absent.
func AllowUndefined(keys ...string) Undefined {
	set := slices.Clone(keys)
	slices.Sort(set)
	return func(k string) bool { _, ok := slices.BinarySearch(set, k); return ok }
}

// AllowUndefinedWellKnown treats the well-known labels (zone, instance type, capacity type,
// instance shape, ...) as free when the node side leaves them unconstrained.
var AllowUndefinedWellKnown Undefined = apisv1.IsWellKnownLabel

// Incompatibility explains why two sets of requirements cannot both hold. It is data, not text:
// Error formats it at the edge.
type Incompatibility struct {
	Key string
	// Node is what the node side allows for Key (DoesNotExist when it leaves Key undefined).
	Node Requirement
	// Pod is what the other side asks for Key.
	Pod Requirement
	// Undefined is true when the node side does not define Key at all.
	Undefined bool
}

func (e *Incompatibility) Error() string {
	if e.Undefined {
		return fmt.Sprintf("requirement %s cannot be met: label %s is not defined", e.Pod, e.Key)
	}
	return fmt.Sprintf("requirement %s does not intersect %s", e.Pod, e.Node)
}

// Compatible reports whether a node constrained by node could also satisfy pod: for every key
// the two sides' allowed states must intersect. A key the node side leaves unconstrained means
// the label will be absent, unless undefined says it is free; a key the pod side leaves
// unconstrained is free. It returns nil when compatible. It does not allocate unless it fails.
func Compatible(node, pod Requirements, undefined Undefined) *Incompatibility {
	i, j := 0, 0
	for i < len(node.items) || j < len(pod.items) {
		var c int
		switch {
		case i == len(node.items):
			c = 1
		case j == len(pod.items):
			c = -1
		default:
			c = strings.Compare(node.items[i].Key, pod.items[j].Key)
		}
		switch {
		case c < 0:
			if n := node.items[i]; n.IsEmpty() {
				return &Incompatibility{Key: n.Key, Node: n, Pod: Unconstrained(n.Key)}
			}
			i++
		case c > 0:
			p := pod.items[j]
			if undefined != nil && undefined(p.Key) {
				if p.IsEmpty() {
					return &Incompatibility{Key: p.Key, Node: Unconstrained(p.Key), Pod: p}
				}
			} else if !p.absent {
				return &Incompatibility{Key: p.Key, Node: DoesNotExist(p.Key), Pod: p, Undefined: true}
			}
			j++
		default:
			if n, p := node.items[i], pod.items[j]; !intersects(n, p) {
				return &Incompatibility{Key: n.Key, Node: n, Pod: p}
			}
			i++
			j++
		}
	}
	return nil
}

// intersects reports whether a.Intersect(b) is not empty, without building it.
func intersects(a, b Requirement) bool {
	if a.absent && b.absent {
		return true
	}
	switch {
	case a.complement && b.complement:
		lo := max(lowerBound(a), lowerBound(b))
		hi := min(upperBound(a), upperBound(b))
		// Infinitely many strings (or decimal spellings of an integer, "7", "07", ...) remain
		// once finitely many are excluded.
		return lo <= hi
	case a.complement:
		return anyAllowed(b.values, a)
	case b.complement:
		return anyAllowed(a.values, b)
	default:
		return sharesValue(a.values, b.values)
	}
}

// sharesValue reports whether two sorted slices have a common element.
func sharesValue(a, b []string) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch c := strings.Compare(a[i], b[j]); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			return true
		}
	}
	return false
}

func lowerBound(r Requirement) int64 {
	lo, _ := r.bounds()
	return lo
}

func upperBound(r Requirement) int64 {
	_, hi := r.bounds()
	return hi
}

func anyAllowed(values []string, r Requirement) bool {
	for _, v := range values {
		if r.Has(v) {
			return true
		}
	}
	return false
}

// Matches reports whether a node with exactly these labels satisfies rs, and if not, which
// requirement it fails. Keys the node lacks are absent.
func (rs Requirements) Matches(labels map[string]string) *Incompatibility {
	for _, r := range rs.items {
		v, ok := labels[r.Key]
		if !r.Matches(v, ok) {
			node := DoesNotExist(r.Key)
			if ok {
				node = In(r.Key, v)
			}
			return &Incompatibility{Key: r.Key, Node: node, Pod: r, Undefined: !ok}
		}
	}
	return nil
}

// Labels returns labels that satisfy rs, for tenon to write onto a node: one allowed value for
// every key that must be present (the least one, so the result is deterministic). Well-known and
// restricted labels are left out: the provider sets those to what it actually launched.
func (rs Requirements) Labels() map[string]string {
	labels := map[string]string{}
	for _, r := range rs.items {
		if apisv1.IsRestrictedNodeLabel(r.Key) || r.Key == FieldNodeName || r.absent {
			continue
		}
		if v := r.Any(); v != "" {
			labels[r.Key] = v
		}
	}
	return labels
}

// NodeSelectorRequirements writes rs as node-selector requirements, e.g. for a NodeClaim's spec.
func (rs Requirements) NodeSelectorRequirements() []corev1.NodeSelectorRequirement {
	var out []corev1.NodeSelectorRequirement
	for _, r := range rs.items {
		out = append(out, r.NodeSelectorRequirements()...)
	}
	return out
}

// String formats rs as "k1 In [a], k2 Exists".
func (rs Requirements) String() string {
	parts := make([]string, len(rs.items))
	for i, r := range rs.items {
		parts[i] = r.String()
	}
	return strings.Join(parts, ", ")
}

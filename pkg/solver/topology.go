package solver

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// A topology dimension is a label key pods spread over or co-locate by. Hostname, zone and
// capacity type are built in; any other key gets a custom dimension.
const (
	dimHostname = iota
	dimZone
	dimCapacityType
	numBuiltinDims
)

type groupKind uint8

const (
	kindSpread groupKind = iota
	kindAffinity
	kindAnti
)

// group counts, per domain of one dimension, the pods a selector selects. Terms with the same
// kind, key, namespaces and selector share a group.
type group struct {
	id         string
	kind       groupKind
	dim        int
	selector   labels.Selector
	namespaces []string        // sorted; nil with allNamespaces false means "the term's own namespace" (already resolved)
	nsSelector labels.Selector // nil: none
	// counts[d] is the number of selected pods in domain d; owners[d] the number of pods whose
	// required anti-affinity term this group is (they repel selected pods from d).
	counts []int32
	firm   []int32
	owners []int32
	total  int32
	// pendingSelf counts the pending pods whose own term this group is and that it selects
	// (pods that need a node, or zone, of their own within the group).
	pendingSelf int32
	// For hostname groups of self-selecting terms: cap is how many selected pods one node may
	// hold (1 for anti-affinity, maxSkew for spreads), fullClaims how many new claims hold that
	// many, pools the pools its pods may use, and claimBase the first hostname domain of a new
	// claim.
	cap        int32
	fullClaims int32
	// maxSkew is the least maxSkew of the DoNotSchedule spread terms of this group.
	maxSkew   int32
	pools     uint64
	claimBase int
}

func (g *group) count(d int) int32 {
	if d < 0 || d >= len(g.counts) {
		return 0
	}
	return g.counts[d]
}

func (g *group) firmCount(d int) int32 {
	if d < 0 || d >= len(g.firm) {
		return 0
	}
	return g.firm[d]
}

func (g *group) ownerCount(d int) int32 {
	if d < 0 || d >= len(g.owners) {
		return 0
	}
	return g.owners[d]
}

func grow(s []int32, d int) []int32 {
	if d < len(s) {
		return s
	}
	return append(s, make([]int32, d+1-len(s))...)
}

// add counts n more selected pods in domain d; firm pods (running, or carrying one of the
// group's hard spread terms) also count towards the least-filled domain.
func (g *group) add(d int, n int32, firm bool) {
	if d < 0 {
		return
	}
	if firm {
		g.firm = grow(g.firm, d)
		g.firm[d] += n
	}
	g.counts = grow(g.counts, d)
	before := g.counts[d]
	g.counts[d] += n
	g.total += n
	if g.dim == dimHostname && g.cap > 0 && d >= g.claimBase && before < g.cap && g.counts[d] >= g.cap {
		g.fullClaims++
	}
}

func (g *group) addOwners(d int, n int32) {
	if d < 0 {
		return
	}
	g.owners = grow(g.owners, d)
	g.owners[d] += n
}

// selects reports whether the group's selector selects a pod in namespace ns with these labels.
func (g *group) selects(t *topology, ns string, lbls map[string]string) bool {
	inScope := false
	if _, ok := slices.BinarySearch(g.namespaces, ns); ok {
		inScope = true
	} else if g.nsSelector != nil {
		inScope = g.nsSelector.Matches(labels.Set(t.nsLabels[ns]))
	}
	return inScope && g.selector.Matches(labels.Set(lbls))
}

// spreadTerm is a topology spread constraint of a class.
type spreadTerm struct {
	g             *group
	maxSkew       int32
	minDomains    int32
	hard          bool // DoNotSchedule; ScheduleAnyway terms are enforced until relaxed
	active        bool
	honorAffinity bool
	honorTaints   bool
	self          bool // the class's own pods are selected
}

// affinityTerm is a pod affinity or anti-affinity term of a class.
type affinityTerm struct {
	g      *group
	weight int32 // 0 for required terms
	active bool
	self   bool
}

// topology holds every group, the dimensions, and the namespace labels.
type topology struct {
	s        *solve
	dims     []string // label key per dimension
	dimIndex map[string]int
	// values interns the label values of custom dimensions: values[d][v] is value v of dim d.
	values   [][]string
	valueIdx []map[string]int
	groups   map[string]*group
	order    []*group // groups in creation order, for determinism
	nsLabels map[string]map[string]string
}

func newTopology(s *solve) *topology {
	t := &topology{
		s:        s,
		dims:     []string{apisv1.LabelHostname, apisv1.LabelZone, apisv1.CapacityTypeLabelKey},
		dimIndex: map[string]int{apisv1.LabelHostname: dimHostname, apisv1.LabelZone: dimZone, apisv1.CapacityTypeLabelKey: dimCapacityType},
		values:   make([][]string, numBuiltinDims),
		valueIdx: make([]map[string]int, numBuiltinDims),
		groups:   map[string]*group{},
		nsLabels: s.snap.NamespaceLabels,
	}
	return t
}

// dim returns the dimension of a topology key, creating a custom one when needed.
func (t *topology) dim(key string) int {
	if d, ok := t.dimIndex[key]; ok {
		return d
	}
	d := len(t.dims)
	t.dims = append(t.dims, key)
	t.dimIndex[key] = d
	t.values = append(t.values, nil)
	t.valueIdx = append(t.valueIdx, map[string]int{})
	return d
}

// value interns a value of a custom dimension.
func (t *topology) value(d int, v string) int {
	if i, ok := t.valueIdx[d][v]; ok {
		return i
	}
	i := len(t.values[d])
	t.values[d] = append(t.values[d], v)
	t.valueIdx[d][v] = i
	return i
}

// domainOfLabels returns the domain of a node with these labels in dimension d (-1 if the node
// lacks the label). Hostname domains are target indices and are not derived here.
func (t *topology) domainOfLabels(d int, lbls map[string]string) int {
	v, ok := lbls[t.dims[d]]
	if !ok {
		return -1
	}
	switch d {
	case dimZone:
		if z, ok := t.s.zoneIndex[v]; ok {
			return z
		}
		return -1
	case dimCapacityType:
		return ctIndex(v)
	}
	return t.value(d, v)
}

func groupID(kind groupKind, key string, ns []string, nsSel labels.Selector, sel labels.Selector) string {
	nsKey := strings.Join(ns, ",")
	if nsSel != nil {
		nsKey += "|" + nsSel.String()
	}
	return fmt.Sprintf("%d/%s/%s/%s", kind, key, nsKey, sel.String())
}

func (t *topology) group(kind groupKind, key string, ns []string, nsSel labels.Selector, sel labels.Selector) *group {
	id := groupID(kind, key, ns, nsSel, sel)
	if g, ok := t.groups[id]; ok {
		return g
	}
	g := &group{id: id, kind: kind, dim: t.dim(key), selector: sel, namespaces: ns, nsSelector: nsSel}
	t.groups[id] = g
	t.order = append(t.order, g)
	return g
}

// compileTerms reads a pod's topology spread constraints and pod (anti-)affinity into terms.
func (t *topology) compileTerms(c *class, pod *corev1.Pod) error {
	for i := range pod.Spec.TopologySpreadConstraints {
		tsc := &pod.Spec.TopologySpreadConstraints[i]
		sel, err := mergedSelector(tsc.LabelSelector, tsc.MatchLabelKeys, pod.Labels)
		if err != nil {
			return fmt.Errorf("topology spread constraint %d: %w", i, err)
		}
		if tsc.MaxSkew < 1 {
			return fmt.Errorf("topology spread constraint %d: maxSkew must be at least 1, got %d", i, tsc.MaxSkew)
		}
		term := &spreadTerm{
			g:             t.group(kindSpread, tsc.TopologyKey, []string{pod.Namespace}, nil, sel),
			maxSkew:       tsc.MaxSkew,
			hard:          tsc.WhenUnsatisfiable != corev1.ScheduleAnyway,
			active:        true,
			honorAffinity: tsc.NodeAffinityPolicy == nil || *tsc.NodeAffinityPolicy == corev1.NodeInclusionPolicyHonor,
			honorTaints:   tsc.NodeTaintsPolicy != nil && *tsc.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor,
		}
		if tsc.MinDomains != nil {
			term.minDomains = *tsc.MinDomains
		}
		c.spreads = append(c.spreads, term)
	}
	aff := pod.Spec.Affinity
	if aff == nil {
		return nil
	}
	add := func(kind groupKind, term *corev1.PodAffinityTerm, weight int32) (*affinityTerm, error) {
		sel, err := affinitySelector(term, pod.Labels)
		if err != nil {
			return nil, err
		}
		ns, nsSel, err := termNamespaces(term, pod.Namespace)
		if err != nil {
			return nil, err
		}
		if term.TopologyKey == "" {
			return nil, fmt.Errorf("pod affinity term has no topologyKey")
		}
		return &affinityTerm{g: t.group(kind, term.TopologyKey, ns, nsSel, sel), weight: weight, active: true}, nil
	}
	if pa := aff.PodAffinity; pa != nil {
		for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
			at, err := add(kindAffinity, &pa.RequiredDuringSchedulingIgnoredDuringExecution[i], 0)
			if err != nil {
				return fmt.Errorf("pod affinity term %d: %w", i, err)
			}
			c.affinity = append(c.affinity, at)
		}
		for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			w := &pa.PreferredDuringSchedulingIgnoredDuringExecution[i]
			at, err := add(kindAffinity, &w.PodAffinityTerm, max(w.Weight, 1))
			if err != nil {
				return fmt.Errorf("preferred pod affinity term %d: %w", i, err)
			}
			c.affinity = append(c.affinity, at)
		}
	}
	if pa := aff.PodAntiAffinity; pa != nil {
		for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
			at, err := add(kindAnti, &pa.RequiredDuringSchedulingIgnoredDuringExecution[i], 0)
			if err != nil {
				return fmt.Errorf("pod anti-affinity term %d: %w", i, err)
			}
			c.anti = append(c.anti, at)
		}
		for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			w := &pa.PreferredDuringSchedulingIgnoredDuringExecution[i]
			at, err := add(kindAnti, &w.PodAffinityTerm, max(w.Weight, 1))
			if err != nil {
				return fmt.Errorf("preferred pod anti-affinity term %d: %w", i, err)
			}
			c.anti = append(c.anti, at)
		}
	}
	return nil
}

// attach records which groups select the class's pods, and marks self-selecting terms.
func (t *topology) attach(c *class) {
	for _, g := range t.order {
		if g.selects(t, c.ns, c.labels) {
			c.matches = append(c.matches, g)
		}
	}
	for _, st := range c.spreads {
		st.self = slices.Contains(c.matches, st.g)
	}
	for _, at := range c.affinity {
		at.self = slices.Contains(c.matches, at.g)
	}
	for _, at := range c.anti {
		at.self = slices.Contains(c.matches, at.g)
		if at.weight == 0 {
			c.owned = append(c.owned, at.g)
		}
	}
	for _, st := range c.spreads {
		if st.self && !slices.Contains(c.selfGroups, st.g) {
			c.selfGroups = append(c.selfGroups, st.g)
		}
	}
	for _, at := range c.anti {
		if at.self && !slices.Contains(c.selfGroups, at.g) {
			c.selfGroups = append(c.selfGroups, at.g)
		}
	}
	for _, st := range c.spreads {
		if st.hard && st.self && !slices.Contains(c.firmGroups, st.g) {
			c.firmGroups = append(c.firmGroups, st.g)
		}
	}
	for _, g := range c.selfGroups {
		g.pendingSelf += int32(len(c.pods))
		g.claimBase = t.s.nHosts
		for pi := range t.s.pools {
			if c.poolReason == nil || c.poolReason[pi] == nil {
				g.pools |= 1 << pi
			}
		}
	}
	for _, st := range c.spreads {
		if st.self && st.hard && st.g.dim == dimHostname && (st.g.cap == 0 || st.maxSkew < st.g.cap) {
			st.g.cap = st.maxSkew
		}
		if st.hard && (st.g.maxSkew == 0 || st.maxSkew < st.g.maxSkew) {
			st.g.maxSkew = st.maxSkew
		}
	}
	for _, at := range c.anti {
		if at.self && at.weight == 0 && at.g.dim == dimHostname {
			at.g.cap = 1
		}
	}
}

// dimsInUse lists every dimension index.
func (t *topology) dimsInUse() []int {
	out := make([]int, len(t.dims))
	for i := range out {
		out[i] = i
	}
	return out
}

// mergedSelector converts a label selector and adds matchLabelKeys with the pod's own values.
func mergedSelector(ls *metav1.LabelSelector, keys []string, podLabels map[string]string) (labels.Selector, error) {
	if ls == nil {
		// A nil selector in a topology spread constraint or affinity term selects nothing.
		return labels.Nothing(), nil
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		v, ok := podLabels[k]
		if !ok {
			continue
		}
		r, err := labels.NewRequirement(k, selection.Equals, []string{v})
		if err != nil {
			return nil, err
		}
		sel = sel.Add(*r)
	}
	return sel, nil
}

func affinitySelector(term *corev1.PodAffinityTerm, podLabels map[string]string) (labels.Selector, error) {
	sel, err := mergedSelector(term.LabelSelector, term.MatchLabelKeys, podLabels)
	if err != nil {
		return nil, err
	}
	for _, k := range term.MismatchLabelKeys {
		v, ok := podLabels[k]
		if !ok {
			continue
		}
		r, err := labels.NewRequirement(k, selection.NotEquals, []string{v})
		if err != nil {
			return nil, err
		}
		sel = sel.Add(*r)
	}
	return sel, nil
}

// termNamespaces resolves the namespaces a pod affinity term looks in: the listed ones plus
// those its namespace selector selects; neither means the pod's own namespace.
func termNamespaces(term *corev1.PodAffinityTerm, own string) ([]string, labels.Selector, error) {
	if len(term.Namespaces) == 0 && term.NamespaceSelector == nil {
		return []string{own}, nil, nil
	}
	ns := slices.Clone(term.Namespaces)
	slices.Sort(ns)
	ns = slices.Compact(ns)
	if term.NamespaceSelector == nil {
		return ns, nil, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(term.NamespaceSelector)
	if err != nil {
		return nil, nil, fmt.Errorf("namespace selector: %w", err)
	}
	return ns, sel, nil
}

func (t *topology) describe(g *group) string {
	return fmt.Sprintf("%s %s", t.dims[g.dim], strconv.Quote(g.selector.String()))
}

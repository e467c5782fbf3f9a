package dra

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	dracel "k8s.io/dynamic-resource-allocation/cel"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// Objects are the DRA objects a resolver reads: the cluster's DeviceClasses, and the
// ResourceClaims and ResourceClaimTemplates pods name.
type Objects struct {
	DeviceClasses  []*resourcev1.DeviceClass
	ResourceClaims []*resourcev1.ResourceClaim
	Templates      []*resourcev1.ResourceClaimTemplate
}

// Resolver resolves pods' dynamic resource claims against instance types' devices. It
// compiles each CEL selector once and evaluates it once per device model. Not safe for
// concurrent use.
type Resolver struct {
	classes   map[string]*resourcev1.DeviceClass
	claims    map[types.NamespacedName]*resourcev1.ResourceClaim
	templates map[types.NamespacedName]*resourcev1.ResourceClaimTemplate
	cel       *dracel.Cache
	// matches memoizes selector verdicts by expression and device model.
	matches map[[2]string]matchResult
	// moving: the pods are resolved as if they moved to another node (ResolveMoving).
	moving bool
}

type matchResult struct {
	ok  bool
	err string
}

// NewResolver returns a resolver over the objects.
func NewResolver(o Objects) *Resolver {
	r := &Resolver{
		classes:   map[string]*resourcev1.DeviceClass{},
		claims:    map[types.NamespacedName]*resourcev1.ResourceClaim{},
		templates: map[types.NamespacedName]*resourcev1.ResourceClaimTemplate{},
		cel:       dracel.NewCache(1024, dracel.Features{}),
		matches:   map[[2]string]matchResult{},
	}
	for _, c := range o.DeviceClasses {
		r.classes[c.Name] = c
	}
	for _, c := range o.ResourceClaims {
		r.claims[types.NamespacedName{Namespace: c.Namespace, Name: c.Name}] = c
	}
	for _, t := range o.Templates {
		r.templates[types.NamespacedName{Namespace: t.Namespace, Name: t.Name}] = t
	}
	return r
}

// typeDevices is one instance type with the devices it publishes.
type typeDevices struct {
	name string
	dev  Devices
	ok   bool
	// price is the type's cheapest offering's: among equally preferred ways to serve a pod,
	// the one the cheapest type takes wins.
	price float64
}

// Resolve returns the device need of each pod with dynamic resource claims, against the
// instance types its node could be (all NodePools' types; a name appearing twice counts once),
// for solver.Snapshot.Devices. Pods without claims get no entry. A claim that cannot be read,
// asks for what tenon does not model, or that no type's devices satisfy gives its pod a need
// with a Reason naming the claim and request. A named claim shared by several of the pods is
// charged to the first of them; the others wait for its allocation (a Reason says so), since
// the devices of one claim are on one node.
func (r *Resolver) Resolve(pods []*corev1.Pod, its []*catalog.InstanceType) map[*corev1.Pod]*solver.DeviceNeed {
	// A type appears once per kind of devices it has: a NodePool in a MIG layout has the same
	// type with other devices than one with whole GPUs.
	var tds []typeDevices
	seen := map[[2]string]bool{}
	for _, it := range its {
		d, ok := DevicesOf(it)
		key := [2]string{it.Name, d.model}
		if seen[key] {
			continue
		}
		seen[key] = true
		price := math.Inf(1)
		if o, found := it.CheapestOffering(scheduling.Requirements{}); found {
			price = o.Price
		}
		tds = append(tds, typeDevices{name: it.Name, dev: d, ok: ok, price: price})
	}
	slices.SortFunc(tds, func(a, b typeDevices) int {
		return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.dev.model, b.dev.model))
	})
	out := map[*corev1.Pod]*solver.DeviceNeed{}
	chargedTo := map[types.NamespacedName]*corev1.Pod{}
	memo := map[string]*solver.DeviceNeed{}
	for _, pod := range pods {
		if len(pod.Spec.ResourceClaims) == 0 {
			continue
		}
		out[pod] = r.resolvePod(pod, tds, chargedTo, memo)
	}
	return out
}

// ResolveMoving is Resolve for pods that run now, as the disruption simulation moves them: a
// claim generated from a template is resolved from its template, unallocated, since the pod's
// replacement gets a claim of its own; a named claim stays where it is allocated (its pods are
// pinned to that node).
func (r *Resolver) ResolveMoving(pods []*corev1.Pod, its []*catalog.InstanceType) map[*corev1.Pod]*solver.DeviceNeed {
	r.moving = true
	defer func() { r.moving = false }()
	return r.Resolve(pods, its)
}

// claimSource is one of a pod's claims as resolved: its spec (unallocated), or the requirements
// of the node its allocation is on.
type claimSource struct {
	what      string // "ResourceClaim ns/name" or "ResourceClaimTemplate ns/name"
	spec      *resourcev1.ResourceClaimSpec
	allocated *scheduling.Requirements
}

func (r *Resolver) resolvePod(pod *corev1.Pod, tds []typeDevices, chargedTo map[types.NamespacedName]*corev1.Pod, memo map[string]*solver.DeviceNeed) *solver.DeviceNeed {
	fail := func(format string, args ...any) *solver.DeviceNeed {
		return &solver.DeviceNeed{Reason: &solver.Reason{Kind: solver.ReasonDevices, Detail: fmt.Sprintf(format, args...)}}
	}
	var sources []claimSource
	for _, pc := range pod.Spec.ResourceClaims {
		src, reason := r.source(pod, pc, chargedTo)
		if reason != "" {
			return fail("%s", reason)
		}
		sources = append(sources, src)
	}
	// Pods whose claims read the same specs (by source and content) need the same: memoized.
	var key strings.Builder
	var node scheduling.Requirements
	for _, src := range sources {
		if src.allocated != nil {
			node = node.Intersect(*src.allocated)
			key.WriteString("@" + src.allocated.String() + ";")
			continue
		}
		b, err := src.spec.Marshal()
		if err != nil {
			return fail("%s: %v", src.what, err)
		}
		key.WriteString(src.what + "=")
		key.Write(b)
		key.WriteString(";")
	}
	if need, ok := memo[key.String()]; ok {
		return need
	}
	need := r.need(sources, tds, node)
	// Pods with equal needs share a class, whatever claims they come from.
	if need.Reason == nil {
		need.Key = fmt.Sprintf("%s×%d@%s", need.Resource, need.Count, need.Requirements)
	}
	memo[key.String()] = need
	return need
}

// source finds what one of the pod's claims asks for.
func (r *Resolver) source(pod *corev1.Pod, pc corev1.PodResourceClaim, chargedTo map[types.NamespacedName]*corev1.Pod) (claimSource, string) {
	ns := pod.Namespace
	var claimName string
	switch {
	case pc.ResourceClaimName != nil:
		claimName = *pc.ResourceClaimName
	case pc.ResourceClaimTemplateName != nil:
		// The claim generated from the template, once it exists, is named in the pod's status.
		for _, st := range pod.Status.ResourceClaimStatuses {
			if st.Name == pc.Name && st.ResourceClaimName != nil {
				claimName = *st.ResourceClaimName
			}
		}
		key := types.NamespacedName{Namespace: ns, Name: *pc.ResourceClaimTemplateName}
		if t, ok := r.templates[key]; ok && (claimName == "" || r.moving) {
			// A pod that moves is replaced by one whose claim the template generates afresh.
			return claimSource{what: "ResourceClaimTemplate " + key.String(), spec: &t.Spec.Spec}, ""
		}
		if claimName == "" {
			return claimSource{}, fmt.Sprintf("ResourceClaimTemplate %s of claim %q not found", key, pc.Name)
		}
		if c, ok := r.claims[types.NamespacedName{Namespace: ns, Name: claimName}]; ok && r.moving {
			return claimSource{what: "ResourceClaim " + ns + "/" + claimName, spec: &c.Spec}, ""
		}
	default:
		return claimSource{}, fmt.Sprintf("claim %q names neither a ResourceClaim nor a ResourceClaimTemplate", pc.Name)
	}
	key := types.NamespacedName{Namespace: ns, Name: claimName}
	c, ok := r.claims[key]
	if !ok {
		return claimSource{}, fmt.Sprintf("ResourceClaim %s of claim %q not found", key, pc.Name)
	}
	if a := c.Status.Allocation; a != nil {
		reqs, err := allocationNode(a)
		if err != "" {
			return claimSource{}, fmt.Sprintf("ResourceClaim %s: %s", key, err)
		}
		return claimSource{what: "ResourceClaim " + key.String(), allocated: &reqs}, ""
	}
	if first, ok := chargedTo[key]; ok && first != pod {
		return claimSource{}, fmt.Sprintf("ResourceClaim %s is shared with pod %s/%s, which is planned first; this pod follows it once the claim is allocated", key, first.Namespace, first.Name)
	}
	chargedTo[key] = pod
	what := "ResourceClaim " + key.String()
	if pc.ResourceClaimTemplateName != nil {
		// Generated from a template: named by it, so that the pods of one template share a
		// need (and a class) while their claims are not yet allocated.
		what = "ResourceClaimTemplate " + ns + "/" + *pc.ResourceClaimTemplateName
	}
	return claimSource{what: what, spec: &c.Spec}, ""
}

// allocationNode returns the requirements of the node an allocated claim's devices are on.
func allocationNode(a *resourcev1.AllocationResult) (scheduling.Requirements, string) {
	if a.NodeSelector == nil {
		return scheduling.Requirements{}, "" // devices reachable from any node
	}
	if len(a.NodeSelector.NodeSelectorTerms) != 1 {
		return scheduling.Requirements{}, fmt.Sprintf("allocated with %d node selector terms; tenon reads one", len(a.NodeSelector.NodeSelectorTerms))
	}
	reqs, ok, err := scheduling.FromNodeSelectorTerm(a.NodeSelector.NodeSelectorTerms[0])
	switch {
	case err != nil:
		return scheduling.Requirements{}, "allocation node selector: " + err.Error()
	case !ok:
		return scheduling.Requirements{}, "allocation node selector matches no node"
	}
	return reqs, ""
}

// need counts, for each type, the devices the unallocated claims take on one of its nodes
// (−1: they cannot be served there), and narrows the pod to the types that serve them all with
// the count of its preferred alternatives (see alternatives).
func (r *Resolver) need(sources []claimSource, tds []typeDevices, node scheduling.Requirements) *solver.DeviceNeed {
	if !hasSpec(sources) {
		return &solver.DeviceNeed{Requirements: node}
	}
	counts := make([]int64, len(tds))
	prefs := make([][]int, len(tds))
	var resource corev1.ResourceName
	var why []string
	for _, src := range sources {
		if src.spec == nil {
			continue
		}
		reason := r.claimCounts(src, tds, counts, prefs, &why)
		if reason != "" {
			return &solver.DeviceNeed{Reason: &solver.Reason{Kind: solver.ReasonDevices, Detail: reason}}
		}
	}
	best := -1
	for i, td := range tds {
		if counts[i] < 0 {
			continue
		}
		if counts[i] > td.dev.Count {
			counts[i] = -1
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		switch c := slices.Compare(prefs[i], prefs[best]); {
		case c < 0, c == 0 && td.price < tds[best].price:
			best = i
		}
	}
	if best < 0 {
		detail := "no instance type the NodePools may launch has devices that satisfy them"
		if len(why) > 0 {
			detail += " (" + strings.Join(why, "; ") + ")"
		}
		return &solver.DeviceNeed{Reason: &solver.Reason{Kind: solver.ReasonDevices, Detail: detail}}
	}
	// The pod takes want devices counted as the resource of its most preferred type's (of
	// those equally preferred, the cheapest's): the types whose devices (whole GPUs, or one MIG
	// profile) are counted alike, and of which it takes as many, serve it.
	want := counts[best]
	if want > 0 {
		resource = tds[best].dev.Resource
	}
	var names []string
	for i, td := range tds {
		if counts[i] == want && (want == 0 || td.dev.Resource == resource) && !slices.Contains(names, td.name) {
			names = append(names, td.name)
		}
	}
	return &solver.DeviceNeed{Resource: resource, Count: want, Requirements: node.Add(scheduling.In(apisv1.LabelInstanceType, names...))}
}

func hasSpec(sources []claimSource) bool {
	return slices.ContainsFunc(sources, func(s claimSource) bool { return s.spec != nil })
}

// claimCounts adds what one unallocated claim takes on each type to counts (−1: cannot be
// served there) and the index of the alternative each request takes to prefs. It returns why
// the claim is not served anywhere by tenon's model, or "".
func (r *Resolver) claimCounts(src claimSource, tds []typeDevices, counts []int64, prefs [][]int, why *[]string) string {
	for _, c := range src.spec.Devices.Constraints {
		if c.DistinctAttribute != nil {
			return fmt.Sprintf("%s: constraint distinctAttribute %s is not modelled", src.what, *c.DistinctAttribute)
		}
		// matchAttribute holds among the alike devices of one node type.
	}
	for _, req := range src.spec.Devices.Requests {
		alts, err := alternatives(req)
		if err != "" {
			return fmt.Sprintf("%s request %q: %s", src.what, req.Name, err)
		}
		for _, a := range alts {
			if _, ok := r.classes[a.class]; !ok {
				return fmt.Sprintf("%s request %q: DeviceClass %q not found", src.what, req.Name, a.class)
			}
		}
		for i, td := range tds {
			if counts[i] < 0 {
				continue
			}
			chosen, take := -1, int64(0)
			for ai, a := range alts {
				if !td.ok || a.count > td.dev.Count {
					continue
				}
				ok, msg := r.matchAll(r.classes[a.class].Spec.Selectors, a.selectors, td.dev)
				if msg != "" && !slices.Contains(*why, msg) {
					*why = append(*why, msg)
				}
				if ok {
					chosen, take = ai, a.count
					if a.all {
						// Every device the selectors accept: a node's devices are alike.
						take = td.dev.Count
					}
					break
				}
			}
			if chosen < 0 {
				counts[i] = -1
				continue
			}
			counts[i] += take
			prefs[i] = append(prefs[i], chosen)
		}
	}
	return ""
}

// alternative is one way to serve a request: count devices of a class that its and the
// request's selectors accept.
type alternative struct {
	class     string
	selectors []resourcev1.DeviceSelector
	count     int64
	// all: allocationMode All, every matching device of the node (count is then 1, the
	// least a node must have).
	all bool
}

// alternatives returns a request's ways to be served, in the user's order of preference (one
// for exactly; firstAvailable's subrequests), or why tenon does not model it.
func alternatives(req resourcev1.DeviceRequest) ([]alternative, string) {
	one := func(class string, sel []resourcev1.DeviceSelector, mode resourcev1.DeviceAllocationMode, count int64, admin bool, capacity *resourcev1.CapacityRequirements, derived int) (alternative, string) {
		all := mode == resourcev1.DeviceAllocationModeAll
		switch {
		case all && count != 0:
			return alternative{}, "allocationMode All with a count"
		case mode != "" && mode != resourcev1.DeviceAllocationModeExactCount && !all:
			return alternative{}, fmt.Sprintf("unknown allocationMode %q", mode)
		case capacity != nil:
			return alternative{}, "capacity requests (consumable capacity) are not modelled"
		case derived > 0:
			return alternative{}, "derived attributes are not modelled"
		case count < 0:
			return alternative{}, "negative count " + strconv.FormatInt(count, 10)
		}
		if count == 0 {
			count = 1
		}
		if admin {
			// Administrative access takes no device away from others.
			return alternative{class: class, selectors: sel}, ""
		}
		return alternative{class: class, selectors: sel, count: count, all: all}, ""
	}
	switch {
	case req.Exactly != nil && len(req.FirstAvailable) > 0:
		return nil, "both exactly and firstAvailable are set"
	case req.Exactly != nil:
		e := req.Exactly
		a, err := one(e.DeviceClassName, e.Selectors, e.AllocationMode, e.Count, e.AdminAccess != nil && *e.AdminAccess, e.Capacity, len(e.DerivedAttributes))
		if err != "" {
			return nil, err
		}
		return []alternative{a}, ""
	case len(req.FirstAvailable) > 0:
		var out []alternative
		for _, sub := range req.FirstAvailable {
			a, err := one(sub.DeviceClassName, sub.Selectors, sub.AllocationMode, sub.Count, false, sub.Capacity, len(sub.DerivedAttributes))
			if err != "" {
				return nil, fmt.Sprintf("subrequest %q: %s", sub.Name, err)
			}
			out = append(out, a)
		}
		return out, ""
	}
	return nil, "neither exactly nor firstAvailable is set"
}

// matchAll reports whether the devices satisfy every selector of the class and the request,
// and the message of a selector that could not be evaluated ("" if none).
func (r *Resolver) matchAll(class, request []resourcev1.DeviceSelector, dev Devices) (bool, string) {
	for _, sels := range [2][]resourcev1.DeviceSelector{class, request} {
		for _, sel := range sels {
			if sel.CEL == nil {
				return false, "a selector without cel is not modelled"
			}
			m := r.match(sel.CEL.Expression, dev)
			if !m.ok {
				return false, m.err
			}
		}
	}
	return true, ""
}

// match evaluates one CEL expression on the devices, memoized per device model.
func (r *Resolver) match(expr string, dev Devices) matchResult {
	key := [2]string{expr, dev.model}
	if m, ok := r.matches[key]; ok {
		return m
	}
	var m matchResult
	compiled := r.cel.GetOrCompile(expr)
	if compiled.Error != nil {
		m.err = fmt.Sprintf("selector %q: %v", expr, compiled.Error)
	} else {
		ok, _, err := compiled.DeviceMatches(context.Background(), dracel.Device{Driver: dev.Driver, Attributes: dev.Attributes, Capacity: dev.Capacity})
		m.ok = ok && err == nil
		if err != nil {
			// As kube-scheduler does, a selector that fails at runtime (an attribute a device
			// lacks) does not select the device; the message says why.
			m.err = fmt.Sprintf("selector %q on %s: %v", expr, dev.model, err)
		}
	}
	r.matches[key] = m
	return m
}

// PoolTypes returns the instance types the NodePools may launch (those their requirements
// match), each once: what Resolve resolves claims against, so that a claim only types outside
// every pool could serve is reported as such.
func PoolTypes(pools []solver.NodePool) []*catalog.InstanceType {
	var out []*catalog.InstanceType
	seen := map[*catalog.InstanceType]bool{}
	for _, p := range pools {
		q := catalog.NewQuery(p.Requirements)
		for _, it := range p.InstanceTypes {
			if !seen[it] && q.TypeMatches(it) {
				seen[it] = true
				out = append(out, it)
			}
		}
	}
	return out
}

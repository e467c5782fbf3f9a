package solver

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// Verify checks a plan against every hard constraint, independently of how Solve works: each
// pending pod is accounted for exactly once; every pod fits its node (allocatable, DaemonSet
// overhead, host ports) and every option of its claim; its required node affinity, tolerations,
// required pod affinity and anti-affinity (both directions) and DoNotSchedule topology spread
// hold in the final placement; limits and reservations are respected; a gang gets room for its
// minCount (running pods counted) or for none of its pods, all in one domain of its topology
// key when it has one. It is the reference the
// solver is tested against; it is slow and simple on purpose.
func Verify(snap *Snapshot, plan *Plan) error {
	v := &verifier{snap: snap, plan: plan}
	return v.run()
}

type vnode struct {
	name     string
	labels   map[string]string
	taints   []corev1.Taint
	free     scheduling.Resources
	ports    []scheduling.HostPort
	pods     []*corev1.Pod // running and placed
	existing bool
	lenient  bool // uninitialized or in flight: ephemeral taints do not count
}

type verifier struct {
	pendingSet map[*corev1.Pod]bool
	snap       *Snapshot
	plan       *Plan
	nodes      []*vnode
	errs       []error
	domainsOf  map[string][]string // poolDomainsCached
}

func (v *verifier) fail(format string, args ...any) {
	if len(v.errs) < 20 {
		v.errs = append(v.errs, fmt.Errorf(format, args...))
	}
}

func (v *verifier) run() error {
	v.accounting()
	pools := map[string]*NodePool{}
	for i := range v.snap.NodePools {
		pools[v.snap.NodePools[i].Name] = &v.snap.NodePools[i]
	}
	byName := map[string]*vnode{}
	for i := range v.snap.Nodes {
		n := &v.snap.Nodes[i]
		if n.MarkedForDeletion {
			continue
		}
		vn := &vnode{name: n.Name, labels: n.Labels, taints: n.Taints, free: n.Allocatable, existing: true, lenient: !n.Initialized || n.InFlight}
		for _, p := range n.Pods {
			req, _ := scheduling.PodRequests(p)
			vn.free = vn.free.Sub(req)
			vn.ports = append(vn.ports, scheduling.PodHostPorts(p)...)
			vn.pods = append(vn.pods, p)
		}
		byName[n.Name] = vn
		v.nodes = append(v.nodes, vn)
	}
	placed := map[*corev1.Pod]*vnode{}
	for _, pl := range v.plan.Placements {
		vn, ok := byName[pl.Node]
		if !ok {
			v.fail("pod %s placed on unknown or deleting node %s", pl.Pod.Name, pl.Node)
			continue
		}
		v.add(vn, pl.Pod)
		placed[pl.Pod] = vn
	}
	used := map[string]scheduling.Resources{}
	launches := map[string]int{}
	for _, c := range v.plan.Claims {
		np, ok := pools[c.NodePool]
		if !ok {
			v.fail("claim %s names unknown nodepool %s", c.Hostname, c.NodePool)
			continue
		}
		v.claim(np, c, placed)
		used[c.NodePool] = used[c.NodePool].Add(c.InstanceType.Capacity)
		if c.Offering.CapacityType == apisv1.CapacityTypeReserved {
			launches[c.InstanceType.Name+"/"+c.Offering.ReservationID+"/"+c.Offering.Zone]++
			if launches[c.InstanceType.Name+"/"+c.Offering.ReservationID+"/"+c.Offering.Zone] > c.Offering.ReservationCapacity {
				v.fail("reservation %s in %s oversubscribed", c.Offering.ReservationID, c.Offering.Zone)
			}
		}
	}
	v.gangs(placed)
	for name, u := range used {
		np := pools[name]
		for i, lim := range np.HasLimit {
			if lim && np.Usage[i]+u[i] > np.Limits[i] {
				v.fail("nodepool %s exceeds its limit on %s", name, scheduling.ResourceNameAt(i))
			}
		}
		if np.NodeLimit >= 0 {
			n := 0
			for _, c := range v.plan.Claims {
				if c.NodePool == name {
					n++
				}
			}
			if np.Nodes+n > np.NodeLimit {
				v.fail("nodepool %s exceeds its node limit", name)
			}
		}
	}
	for _, vn := range v.nodes {
		for _, p := range vn.pods {
			if placed[p] == vn || v.pending(p) {
				v.inter(vn, p)
			}
		}
	}
	return errors.Join(v.errs...)
}

func (v *verifier) pending(p *corev1.Pod) bool {
	if v.pendingSet == nil {
		v.pendingSet = map[*corev1.Pod]bool{}
		for _, q := range v.snap.Pods {
			v.pendingSet[q] = true
		}
	}
	return v.pendingSet[p]
}

// accounting checks that every pending pod appears exactly once in the plan, and that none is
// placed that no node can serve.
func (v *verifier) accounting() {
	seen := map[*corev1.Pod]int{}
	for _, p := range v.plan.Placements {
		seen[p.Pod]++
	}
	for _, c := range v.plan.Claims {
		for _, p := range c.Pods {
			seen[p]++
		}
	}
	for _, u := range v.plan.Unschedulable {
		seen[u.Pod]++
		if len(u.Reasons) == 0 {
			v.fail("unschedulable pod %s has no reason", u.Pod.Name)
		}
	}
	for _, p := range v.snap.Pods {
		if seen[p] != 1 {
			v.fail("pod %s appears %d times in the plan", p.Name, seen[p])
		}
		delete(seen, p)
	}
	for _, pl := range v.plan.Placements {
		if r := deviceReason(pl.Pod, v.snap.Devices); r != nil {
			v.fail("pod %s is placed on %s, but %s", pl.Pod.Name, pl.Node, r)
		}
	}
	for _, c := range v.plan.Claims {
		for _, p := range c.Pods {
			if r := deviceReason(p, v.snap.Devices); r != nil {
				v.fail("pod %s is placed on a new claim, but %s", p.Name, r)
			}
		}
	}
	for p := range seen {
		v.fail("plan mentions pod %s that is not pending", p.Name)
	}
}

// add places a pod on a node and checks resources, ports, requirements and taints.
func (v *verifier) add(vn *vnode, p *corev1.Pod) {
	req, err := v.requests(p)
	if err != nil {
		v.fail("%v", err)
		return
	}
	vn.free = vn.free.Sub(req)
	for i, r := range req {
		// As kube-scheduler does, only what the pod asks for is compared.
		if r > 0 && vn.free[i] < 0 {
			v.fail("node %s over capacity in %s after pod %s", vn.name, scheduling.ResourceNameAt(i), p.Name)
		}
	}
	ports := scheduling.PodHostPorts(p)
	if hp, clash := scheduling.HostPortConflict(vn.ports, ports); clash {
		v.fail("pod %s host port %s clashes on %s", p.Name, hp, vn.name)
	}
	vn.ports = append(vn.ports, ports...)
	lbls := maps.Clone(vn.labels)
	if lbls == nil {
		lbls = map[string]string{}
	}
	if vn.existing {
		lbls[scheduling.FieldNodeName] = vn.name
	}
	alts, err := v.nodeRequirements(p)
	if err != nil {
		v.fail("%v", err)
		return
	}
	ok := false
	for _, a := range alts {
		ok = ok || a.Matches(lbls) == nil
	}
	if !ok {
		v.fail("pod %s node affinity does not match node %s (%v)", p.Name, vn.name, vn.labels)
	}
	taints := vn.taints
	if vn.lenient {
		taints = nil
		for _, t := range vn.taints {
			if !ephemeralTaints[t.Key] {
				taints = append(taints, t)
			}
		}
	}
	if t := scheduling.UntoleratedTaint(p.Spec.Tolerations, taints); t != nil {
		v.fail("pod %s does not tolerate %s on %s", p.Name, taintString(t), vn.name)
	}
	vn.pods = append(vn.pods, p)
}

// claim checks a new claim: its launch type and every option hold its pods with DaemonSet
// overhead, and its pods' requirements hold on the node it would launch.
func (v *verifier) claim(np *NodePool, c *Claim, placed map[*corev1.Pod]*vnode) {
	if c.InstanceType == nil || len(c.InstanceTypes) == 0 || c.InstanceTypes[0] != c.InstanceType {
		v.fail("claim %s must launch its first (cheapest) option", c.Hostname)
		return
	}
	var total scheduling.Resources
	for _, p := range c.Pods {
		req, _ := v.requests(p)
		total = total.Add(req)
	}
	var ports []scheduling.HostPort
	for _, p := range c.Pods {
		ports = append(ports, scheduling.PodHostPorts(p)...)
	}
	for _, it := range c.InstanceTypes {
		ds, dsPorts := v.daemonOverhead(np, it)
		if need := total.Add(ds); !need.FitsIn(it.Allocatable()) {
			v.fail("claim %s option %s cannot hold its pods (%s + daemonsets %s > %s)", c.Hostname, it.Name, total, ds, it.Allocatable())
		}
		if hp, clash := scheduling.HostPortConflict(dsPorts, ports); clash {
			v.fail("claim %s option %s: host port %s is bound by a daemonset there", c.Hostname, it.Name, hp)
		}
	}
	v.minValues(np, c)
	if inc := scheduling.Compatible(c.InstanceType.Requirements, c.Requirements, func(string) bool { return true }); inc != nil {
		v.fail("claim %s requirements exclude its own launch type: %v", c.Hostname, inc)
	}
	if !c.Offering.Usable() && c.Offering.CapacityType != apisv1.CapacityTypeReserved {
		v.fail("claim %s launches an unusable offering", c.Hostname)
	}
	if inc := c.Requirements.Matches(c.Offering.Labels()); inc != nil {
		if r, ok := c.Requirements.Get(inc.Key); ok && !r.Has(inc.Pod.Any()) {
			v.fail("claim %s requirements exclude its launch offering: %v", c.Hostname, inc)
		}
	}
	lbls := c.InstanceType.NodeLabels(&c.Offering)
	maps.Copy(lbls, np.Labels)
	maps.Copy(lbls, c.Requirements.Labels())
	lbls[apisv1.NodePoolLabelKey] = np.Name
	lbls[apisv1.LabelHostname] = c.Hostname
	ds, dsPorts := v.daemonOverhead(np, c.InstanceType)
	vn := &vnode{name: c.Hostname, labels: lbls, taints: np.Taints, free: c.InstanceType.Allocatable().Sub(ds), ports: dsPorts}
	v.nodes = append(v.nodes, vn)
	for _, p := range c.Pods {
		v.add(vn, p)
		placed[p] = vn
	}
}

// minValues checks that the claim's options keep as many distinct values of every key the
// pool asks minValues of (and the instance types decide) as it asks, or as the claim's own
// requirement says when it records a relaxation.
func (v *verifier) minValues(np *NodePool, c *Claim) {
	for _, r := range np.Requirements.Items() {
		if r.MinValues <= 0 {
			continue
		}
		if tr, ok := c.InstanceType.Requirements.Get(r.Key); !ok || tr.IsComplement() {
			continue // not a key the instance types decide
		}
		want := r.MinValues
		if cr, ok := c.Requirements.Get(r.Key); ok && cr.MinValues < want {
			if !c.MinValuesRelaxed {
				v.fail("claim %s lowers minValues of %s to %d without recording it", c.Hostname, r.Key, cr.MinValues)
			}
			want = cr.MinValues
		}
		seen := map[string]bool{}
		for _, it := range c.InstanceTypes {
			if tr, ok := it.Requirements.Get(r.Key); ok && !tr.IsComplement() {
				for _, val := range tr.Values() {
					seen[val] = true
				}
			}
		}
		if len(seen) < want {
			v.fail("claim %s keeps %d distinct values of %s, minValues %d", c.Hostname, len(seen), r.Key, want)
		}
	}
}

// daemonOverhead is what the DaemonSets that would run on a node of type it in np request, and
// the host ports they bind.
func (v *verifier) daemonOverhead(np *NodePool, it *catalog.InstanceType) (scheduling.Resources, []scheduling.HostPort) {
	var total scheduling.Resources
	var ports []scheduling.HostPort
	node := np.Requirements.Add(scheduling.In(apisv1.NodePoolLabelKey, np.Name)).Intersect(it.Requirements)
	for k, val := range np.Labels {
		node = node.Add(scheduling.In(k, val))
	}
	for _, d := range v.snap.DaemonSets {
		if d.Pod == nil || scheduling.UntoleratedTaint(d.Pod.Spec.Tolerations, np.Taints) != nil {
			continue
		}
		alts, err := scheduling.PodNodeRequirements(d.Pod)
		if err != nil {
			continue
		}
		for _, a := range alts {
			if scheduling.Compatible(node, a, scheduling.AllowUndefinedWellKnown) == nil {
				req, _ := scheduling.PodRequests(d.Pod)
				req[scheduling.Pods] = 1
				total = total.Add(req)
				ports = append(ports, scheduling.PodHostPorts(d.Pod)...)
				break
			}
		}
	}
	return total, ports
}

func (v *verifier) domain(vn *vnode, key string) (string, bool) {
	if key == apisv1.LabelHostname {
		return vn.name, true
	}
	val, ok := vn.labels[key]
	return val, ok
}

func selects(ls *metav1.LabelSelector, matchKeys, mismatchKeys []string, owner *corev1.Pod, p *corev1.Pod, nsOK bool) bool {
	if ls == nil || !nsOK {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil || !sel.Matches(labels.Set(p.Labels)) {
		return false
	}
	for _, k := range matchKeys {
		if val, ok := owner.Labels[k]; ok && p.Labels[k] != val {
			return false
		}
	}
	for _, k := range mismatchKeys {
		if val, ok := owner.Labels[k]; ok && p.Labels[k] == val {
			return false
		}
	}
	return true
}

func (v *verifier) inNamespaces(term *corev1.PodAffinityTerm, owner, p *corev1.Pod) bool {
	if len(term.Namespaces) == 0 && term.NamespaceSelector == nil {
		return p.Namespace == owner.Namespace
	}
	for _, ns := range term.Namespaces {
		if ns == p.Namespace {
			return true
		}
	}
	if term.NamespaceSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(term.NamespaceSelector)
		return err == nil && sel.Matches(labels.Set(v.snap.NamespaceLabels[p.Namespace]))
	}
	return false
}

// inter checks a pending pod's required pod affinity, anti-affinity (its own and that of every
// other pod) and DoNotSchedule spreads in the final placement.
func (v *verifier) inter(vn *vnode, p *corev1.Pod) {
	if aff := p.Spec.Affinity; aff != nil {
		if aff.PodAffinity != nil {
			for _, term := range aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
				dom, ok := v.domain(vn, term.TopologyKey)
				if !ok {
					v.fail("pod %s affinity: node %s lacks %s", p.Name, vn.name, term.TopologyKey)
					continue
				}
				found, anywhere := false, 0
				for _, other := range v.nodes {
					od, ook := v.domain(other, term.TopologyKey)
					for _, q := range other.pods {
						if q == p || !selects(term.LabelSelector, term.MatchLabelKeys, term.MismatchLabelKeys, p, q, v.inNamespaces(&term, p, q)) {
							continue
						}
						anywhere++
						if ook && od == dom {
							found = true
						}
					}
				}
				self := selects(term.LabelSelector, term.MatchLabelKeys, term.MismatchLabelKeys, p, p, v.inNamespaces(&term, p, p))
				if !found && !(self && anywhere == 0) {
					v.fail("pod %s affinity on %s not satisfied on %s", p.Name, term.TopologyKey, vn.name)
				}
			}
		}
		if aff.PodAntiAffinity != nil {
			for _, term := range aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
				v.anti(vn, p, &term, p)
			}
		}
	}
	// Anti-affinity of other pods repelling p.
	for _, other := range v.nodes {
		for _, q := range other.pods {
			if q == p || q.Spec.Affinity == nil || q.Spec.Affinity.PodAntiAffinity == nil {
				continue
			}
			for _, term := range q.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
				if !selects(term.LabelSelector, term.MatchLabelKeys, term.MismatchLabelKeys, q, p, v.inNamespaces(&term, q, p)) {
					continue
				}
				d1, ok1 := v.domain(vn, term.TopologyKey)
				d2, ok2 := v.domain(other, term.TopologyKey)
				if ok1 && ok2 && d1 == d2 {
					v.fail("pod %s on %s is repelled by the anti-affinity of %s on %s", p.Name, vn.name, q.Name, other.name)
				}
			}
		}
	}
	for _, tsc := range p.Spec.TopologySpreadConstraints {
		if tsc.WhenUnsatisfiable == corev1.ScheduleAnyway {
			continue
		}
		v.spread(vn, p, tsc)
	}
}

func (v *verifier) anti(vn *vnode, p *corev1.Pod, term *corev1.PodAffinityTerm, owner *corev1.Pod) {
	dom, ok := v.domain(vn, term.TopologyKey)
	if !ok {
		return
	}
	for _, other := range v.nodes {
		od, ook := v.domain(other, term.TopologyKey)
		if !ook || od != dom {
			continue
		}
		for _, q := range other.pods {
			if q != p && selects(term.LabelSelector, term.MatchLabelKeys, term.MismatchLabelKeys, owner, q, v.inNamespaces(term, owner, q)) {
				v.fail("pod %s anti-affinity on %s violated by %s on %s", p.Name, term.TopologyKey, q.Name, other.name)
			}
		}
	}
}

func (v *verifier) spread(vn *vnode, p *corev1.Pod, tsc corev1.TopologySpreadConstraint) {
	dom, ok := v.domain(vn, tsc.TopologyKey)
	if !ok {
		v.fail("pod %s spread: node %s lacks %s", p.Name, vn.name, tsc.TopologyKey)
		return
	}
	alts, _ := scheduling.PodNodeRequirements(p)
	counts := map[string]int{}
	for _, other := range v.nodes {
		od, ook := v.domain(other, tsc.TopologyKey)
		if !ook {
			continue
		}
		lbls := other.labels
		eligible := tsc.NodeAffinityPolicy != nil && *tsc.NodeAffinityPolicy == corev1.NodeInclusionPolicyIgnore
		for _, a := range alts {
			eligible = eligible || a.Matches(lbls) == nil
		}
		if !eligible {
			continue
		}
		if _, seen := counts[od]; !seen {
			counts[od] = 0
		}
		for _, q := range other.pods {
			// Pending pods the constraint selects but that do not carry it themselves may land
			// anywhere (the solver keeps them balanced only as a preference), so they are not
			// counted; running pods and pods carrying the same constraint are.
			if q.Namespace == p.Namespace && selects(tsc.LabelSelector, tsc.MatchLabelKeys, nil, p, q, true) &&
				(!v.pending(q) || carriesSpread(q, tsc)) {
				counts[od]++
			}
		}
	}
	// Domains new nodes could open in count too, with no pods yet: a spread is over the domains
	// the pod could land in, not only those that happen to have nodes.
	for i := range v.snap.NodePools {
		for _, d := range v.poolDomainsCached(i, p, alts, tsc) {
			if _, seen := counts[d]; !seen {
				counts[d] = 0
			}
		}
	}
	low := -1
	for _, n := range counts {
		if low < 0 || n < low {
			low = n
		}
	}
	if tsc.MinDomains != nil && len(counts) < int(*tsc.MinDomains) {
		low = 0
	}
	if counts[dom]-low > int(tsc.MaxSkew) {
		v.fail("pod %s spread on %s: domain %s has %d, least %d, maxSkew %d", p.Name, tsc.TopologyKey, dom, counts[dom], low, tsc.MaxSkew)
	}
}

// poolDomainsCached is poolDomains, remembered for pods alike in what it reads.
func (v *verifier) poolDomainsCached(i int, p *corev1.Pod, alts []scheduling.Requirements, tsc corev1.TopologySpreadConstraint) []string {
	req, _ := v.requests(p)
	key := fmt.Sprint(i, tsc.TopologyKey, tsc.NodeAffinityPolicy != nil && *tsc.NodeAffinityPolicy == corev1.NodeInclusionPolicyIgnore, req, alts)
	if tsc.NodeTaintsPolicy != nil && *tsc.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor {
		key += fmt.Sprint(p.Spec.Tolerations)
	}
	if d, ok := v.domainsOf[key]; ok {
		return d
	}
	if v.domainsOf == nil {
		v.domainsOf = map[string][]string{}
	}
	d := v.poolDomains(&v.snap.NodePools[i], p, alts, tsc)
	v.domainsOf[key] = d
	return d
}

// poolDomains lists the domains of the spread's key that a new node of pool np holding pod p
// could be in: over the pool's types that hold the pod (DaemonSets included) and their usable
// offerings, those the pod's required node affinity admits (unless the spread ignores node
// affinity) and, when the spread honours taints, only if the pod tolerates the pool. A new node
// is a hostname domain of its own ("").
func (v *verifier) poolDomains(np *NodePool, p *corev1.Pod, alts []scheduling.Requirements, tsc corev1.TopologySpreadConstraint) []string {
	if tsc.NodeTaintsPolicy != nil && *tsc.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor &&
		scheduling.UntoleratedTaint(p.Spec.Tolerations, np.Taints) != nil {
		return nil
	}
	if tsc.NodeAffinityPolicy != nil && *tsc.NodeAffinityPolicy == corev1.NodeInclusionPolicyIgnore {
		alts = []scheduling.Requirements{{}}
	}
	req, err := v.requests(p)
	if err != nil {
		return nil
	}
	base := np.Requirements.Add(scheduling.In(apisv1.NodePoolLabelKey, np.Name))
	for k, val := range np.Labels {
		base = base.Add(scheduling.In(k, val))
	}
	var out []string
	for _, it := range np.InstanceTypes {
		if scheduling.Compatible(base, it.Requirements, scheduling.AllowUndefinedWellKnown) != nil {
			continue
		}
		if ds, _ := v.daemonOverhead(np, it); !req.FitsIn(it.Allocatable().Sub(ds)) {
			continue
		}
		for oi := range it.Offerings {
			o := &it.Offerings[oi]
			node := base.Intersect(it.Requirements).Intersect(o.Requirements())
			if !o.Usable() || !node.IsSatisfiable() {
				continue
			}
			for _, a := range alts {
				if scheduling.Compatible(node, a, scheduling.AllowUndefinedWellKnown) != nil {
					continue
				}
				if tsc.TopologyKey == apisv1.LabelHostname {
					return []string{""}
				}
				lbls := it.NodeLabels(o)
				maps.Copy(lbls, np.Labels)
				if val, ok := lbls[tsc.TopologyKey]; ok {
					out = append(out, val)
				} else if r, ok := node.Intersect(a).Get(tsc.TopologyKey); ok && !r.IsComplement() {
					out = append(out, r.Values()...)
				}
			}
		}
	}
	return out
}

func carriesSpread(p *corev1.Pod, tsc corev1.TopologySpreadConstraint) bool {
	for _, c := range p.Spec.TopologySpreadConstraints {
		if c.TopologyKey == tsc.TopologyKey && c.WhenUnsatisfiable != corev1.ScheduleAnyway && reflect.DeepEqual(c.LabelSelector, tsc.LabelSelector) {
			return true
		}
	}
	return false
}

// gangs checks every gang of the snapshot: either none of its pending pods is placed, or those
// placed and those running make its minCount; and with a topology key, the nodes of all of them
// share one value of it.
func (v *verifier) gangs(placed map[*corev1.Pod]*vnode) {
	for _, g := range v.snap.Gangs {
		key := g.Namespace + "/" + g.Name
		var domains []string
		count := func(vn *vnode) {
			if g.TopologyKey == "" {
				return
			}
			d, ok := vn.labels[g.TopologyKey]
			if !ok {
				d = "(no " + g.TopologyKey + ")"
			}
			if !slices.Contains(domains, d) {
				domains = append(domains, d)
			}
		}
		n := 0
		for _, p := range v.snap.Pods {
			if GangOf(p) != key {
				continue
			}
			if vn := placed[p]; vn != nil {
				n++
				count(vn)
			}
		}
		if n == 0 {
			continue
		}
		running := 0
		for _, vn := range v.nodes {
			if !vn.existing {
				continue
			}
			for _, p := range vn.pods {
				if GangOf(p) == key && !v.pending(p) {
					running++
					count(vn)
				}
			}
		}
		if n+running < g.MinCount {
			v.fail("gang %s: %d pods placed and %d running, below its minCount %d", key, n, running, g.MinCount)
		}
		if len(domains) > 1 {
			v.fail("gang %s spans %d values of %s: %v", key, len(domains), g.TopologyKey, domains)
		}
	}
}

// requests is what the pod asks of its node: its containers' requests and the devices its
// dynamic resource claims take (Snapshot.Devices).
func (v *verifier) requests(p *corev1.Pod) (scheduling.Resources, error) {
	req, err := scheduling.PodRequests(p)
	if err != nil {
		return req, err
	}
	if need := v.snap.Devices[p]; !need.addTo(&req) {
		return req, fmt.Errorf("pod %s: devices counted as unknown resource %s", p.Name, need.Resource)
	}
	return req, nil
}

// nodeRequirements are the alternatives the pod accepts for its node, narrowed by what its
// dynamic resource claims need.
func (v *verifier) nodeRequirements(p *corev1.Pod) ([]scheduling.Requirements, error) {
	alts, err := scheduling.PodNodeRequirements(p)
	if err == nil {
		v.snap.Devices[p].narrow(alts)
	}
	return alts, err
}

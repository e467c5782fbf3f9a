package solver

import (
	"cmp"
	"maps"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// target is an existing node or an in-flight claim that pods may be placed on.
//
// Targets belong to the prepared snapshot and are shared by its solves, which never change
// them: what a solve places on a target is in solve.free and solve.addedPorts.
type target struct {
	host   int // hostname domain: base (a solve that excludes nodes leaves their hosts unused)
	node   *Node
	free0  scheduling.Resources // free room before any solve placed anything
	ports  []scheduling.HostPort
	labels map[string]string
	// base is the target's index among the prepared snapshot's targets, idx the node's in the
	// snapshot's Nodes.
	base, idx int
	// key is the node's signatureKey.
	key string
	// sig identifies nodes identical for requirement and taint checks (labels but the hostname,
	// and taints), so a class is checked once per signature.
	sig int
}

// domain returns the node's domain in dimension d.
func (t *target) domain(s *solve, d int) int {
	if d == dimHostname {
		return t.host
	}
	return s.topo.domainOfLabels(d, t.labels)
}

// compileTargets turns the snapshot's nodes into targets, in the order they are tried:
// initialized nodes, then uninitialized ones, then in-flight claims, each by name.
func (s *solve) compileTargets() {
	nodes := make([]int, 0, len(s.snap.Nodes))
	for i := range s.snap.Nodes {
		if s.snap.Nodes[i].MarkedForDeletion {
			continue
		}
		nodes = append(nodes, i)
	}
	slices.SortStableFunc(nodes, func(a, b int) int { return targetOrder(&s.snap.Nodes[a], &s.snap.Nodes[b]) })
	sigs := map[string]int{}
	s.targets = make([]*target, 0, len(nodes))
	for _, i := range nodes {
		n := &s.snap.Nodes[i]
		e := s.cache.node(n, s.compileNode)
		t := &target{host: len(s.targets), node: n, idx: i, labels: e.labels, free0: e.free, ports: e.ports, key: e.key}
		t.sig = sigOf(sigs, e.key)
		t.base = len(s.targets)
		s.targets = append(s.targets, t)
	}
}

// targetOrder is the order targets are tried in: initialized nodes, then uninitialized ones,
// then in-flight claims, each by name.
func targetOrder(a, b *Node) int {
	if c := cmp.Compare(targetRank(a), targetRank(b)); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

func targetRank(n *Node) int {
	switch {
	case n.InFlight:
		return 2
	case !n.Initialized:
		return 1
	}
	return 0
}

// sigOf numbers signature keys in the order they are first seen.
func sigOf(sigs map[string]int, key string) int {
	if i, ok := sigs[key]; ok {
		return i
	}
	sigs[key] = len(sigs)
	return len(sigs) - 1
}

// compileNode works out what the solver needs of a node: its labels (with its name as a field
// label), its free room after its pods and the DaemonSets that will land on it, its host ports,
// and its signature key.
func (s *solve) compileNode(n *Node) nodeEntry {
	labels := maps.Clone(n.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[scheduling.FieldNodeName] = n.Name
	e := nodeEntry{labels: labels, free: n.Allocatable, key: signatureKey(n)}
	present := map[string]bool{}
	for _, p := range n.Pods {
		if req, err := scheduling.PodRequests(p); err == nil {
			e.free = e.free.Sub(req)
		}
		e.ports = append(e.ports, scheduling.PodHostPorts(p)...)
		if ref := daemonSetOwner(p); ref != "" {
			present[p.Namespace+"/"+ref] = true
		}
	}
	// DaemonSets that would land on the node but have no pod there yet.
	for i := range s.snap.DaemonSets {
		d := &s.snap.DaemonSets[i]
		if present[d.Namespace+"/"+d.Name] || d.Pod == nil {
			continue
		}
		if s.daemonFits(d.Pod, labels, n.Taints) {
			if req, err := scheduling.PodRequests(d.Pod); err == nil {
				e.free = e.free.Sub(req)
			}
			// Its host ports are as good as bound: the DaemonSet's pod will claim them.
			e.ports = append(e.ports, scheduling.PodHostPorts(d.Pod)...)
		}
	}
	e.ports = e.ports[:len(e.ports):len(e.ports)]
	return e
}

func daemonSetOwner(p *corev1.Pod) string {
	for _, r := range p.OwnerReferences {
		if r.Kind == "DaemonSet" {
			return r.Name
		}
	}
	return ""
}

func (s *solve) daemonFits(pod *corev1.Pod, lbls map[string]string, taints []corev1.Taint) bool {
	if scheduling.UntoleratedTaint(pod.Spec.Tolerations, taints) != nil {
		return false
	}
	alts, err := scheduling.PodNodeRequirements(pod)
	if err != nil {
		return false
	}
	for _, a := range alts {
		if a.Matches(lbls) == nil {
			return true
		}
	}
	return false
}

// signatureKey is what tells nodes apart for the solver: their labels (but the hostname) and
// taints.
func signatureKey(n *Node) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(n.Labels)) {
		if k == corev1.LabelHostname {
			continue
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(n.Labels[k])
		b.WriteByte(0)
	}
	b.WriteByte(1)
	for _, t := range n.Taints {
		b.WriteString(taintString(&t))
		b.WriteByte(0)
	}
	return b.String()
}

// countExisting adds the pods running on every target to the topology groups, from counts the
// prepared snapshot keeps per group and target.
func (s *solve) countExisting() {
	for _, g := range s.topo.order {
		m := s.prep.memo(s.topo, g)
		for _, t := range s.targets {
			if n := m.count[t.base]; n > 0 {
				g.add(t.domain(s, g.dim), n, true)
			}
			if n := m.owners[t.base]; n > 0 {
				g.addOwners(t.domain(s, g.dim), n)
			}
		}
	}
}

// registerExisting creates the groups of the required anti-affinity terms of running pods, so
// that pending classes learn that those pods repel them.
func (s *solve) registerExisting() {
	for _, a := range s.prep.anti {
		s.topo.group(kindAnti, a.key, a.ns, a.nsSel, a.sel)
	}
}

// compileCache keeps the compiled form of each node for the next preparation of nearly the
// same nodes (Prepared.WithNodes, after a disruption command): most nodes come back unchanged,
// with the same pods, and need not be compiled again. Each preparation starts a new cache that
// holds only the nodes it saw, so the cache never outgrows the cluster. The DaemonSets are the
// same across the preparations that share a cache.
type compileCache struct {
	prev  *compileCache
	nodes map[string]nodeEntry // by node name
}

// nodeEntry is a compiled node and what it was compiled from.
type nodeEntry struct {
	from   Node
	labels map[string]string
	free   scheduling.Resources
	ports  []scheduling.HostPort
	key    string
}

func newCompileCache(prev *compileCache) *compileCache {
	return &compileCache{prev: prev, nodes: map[string]nodeEntry{}}
}

// node returns the node compiled, by compile unless the previous preparation compiled the
// same node.
func (c *compileCache) node(n *Node, compile func(*Node) nodeEntry) nodeEntry {
	if c.prev != nil {
		if e, ok := c.prev.nodes[n.Name]; ok && sameNode(&e.from, n) {
			c.nodes[n.Name] = e
			return e
		}
	}
	e := compile(n)
	e.from = *n
	c.nodes[n.Name] = e
	return e
}

// sameNode reports whether two nodes compile alike: the same allocatable, labels, taints and
// pods (the same pod objects).
func sameNode(a, b *Node) bool {
	if a.Allocatable != b.Allocatable || len(a.Pods) != len(b.Pods) || len(a.Labels) != len(b.Labels) || !slices.Equal(a.Taints, b.Taints) {
		return false
	}
	// Copies of a node share its slices and maps; only what differs needs comparing.
	samePods := len(a.Pods) == 0 || &a.Pods[0] == &b.Pods[0] || slices.Equal(a.Pods, b.Pods)
	return samePods && (reflect.ValueOf(a.Labels).UnsafePointer() == reflect.ValueOf(b.Labels).UnsafePointer() || maps.Equal(a.Labels, b.Labels))
}

package state

import (
	"maps"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/utils/clock"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/snapshot"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// NominationTTL is how long a node or claim that was planned to receive pending pods is
// protected from disruption.
const NominationTTL = 20 * time.Second

// Cluster mirrors the objects tenon plans with.
type Cluster struct {
	clock clock.PassiveClock

	mu         sync.RWMutex
	nodes      map[string]*corev1.Node
	claims     map[string]*apisv1.NodeClaim
	pods       map[string]*corev1.Pod            // every pod, by namespace/name
	podsByNode map[string]map[string]*corev1.Pod // bound pods by node name
	daemonSets map[string]*appsv1.DaemonSet
	nodePools  map[string]*apisv1.NodePool
	namespaces map[string]map[string]string
	pdbs       map[string]*policyv1.PodDisruptionBudget
	gangs      map[string]solver.Gang     // PodGroups with a gang policy, by namespace/name
	whole      map[string]bool            // PodGroups whose disruption mode is All, by namespace/name
	nominated  map[string]time.Time       // node or claim name → until
	marked     map[string]bool            // nodes or claims marked for deletion
	podEvents  map[string]time.Time       // node name → when a pod last arrived on or left it
	promised   map[string]map[string]bool // claim name → the pending pods promised to it (promises.go)
	promisedTo map[string]string          // pod (namespace/name) → the claim it is promised to
	lastBind   time.Time                  // when the mirror last saw a pending pod bound
	generation uint64
	changed    chan struct{}
}

// NewCluster returns an empty mirror reading time from clk.
func NewCluster(clk clock.PassiveClock) *Cluster {
	return &Cluster{
		clock:      clk,
		nodes:      map[string]*corev1.Node{},
		claims:     map[string]*apisv1.NodeClaim{},
		pods:       map[string]*corev1.Pod{},
		podsByNode: map[string]map[string]*corev1.Pod{},
		daemonSets: map[string]*appsv1.DaemonSet{},
		nodePools:  map[string]*apisv1.NodePool{},
		namespaces: map[string]map[string]string{},
		pdbs:       map[string]*policyv1.PodDisruptionBudget{},
		gangs:      map[string]solver.Gang{},
		whole:      map[string]bool{},
		nominated:  map[string]time.Time{},
		marked:     map[string]bool{},
		podEvents:  map[string]time.Time{},
		promised:   map[string]map[string]bool{},
		promisedTo: map[string]string{},
		changed:    make(chan struct{}),
	}
}

func key(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// bump records a change and wakes whoever waits in Changed.
func (c *Cluster) bump() {
	c.generation++
	close(c.changed)
	c.changed = make(chan struct{})
}

// Generation counts the changes seen so far.
func (c *Cluster) Generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.generation
}

// Changed returns a channel closed at the next change.
func (c *Cluster) Changed() <-chan struct{} {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.changed
}

// UpdateNode records a node.
func (c *Cluster) UpdateNode(n *corev1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nodes[n.Name] = n
	c.bump()
}

// DeleteNode forgets a node.
func (c *Cluster) DeleteNode(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.nodes, name)
	delete(c.marked, name)
	delete(c.nominated, name)
	delete(c.podEvents, name)
	c.bump()
}

// UpdateNodeClaim records a NodeClaim.
func (c *Cluster) UpdateNodeClaim(nc *apisv1.NodeClaim) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.claims[nc.Name] = nc
	c.bump()
}

// DeleteNodeClaim forgets a NodeClaim.
func (c *Cluster) DeleteNodeClaim(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.claims, name)
	delete(c.marked, name)
	delete(c.nominated, name)
	c.unpromiseClaim(name)
	c.bump()
}

// UpdatePod records a pod (bound or not). A pod arriving on a node (bound to it, or first seen
// bound to it) or leaving it (finished, or bound elsewhere) is a pod event of that node; see
// LastPodEvent.
func (c *Cluster) UpdatePod(p *corev1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := key(p.Namespace, p.Name)
	old, had := c.pods[k]
	if had && old.Spec.NodeName != "" && old.Spec.NodeName != p.Spec.NodeName {
		delete(c.podsByNode[old.Spec.NodeName], k)
	}
	if had && old.Spec.NodeName == "" && p.Spec.NodeName != "" {
		c.lastBind = c.clock.Now()
	}
	c.pods[k] = p
	if p.Spec.NodeName != "" || terminal(p) {
		c.unpromisePod(k)
	}
	if p.Spec.NodeName != "" {
		if terminal(p) {
			delete(c.podsByNode[p.Spec.NodeName], k)
		} else {
			m := c.podsByNode[p.Spec.NodeName]
			if m == nil {
				m = map[string]*corev1.Pod{}
				c.podsByNode[p.Spec.NodeName] = m
			}
			m[k] = p
		}
	}
	var from string
	if had {
		from = runsOn(old)
	}
	if to := runsOn(p); from != to {
		now := c.clock.Now()
		if from != "" {
			c.podEvent(from, now)
		}
		if to != "" {
			c.podEvent(to, arrival(p, now))
		}
	}
	c.bump()
}

// DeletePod forgets a pod; if it was running on a node, it left that node now.
func (c *Cluster) DeletePod(ns, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := key(ns, name)
	if old, ok := c.pods[k]; ok && old.Spec.NodeName != "" {
		delete(c.podsByNode[old.Spec.NodeName], k)
		if n := runsOn(old); n != "" {
			c.podEvent(n, c.clock.Now())
		}
	}
	delete(c.pods, k)
	c.unpromisePod(k)
	c.bump()
}

// runsOn is the node a pod occupies: the one it is bound to, unless it has finished.
func runsOn(p *corev1.Pod) string {
	if terminal(p) {
		return ""
	}
	return p.Spec.NodeName
}

// arrival is when a pod arrived on its node: when kube-scheduler bound it (its PodScheduled
// condition), else when it started, else when it was created, and never later than now. A
// pod first seen already bound (the mirror starting) thus keeps the time it really arrived.
func arrival(p *corev1.Pod, now time.Time) time.Time {
	t := p.CreationTimestamp.Time
	if p.Status.StartTime != nil {
		t = p.Status.StartTime.Time
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			t = c.LastTransitionTime.Time
		}
	}
	if t.IsZero() || t.After(now) {
		return now
	}
	return t
}

// podEvent records a pod event of a node at t, keeping the latest; callers hold c.mu.
func (c *Cluster) podEvent(node string, t time.Time) {
	if t.After(c.podEvents[node]) {
		c.podEvents[node] = t
	}
}

// LastPodEvent returns when a pod last arrived on or left the node, as far as the mirror has
// seen (zero: no pod event seen).
func (c *Cluster) LastPodEvent(node string) time.Time {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.podEvents[node]
}

func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// UpdateDaemonSet records a DaemonSet.
func (c *Cluster) UpdateDaemonSet(d *appsv1.DaemonSet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.daemonSets[key(d.Namespace, d.Name)] = d
	c.bump()
}

// DeleteDaemonSet forgets a DaemonSet.
func (c *Cluster) DeleteDaemonSet(ns, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.daemonSets, key(ns, name))
	c.bump()
}

// UpdateNodePool records a NodePool.
func (c *Cluster) UpdateNodePool(np *apisv1.NodePool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nodePools[np.Name] = np
	c.bump()
}

// DeleteNodePool forgets a NodePool.
func (c *Cluster) DeleteNodePool(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.nodePools, name)
	c.bump()
}

// UpdateNamespace records a namespace's labels.
func (c *Cluster) UpdateNamespace(ns *corev1.Namespace) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.namespaces[ns.Name] = ns.Labels
	c.bump()
}

// DeleteNamespace forgets a namespace.
func (c *Cluster) DeleteNamespace(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.namespaces, name)
	c.bump()
}

// UpdatePDB records a PodDisruptionBudget.
func (c *Cluster) UpdatePDB(p *policyv1.PodDisruptionBudget) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pdbs[key(p.Namespace, p.Name)] = p
	c.bump()
}

// DeletePDB forgets a PodDisruptionBudget.
func (c *Cluster) DeletePDB(ns, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pdbs, key(ns, name))
	c.bump()
}

// UpdatePodGroup records a PodGroup: as a gang when its policy is one, forgotten otherwise.
func (c *Cluster) UpdatePodGroup(pg *schedulingv1beta1.PodGroup) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g, ok := snapshot.Gang(pg); ok {
		c.gangs[key(pg.Namespace, pg.Name)] = g
	} else {
		delete(c.gangs, key(pg.Namespace, pg.Name))
	}
	if snapshot.DisruptedWhole(pg) {
		c.whole[key(pg.Namespace, pg.Name)] = true
	} else {
		delete(c.whole, key(pg.Namespace, pg.Name))
	}
	c.bump()
}

// DeletePodGroup forgets a PodGroup.
func (c *Cluster) DeletePodGroup(ns, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.gangs, key(ns, name))
	delete(c.whole, key(ns, name))
	c.bump()
}

// WholeGroups returns the PodGroups (namespace/name) whose disruption mode is All, sorted.
func (c *Cluster) WholeGroups() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Sorted(maps.Keys(c.whole))
}

// Gangs returns the PodGroups with a gang policy, by namespace and name.
func (c *Cluster) Gangs() []solver.Gang {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := slices.Collect(maps.Values(c.gangs))
	slices.SortFunc(out, func(a, b solver.Gang) int { return compare(key(a.Namespace, a.Name), key(b.Namespace, b.Name)) })
	return out
}

// Nominate protects a node or claim that was planned to receive pods until now + NominationTTL.
func (c *Cluster) Nominate(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nominated[name] = c.clock.Now().Add(NominationTTL)
}

// IsNominated reports whether a node or claim is protected by a recent nomination.
func (c *Cluster) IsNominated(name string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.clock.Now().Before(c.nominated[name])
}

// MarkForDeletion marks nodes (or claims) the disruption loop is removing: they take no pods,
// and their pods are planned as if pending.
func (c *Cluster) MarkForDeletion(names ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range names {
		c.marked[n] = true
	}
	c.bump()
}

// UnmarkForDeletion takes the mark away again (a disruption command failed).
func (c *Cluster) UnmarkForDeletion(names ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range names {
		delete(c.marked, n)
	}
	c.bump()
}

// IsMarkedForDeletion reports whether a node or claim is marked.
func (c *Cluster) IsMarkedForDeletion(name string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.marked[name]
}

// NodePools returns the NodePools, by name.
func (c *Cluster) NodePools() []*apisv1.NodePool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := slices.Collect(maps.Values(c.nodePools))
	slices.SortFunc(out, func(a, b *apisv1.NodePool) int { return compare(a.Name, b.Name) })
	return out
}

// NodePool returns one NodePool.
func (c *Cluster) NodePool(name string) (*apisv1.NodePool, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	np, ok := c.nodePools[name]
	return np, ok
}

// Pods returns every pod the mirror knows, by namespace/name.
func (c *Cluster) Pods() []*corev1.Pod {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := slices.Collect(maps.Values(c.pods))
	slices.SortFunc(out, func(a, b *corev1.Pod) int { return compare(key(a.Namespace, a.Name), key(b.Namespace, b.Name)) })
	return out
}

// Pod returns the pod the mirror knows by that namespace and name.
func (c *Cluster) Pod(namespace, name string) (*corev1.Pod, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	p, ok := c.pods[key(namespace, name)]
	return p, ok
}

// NominatedNodes returns the nodes that pending pods are nominated to (status.
// nominatedNodeName, by kube-scheduler for a preemption or by tenon's nominator): kube-scheduler
// keeps room there for them; and the registered nodes holding pending pods promised to their
// claims (promises.go).
func (c *Cluster) NominatedNodes() map[string]bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := map[string]bool{}
	for _, p := range c.pods {
		if waiting(p) && p.Status.NominatedNodeName != "" {
			out[p.Status.NominatedNodeName] = true
		}
	}
	// A registered node whose claim holds promised pods still pending is where they are
	// headed as well.
	nodes := c.nodesByProviderID()
	for claim := range c.promised {
		nc := c.claims[claim]
		if nc == nil {
			continue
		}
		if n := nodes[nc.Status.ProviderID]; n != nil && len(c.promisedPods(claim, nodes)) > 0 {
			out[n.Name] = true
		}
	}
	return out
}

// PodsOn returns the pods bound to a node, by namespace/name.
func (c *Cluster) PodsOn(node string) []*corev1.Pod {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return sortedPods(c.podsByNode[node])
}

func sortedPods(m map[string]*corev1.Pod) []*corev1.Pod {
	out := slices.Collect(maps.Values(m))
	slices.SortFunc(out, func(a, b *corev1.Pod) int { return compare(key(a.Namespace, a.Name), key(b.Namespace, b.Name)) })
	return out
}

// PDBs returns the PodDisruptionBudgets.
func (c *Cluster) PDBs() []*policyv1.PodDisruptionBudget {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Collect(maps.Values(c.pdbs))
}

// NodeClaims returns the NodeClaims, by name.
func (c *Cluster) NodeClaims() []*apisv1.NodeClaim {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := slices.Collect(maps.Values(c.claims))
	slices.SortFunc(out, func(a, b *apisv1.NodeClaim) int { return compare(a.Name, b.Name) })
	return out
}

// Nodes returns the nodes, by name.
func (c *Cluster) Nodes() []*corev1.Node {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := slices.Collect(maps.Values(c.nodes))
	slices.SortFunc(out, func(a, b *corev1.Node) int { return compare(a.Name, b.Name) })
	return out
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

package state

import (
	"iter"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// PromiseTTL is how long pending pods stay promised to a NodeClaim after its Node registered:
// kube-scheduler binds them within seconds when they fit; a pod still pending after that did
// not fit where it was planned, and is planned for again. While kube-scheduler is still
// binding pods (a burst of thousands takes it minutes), the promise holds longer, up to
// MaxSchedulerWait (see Outlived).
const PromiseTTL = time.Minute

// MaxSchedulerWait bounds how long a promise or a nomination holds while kube-scheduler is
// busy binding other pods.
const MaxSchedulerWait = 5 * time.Minute

// schedulerBusy: kube-scheduler is taken to be still working through its queue when the
// mirror saw a pod bound within this long.
const schedulerBusy = 10 * time.Second

// Outlived reports whether something that began at start (a node's registration, a
// nomination) and waits for kube-scheduler has waited longer than ttl: ttl has passed and
// either kube-scheduler has bound no pod for schedulerBusy or MaxSchedulerWait has passed too.
// A pod still pending while kube-scheduler binds a burst has not been judged yet; a pod still
// pending once it has gone quiet did not fit.
func (c *Cluster) Outlived(start time.Time, ttl time.Duration) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.outlived(start, ttl)
}

// outlived is Outlived; c.mu is held.
func (c *Cluster) outlived(start time.Time, ttl time.Duration) bool {
	age := c.clock.Since(start)
	if age <= ttl {
		return false
	}
	return age > MaxSchedulerWait || c.lastBind.IsZero() || c.clock.Since(c.lastBind) > schedulerBusy
}

// Promises: the provisioner promises a NodeClaim the pending pods it planned onto it. While the
// promise holds, the claim is seen (SolverNodes) holding those pods as if they were bound, and
// the pods are not pending for another plan (Promised). Without it, a later batch, which runs
// while the first batch's claims are still launching, planned the same pods again by
// first-fit onto the claims in flight, fitted them worse than the plan that bought the claims
// did, and bought more.
//
// A promise ends when the pod binds or goes, when the claim goes or is marked for deletion,
// when the claim launched with an allocatable that does not hold what it was planned to hold
// (its resource requests: the pods and DaemonSet overhead), once the claim's Node has no
// room left for them beside the pods bound to it, and PromiseTTL after the Node registered
// (longer while kube-scheduler is still binding a burst: Outlived).

// Promise records that pods were planned onto the NodeClaim named claim; a later promise of
// the same pod replaces the earlier one.
func (c *Cluster) Promise(claim string, pods []*corev1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range pods {
		k := key(p.Namespace, p.Name)
		if prev, ok := c.promisedTo[k]; ok {
			delete(c.promised[prev], k)
			if len(c.promised[prev]) == 0 {
				delete(c.promised, prev)
			}
		}
		c.promisedTo[k] = claim
		if c.promised[claim] == nil {
			c.promised[claim] = map[string]bool{}
		}
		c.promised[claim][k] = true
	}
}

// Promised returns a test of whether a pending pod is promised to a NodeClaim whose promise
// holds now. The test is computed once; use it for one pass over the pending pods.
func (c *Cluster) Promised() func(*corev1.Pod) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	nodes := c.nodesByProviderID()
	held := map[string]bool{}
	for claim := range c.promised {
		for _, p := range c.promisedPods(claim, nodes) {
			held[key(p.Namespace, p.Name)] = true
		}
	}
	return func(p *corev1.Pod) bool { return held[key(p.Namespace, p.Name)] }
}

// HoldsPromises reports whether a promise holds a pending pod now: the pod is left out of the
// provisioner's backlog until the promise ends, which PromiseTTL alone may end with nothing
// in the cluster changing.
func (c *Cluster) HoldsPromises() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	nodes := c.nodesByProviderID()
	for claim := range c.promised {
		if len(c.promisedPods(claim, nodes)) > 0 {
			return true
		}
	}
	return false
}

// promisedPods returns the pending pods promised to claim while the promise holds, by
// namespace/name; c.mu is held.
func (c *Cluster) promisedPods(claim string, nodes map[string]*corev1.Node) []*corev1.Pod {
	keys := c.promised[claim]
	if len(keys) == 0 || !c.promiseHolds(claim, nodes) {
		return nil
	}
	var out []*corev1.Pod
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if p := c.pods[k]; waiting(p) {
			out = append(out, p)
		}
	}
	return out
}

// promiseHolds reports whether the promise to claim holds; c.mu is held. nodes are the
// registered nodes by provider ID.
func (c *Cluster) promiseHolds(claim string, nodes map[string]*corev1.Node) bool {
	nc := c.claims[claim]
	if nc == nil || nc.DeletionTimestamp != nil || c.marked[claim] {
		return false
	}
	if len(nc.Status.Allocatable) > 0 {
		want, err1 := scheduling.FromResourceList(nc.Spec.Resources.Requests)
		got, err2 := scheduling.FromResourceList(nc.Status.Allocatable)
		if err1 != nil || err2 != nil || !want.Fits(&got) {
			return false
		}
	}
	if n := nodes[nc.Status.ProviderID]; n != nil {
		return !c.marked[n.Name] && !c.outlived(n.CreationTimestamp.Time, PromiseTTL) && c.roomFor(claim, n)
	}
	return true
}

// roomFor reports whether a registered node still has room for the pending pods promised to
// its claim beside the pods bound to it: kube-scheduler may have bound others there (without
// nomination it binds by its own scores), and then the promise no longer describes the node;
// c.mu is held.
func (c *Cluster) roomFor(claim string, n *corev1.Node) bool {
	return c.fits(n, maps.Keys(c.promised[claim]))
}

// HasRoom reports whether the node called name has room, beside the pods bound to it, for the
// pending pods named by namespace/name (those not pending, or unknown, are left out). It is
// false for a node tenon has not seen.
func (c *Cluster) HasRoom(name string, pending []types.NamespacedName) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := c.nodes[name]
	if n == nil {
		return false
	}
	return c.fits(n, func(yield func(string) bool) {
		for _, k := range pending {
			if !yield(key(k.Namespace, k.Name)) {
				return
			}
		}
	})
}

// fits reports whether the pods bound to n and the pending pods of keys fit n's allocatable;
// c.mu is held.
func (c *Cluster) fits(n *corev1.Node, keys iter.Seq[string]) bool {
	free, err := scheduling.FromResourceList(n.Status.Allocatable)
	if err != nil {
		return false
	}
	var need scheduling.Resources
	for _, p := range c.podsByNode[n.Name] {
		if req, err := scheduling.PodRequests(p); err == nil {
			need = need.Add(req)
		}
	}
	for k := range keys {
		if p := c.pods[k]; waiting(p) {
			if req, err := scheduling.PodRequests(p); err == nil {
				need = need.Add(req)
			}
		}
	}
	return need.Fits(&free)
}

// waiting reports whether p is a pod that waits for a node: known, unbound, not being deleted
// and not finished.
func waiting(p *corev1.Pod) bool {
	return p != nil && p.Spec.NodeName == "" && p.DeletionTimestamp == nil && !terminal(p)
}

// nodesByProviderID indexes the registered nodes; c.mu is held.
func (c *Cluster) nodesByProviderID() map[string]*corev1.Node {
	out := make(map[string]*corev1.Node, len(c.nodes))
	for _, n := range c.nodes {
		if n.Spec.ProviderID != "" {
			out[n.Spec.ProviderID] = n
		}
	}
	return out
}

// unpromisePod drops a pod's promise (it bound, or went); c.mu is held.
func (c *Cluster) unpromisePod(k string) {
	if claim, ok := c.promisedTo[k]; ok {
		delete(c.promised[claim], k)
		if len(c.promised[claim]) == 0 {
			delete(c.promised, claim)
		}
		delete(c.promisedTo, k)
	}
}

// unpromiseClaim drops the promises to a claim (it went); c.mu is held.
func (c *Cluster) unpromiseClaim(claim string) {
	for k := range c.promised[claim] {
		if c.promisedTo[k] == claim {
			delete(c.promisedTo, k)
		}
	}
	delete(c.promised, claim)
}

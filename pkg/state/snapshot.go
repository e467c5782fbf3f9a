package state

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/snapshot"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// TypeLookup finds an instance type by name for a NodePool (nil when unknown).
type TypeLookup func(nodePool, name string) (*catalog.InstanceType, bool)

// SolverNodes returns every machine as the solver sees it: registered nodes with their bound
// pods, and NodeClaims whose node has not registered (in flight). Nodes and claims marked for
// deletion come back with MarkedForDeletion set. A claim, in flight or registered, holds the
// pending pods promised to it while the promise holds (promises.go), as if they were bound.
// Errors name the object and are returned with the nodes that did convert, so one bad object
// never hides the rest.
func (c *Cluster) SolverNodes(types TypeLookup) ([]solver.Node, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var errs []error
	registered := map[string]bool{} // provider IDs with a node
	byProviderID := c.nodesByProviderID()
	var out []solver.Node
	for _, name := range slices.Sorted(maps.Keys(c.nodes)) {
		n := c.nodes[name]
		if n.Spec.ProviderID != "" {
			registered[n.Spec.ProviderID] = true
		}
		sn, err := snapshot.Node(n, sortedPods(c.podsByNode[name]))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sn.MarkedForDeletion = sn.MarkedForDeletion || c.marked[name]
		if nc := c.claimFor(n); nc != nil {
			sn.MarkedForDeletion = sn.MarkedForDeletion || c.marked[nc.Name] || nc.DeletionTimestamp != nil
			if !sn.Initialized {
				expectClaim(&sn, nc)
			}
			sn.Pods = append(sn.Pods, c.promisedPods(nc.Name, byProviderID)...)
		}
		out = append(out, sn)
	}
	for _, name := range slices.Sorted(maps.Keys(c.claims)) {
		nc := c.claims[name]
		if nc.Status.ProviderID != "" && registered[nc.Status.ProviderID] {
			continue
		}
		pool := nc.Labels[apisv1.NodePoolLabelKey]
		var lookup func(string) (*catalog.InstanceType, bool)
		if types != nil {
			lookup = func(n string) (*catalog.InstanceType, bool) { return types(pool, n) }
		}
		sn, err := snapshot.InFlight(nc, lookup)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sn.MarkedForDeletion = sn.MarkedForDeletion || c.marked[name]
		sn.Pods = c.promisedPods(name, byProviderID)
		out = append(out, sn)
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("%d objects could not be read: %v", len(errs), errs)
	}
	return out, nil
}

// claimFor returns the NodeClaim of a node (same provider ID), or nil.
func (c *Cluster) claimFor(n *corev1.Node) *apisv1.NodeClaim {
	if n.Spec.ProviderID == "" {
		return nil
	}
	for _, nc := range c.claims {
		if nc.Status.ProviderID == n.Spec.ProviderID {
			return nc
		}
	}
	return nil
}

// Usage sums what a NodePool's nodes and in-flight claims hold against its limits: the capacity
// of each machine (its node's, else its claim's status, else its requests) and their count.
func (c *Cluster) Usage(pool string) snapshot.Usage {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var u snapshot.Usage
	seen := map[string]bool{}
	for _, n := range c.nodes {
		if n.Labels[apisv1.NodePoolLabelKey] != pool {
			continue
		}
		if n.Spec.ProviderID != "" {
			seen[n.Spec.ProviderID] = true
		}
		if cap, err := scheduling.FromResourceList(n.Status.Capacity); err == nil {
			u.Capacity = u.Capacity.Add(cap)
		}
		u.Nodes++
	}
	for _, nc := range c.claims {
		if nc.Labels[apisv1.NodePoolLabelKey] != pool || (nc.Status.ProviderID != "" && seen[nc.Status.ProviderID]) {
			continue
		}
		list := nc.Status.Capacity
		if len(list) == 0 {
			list = nc.Spec.Resources.Requests
		}
		if cap, err := scheduling.FromResourceList(list); err == nil {
			u.Capacity = u.Capacity.Add(cap)
		}
		u.Nodes++
	}
	return u
}

// DaemonSets returns every DaemonSet's pod template as a pod, for overhead.
func (c *Cluster) DaemonSets() []solver.DaemonSet {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]solver.DaemonSet, 0, len(c.daemonSets))
	for _, k := range slices.Sorted(maps.Keys(c.daemonSets)) {
		d := c.daemonSets[k]
		pod := &corev1.Pod{Spec: *d.Spec.Template.Spec.DeepCopy()}
		pod.Namespace, pod.Labels = d.Namespace, d.Spec.Template.Labels
		out = append(out, solver.DaemonSet{Namespace: d.Namespace, Name: d.Name, Pod: pod})
	}
	return out
}

// NamespaceLabels returns each namespace's labels.
func (c *Cluster) NamespaceLabels() map[string]map[string]string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return maps.Clone(c.namespaces)
}

// PodsToReschedule returns the pods bound to nodes marked for deletion (or whose NodeClaim is
// being deleted) that would need a new home: not DaemonSet pods, not mirror pods, not finished.
func (c *Cluster) PodsToReschedule() []*corev1.Pod {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []*corev1.Pod
	for _, name := range slices.Sorted(maps.Keys(c.nodes)) {
		n := c.nodes[name]
		deleting := c.marked[name] || n.DeletionTimestamp != nil
		if nc := c.claimFor(n); nc != nil {
			deleting = deleting || c.marked[nc.Name] || nc.DeletionTimestamp != nil
		}
		if !deleting {
			continue
		}
		for _, p := range sortedPods(c.podsByNode[name]) {
			if Reschedulable(p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// Reschedulable reports whether a bound pod would need a new node if its node went away.
func Reschedulable(p *corev1.Pod) bool { return solver.Reschedulable(p) }

// expectClaim plans an uninitialized node as its NodeClaim says it will be: with the resources
// its instance type has (GPUs appear only once a device plugin registers them) and without the
// startup taints that will be removed.
func expectClaim(sn *solver.Node, nc *apisv1.NodeClaim) {
	if alloc, err := scheduling.FromResourceList(nc.Status.Allocatable); err == nil {
		sn.Allocatable = sn.Allocatable.Max(alloc)
	}
	if len(nc.Spec.StartupTaints) == 0 {
		return
	}
	var taints []corev1.Taint
	for _, t := range sn.Taints {
		startup := false
		for _, st := range nc.Spec.StartupTaints {
			startup = startup || (st.Key == t.Key && st.Effect == t.Effect)
		}
		if !startup {
			taints = append(taints, t)
		}
	}
	sn.Taints = taints
}

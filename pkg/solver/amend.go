package solver

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Amend prepares snap, which is p's snapshot after a few of its nodes changed: the same
// NodePools, DaemonSets and namespaces; below the prepared snapshot's length the same nodes at
// the same indexes but for those at the indexes in changed (marked for deletion now, or holding
// other pods); and new nodes after them. It gives the Prepared WithNodes(snap) gives, compiling
// only the changed and the new nodes and carrying every other node's compiled form over: a
// disruption pass amends its snapshot after each command it commits, and on a fleet of
// thousands of nodes compiling them all again was most of the pass.
//
// Nodes at indexes not in changed must be as they were (the same labels, taints, allocatable,
// state and pod objects); Amend does not look.
func (p *Prepared) Amend(snap *Snapshot, changed []int) (*Prepared, error) {
	b := p.base
	old := b.snap
	if len(snap.Nodes) < len(old.Nodes) {
		return nil, fmt.Errorf("amending a prepared snapshot of %d nodes with %d: nodes may only be added", len(old.Nodes), len(snap.Nodes))
	}
	dirty := make([]bool, len(old.Nodes))
	var fresh []int // the indexes of the nodes to compile, changed then new
	for _, i := range changed {
		if i < 0 || i >= len(old.Nodes) {
			return nil, fmt.Errorf("amending a prepared snapshot of %d nodes: changed node index %d out of range", len(old.Nodes), i)
		}
		if !dirty[i] {
			dirty[i] = true
			fresh = append(fresh, i)
		}
	}
	for i := len(old.Nodes); i < len(snap.Nodes); i++ {
		fresh = append(fresh, i)
	}
	for _, i := range fresh {
		if !b.knowsZone(&snap.Nodes[i]) {
			return Prepare(snap)
		}
	}
	// The cache is shared with p's: every entry is checked against the node it is used for
	// (sameNode), so one compiled here never stands in for a node it does not match.
	nb := b.withSnapshot(snap, b.cache)
	var add []target
	for _, i := range fresh {
		n := &snap.Nodes[i]
		if n.MarkedForDeletion {
			continue
		}
		e := nb.cache.node(n, nb.compileNode)
		add = append(add, target{node: n, idx: i, labels: e.labels, free0: e.free, ports: e.ports, key: e.key})
	}
	slices.SortStableFunc(add, func(x, y target) int { return targetOrder(x.node, y.node) })

	np := &Prepared{base: nb, memos: map[string]*groupMemo{}, guide: p.guide}
	slab := make([]target, 0, len(b.targets)+len(add))
	nb.targets = make([]*target, 0, len(b.targets)+len(add))
	sigs := map[string]int{}
	next := 0 // p.anti's next entry; its entries are in the order of their targets
	put := func(t target, was int) {
		t.base, t.host = len(nb.targets), len(nb.targets)
		t.sig = sigOf(sigs, t.key)
		slab = append(slab, t)
		nt := &slab[len(slab)-1]
		nb.targets = append(nb.targets, nt)
		if was < 0 {
			np.anti = appendAnti(np.anti, nt)
			return
		}
		for next < len(p.anti) && p.anti[next].base < was {
			next++
		}
		for ; next < len(p.anti) && p.anti[next].base == was; next++ {
			a := p.anti[next]
			a.base = nt.base
			np.anti = append(np.anti, a)
		}
	}
	j := 0
	for _, t := range b.targets {
		if dirty[t.idx] {
			continue
		}
		n := &snap.Nodes[t.idx]
		for ; j < len(add); j++ {
			c := targetOrder(add[j].node, n)
			if c == 0 {
				return p.WithNodes(snap) // two nodes of one name: the order is the snapshot's
			}
			if c > 0 {
				break
			}
			put(add[j], -1)
		}
		kept := *t
		kept.node = n
		put(kept, t.base)
	}
	for ; j < len(add); j++ {
		put(add[j], -1)
	}
	np.existingKeys = p.amendedKeys(np, changed, add)
	return np, nil
}

// amendedKeys is the existingKeys of np, which is p with the nodes at the changed indexes of
// p's snapshot replaced and the targets add compiled. Keys are a set: one that a pod no longer
// running looked at may still be looked at by another, so when such a pod had any, the keys are
// gathered again from every node.
func (p *Prepared) amendedKeys(np *Prepared, changed []int, add []target) map[string]bool {
	var added []*corev1.Pod
	for i := range add {
		added = append(added, add[i].node.Pods...)
	}
	still := make(map[*corev1.Pod]bool, len(added))
	for _, pod := range added {
		still[pod] = true
	}
	var gone []*corev1.Pod
	for _, i := range changed {
		n := &p.base.snap.Nodes[i]
		if n.MarkedForDeletion {
			continue // its pods were not running on p either
		}
		for _, pod := range n.Pods {
			if !still[pod] {
				gone = append(gone, pod)
			}
		}
	}
	if len(selectorKeys(gone, nil)) > 0 {
		var running []*corev1.Pod
		for _, t := range np.base.targets {
			running = append(running, t.node.Pods...)
		}
		return selectorKeys(running, nil)
	}
	for k := range selectorKeys(added, nil) {
		if !p.existingKeys[k] {
			return selectorKeys(added, p.existingKeys)
		}
	}
	return p.existingKeys
}

package provisioning

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/snapshot"
	"github.com/tenon-sh/tenon/pkg/state"
)

// nominator tells kube-scheduler where the plan put each pod. The provisioner records, for each
// NodeClaim, the pods it planned onto it (new claims and claims in flight alike); when the
// claim's Node registers (the lifecycle calls registering before the unregistered taint comes
// off) and when a registered Node changes, the nominator sets status.nominatedNodeName on those
// still pending, and kube-scheduler (with NominatedNodeNameForExpectation, beta and on by default from
// Kubernetes 1.35) tries that node first. Without it kube-scheduler binds a burst as its scores
// say, onto whichever node registers first, and the pods planned there find it full and wait
// for another batch, which buys more.
//
// A nomination that has not led to a binding within NominationTTL is stale (longer while
// kube-scheduler is still binding other pods, up to state.MaxSchedulerWait: state.Cluster.
// Outlived): the pod is planned for again (kube-scheduler keeps a nomination when the pod does
// not fit there), and a later plan may nominate it elsewhere.
type nominator struct {
	kube    client.Client
	cluster *state.Cluster
	clock   clock.Clock
	log     logr.Logger
	// stale is called when a nomination goes stale (the provisioner's Trigger).
	stale func()

	mu      sync.Mutex
	planned map[string][]types.NamespacedName // claim → the pods planned onto it
	claimOf map[types.NamespacedName]string   // pod → the claim it is planned onto
	made    map[types.NamespacedName]nomination
	queue   chan string // provider IDs of nodes registered or updated
	// cleared holds pods whose nomination by tenon kube-scheduler took off (podChanged).
	cleared chan types.NamespacedName
	// writes bounds the status patches in flight (nominationWorkers): a node of a large batch
	// has tens of pods to nominate, and a batch tens of nodes registering at once.
	writes chan struct{}
}

// nominationWorkers is how many nominations are written at once. Written one at a time, the
// nominations of 10,000 pods lag minutes behind kube-scheduler; written 4 or 32 at a time, a
// burst of 1,000 pods bound two to three times slower and bought one or two NodeClaims more
// (BenchmarkProvisioning, docs/performance.md), kube-scheduler being slowed by the burst of pod
// updates. One at a time is what measured best.
const nominationWorkers = 1

// nomination is one tenon made: the node, and when.
type nomination struct {
	node     string
	at       time.Time
	reported bool // gone stale and reported
}

// NominationTTL is how long a nomination tenon made may go without the pod binding before the
// pod is planned for again.
const NominationTTL = time.Minute

func newNominator(kube client.Client, cluster *state.Cluster, clk clock.Clock, log logr.Logger, stale func()) *nominator {
	return &nominator{kube: kube, cluster: cluster, clock: clk, log: log, stale: stale, planned: map[string][]types.NamespacedName{},
		claimOf: map[types.NamespacedName]string{}, made: map[types.NamespacedName]nomination{}, queue: make(chan string, 4096),
		cleared: make(chan types.NamespacedName, 4096),
		writes:  make(chan struct{}, nominationWorkers)}
}

// isStale reports whether the pod's nomination is one tenon made more than NominationTTL ago.
func (n *nominator) isStale(p *corev1.Pod) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	m, ok := n.made[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}]
	return ok && m.node == p.Status.NominatedNodeName && n.cluster.Outlived(m.at, NominationTTL)
}

// sweep forgets the nominations of pods bound or gone, and calls stale when one went stale.
func (n *nominator) sweep() {
	live := map[types.NamespacedName]bool{}
	for _, p := range n.cluster.Pods() {
		if p.Spec.NodeName == "" && p.DeletionTimestamp == nil {
			live[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = true
		}
	}
	n.mu.Lock()
	fire := false
	for k, m := range n.made {
		switch {
		case !live[k]:
			delete(n.made, k)
		case !m.reported && n.cluster.Outlived(m.at, NominationTTL):
			m.reported, fire = true, true
			n.made[k] = m
		}
	}
	n.mu.Unlock()
	if fire && n.stale != nil {
		n.stale()
	}
}

// plan records that pods were planned onto a claim (a later plan of the same pod wins: the
// pod is taken off the claim it was planned onto before).
func (n *nominator) plan(claim string, pods []*corev1.Pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, p := range pods {
		key := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
		if prev, ok := n.claimOf[key]; ok {
			n.planned[prev] = slices.DeleteFunc(n.planned[prev], func(k types.NamespacedName) bool { return k == key })
		}
		n.planned[claim] = append(n.planned[claim], key)
		n.claimOf[key] = claim
	}
}

// forget drops what is recorded of a claim.
func (n *nominator) forget(claim string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.take(claim)
}

// take removes and returns what is recorded of a claim; n.mu is held.
func (n *nominator) take(claim string) []types.NamespacedName {
	keys := n.planned[claim]
	delete(n.planned, claim)
	for _, k := range keys {
		if n.claimOf[k] == claim {
			delete(n.claimOf, k)
		}
	}
	return keys
}

// nodeChanged queues a node for nomination; it never blocks the informer (a full queue drops
// the event: the pods then schedule as kube-scheduler sees fit, as without nomination).
func (n *nominator) nodeChanged(node *corev1.Node) {
	if node.Spec.ProviderID == "" {
		return
	}
	select {
	case n.queue <- node.Spec.ProviderID:
	default:
	}
}

// podChanged queues a pending pod whose nomination by tenon was just taken off, to be nominated
// again (renominate); it never blocks the informer. kube-scheduler takes a pod's nomination off
// whenever an attempt to schedule it fails, and while the pod's planned node still carries the
// unregistered taint every attempt fails: when the taint then comes off, the room the plan kept
// there for the pod is held for no one, and pods planned elsewhere take it (seen in
// TestPodsBindWhereTheyWerePlanned).
func (n *nominator) podChanged(old, cur *corev1.Pod) {
	if old.Status.NominatedNodeName == "" || cur.Status.NominatedNodeName != "" || cur.Spec.NodeName != "" || cur.DeletionTimestamp != nil {
		return
	}
	key := types.NamespacedName{Namespace: cur.Namespace, Name: cur.Name}
	n.mu.Lock()
	m, ok := n.made[key]
	n.mu.Unlock()
	if !ok || m.node != old.Status.NominatedNodeName {
		return // not tenon's nomination
	}
	select {
	case n.cleared <- key:
	default:
	}
}

// renominate writes tenon's nomination of a pod again after kube-scheduler took it off, unless
// the pod is bound, going or nominated anew, its node is gone or has no room for it beside the
// pods bound there and those tenon nominated there, or the nomination has outlived
// NominationTTL. The nomination keeps the time it was first made, so that a pod that cannot
// fit its planned node stops holding room there after NominationTTL as before. It reports
// whether the pod is nominated to that node when it returns (written now, or by another call).
func (n *nominator) renominate(ctx context.Context, key types.NamespacedName) bool {
	// kube-scheduler also takes a nomination off when the pod no longer fits its node (others
	// bound there): then the pod is left to the next plan, not held where it cannot go. The
	// room is checked for the pod and every other pod tenon nominated there.
	n.mu.Lock()
	m, ok := n.made[key]
	there := []types.NamespacedName{key}
	for k, o := range n.made {
		if ok && k != key && o.node == m.node {
			there = append(there, k)
		}
	}
	n.mu.Unlock()
	if !ok || n.cluster.Outlived(m.at, NominationTTL) || !n.cluster.HasRoom(m.node, there) {
		return false
	}
	pod := &corev1.Pod{}
	if err := n.kube.Get(ctx, key, pod); err != nil || pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil {
		return false
	}
	if nnn := pod.Status.NominatedNodeName; nnn != "" {
		return nnn == m.node
	}
	if err := n.write(ctx, pod, m.node); err != nil {
		return false
	}
	n.log.V(1).Info("nominated a pod again after kube-scheduler took its nomination off", "pod", snapshot.PodKey(pod), "node", m.node)
	return true
}

// write patches the pod's nominated node.
func (n *nominator) write(ctx context.Context, pod *corev1.Pod, node string) error {
	patch := client.MergeFrom(pod.DeepCopy())
	pod.Status.NominatedNodeName = node
	err := n.kube.Status().Patch(ctx, pod, patch)
	if err != nil && !apierrors.IsNotFound(err) {
		n.log.V(1).Info("could not nominate a pod to its planned node", "pod", snapshot.PodKey(pod), "node", node, "error", err.Error())
	}
	return err
}

// run nominates until ctx ends, sweeping stale nominations every NominationTTL/4.
func (n *nominator) run(ctx context.Context) {
	t := n.clock.NewTimer(NominationTTL / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case id := <-n.queue:
			// Nodes are nominated side by side; n.writes bounds the writes in flight.
			go n.nominate(ctx, id)
		case key := <-n.cleared:
			go n.renominate(ctx, key)
		case <-t.C():
			n.sweep()
			t.Reset(NominationTTL / 4)
		}
	}
}

// nominate sets the node of the claim with providerID as the nominated node of the pods
// planned onto the claim that are still pending and nominated nowhere. A node still carrying
// karpenter.sh/unregistered is left to registration (registering, below), which nominates
// before the taint comes off. The writes go out nominationWorkers at a time across all nodes;
// nominate returns once they are all done.
func (n *nominator) nominate(ctx context.Context, providerID string) {
	claim, node := n.cluster.ByProviderID(providerID)
	if claim == nil || node == nil || unregistered(node) {
		return
	}
	n.nominateAll(ctx, claim.Name, node.Name, n.writes)
}

// registering nominates the pods planned onto claim to node, registrationWriters at a time,
// and returns when tenon's own informers see every one of them nominated there (or bound, or
// gone), for at most registrationSettle. Registration calls it before it takes the
// unregistered taint off the node, so kube-scheduler, which cannot place a pod on the node
// before that, sees where each pod was planned before it sees the room: nominations no longer
// race the scheduler. The wait for the informers matters because kube-scheduler watches pods
// and nodes on separate streams: a taint removal written after the nominations can still reach
// it first, and then it places the pods as its scores say, into room the plan kept for others.
// Once tenon's own pod watch has delivered the nominations, kube-scheduler's (fed by the same
// API server) has too, as a rule.
//
// While it waits, kube-scheduler may try a pod already nominated (another node's registration
// requeues every pending pod) and, the node being still tainted, take the nomination off: the
// pod is nominated again before the taint comes off, or the room the plan kept for it would be
// held for no one the moment the node is schedulable, and a pod planned for a node still
// tainted would take it (seen in TestPodsBindWhereTheyWerePlanned under load).
func (n *nominator) registering(ctx context.Context, claim, node string) {
	written := n.nominateAll(ctx, claim, node, make(chan struct{}, registrationWriters))
	if len(written) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, registrationSettle)
	defer cancel()
	for {
		changed := n.cluster.Changed() // taken before the check, so that no change is missed
		settled := true
		kept := written[:0]
		for _, w := range written {
			p, ok := n.cluster.Pod(w.key.Namespace, w.key.Name)
			switch {
			case !ok || p.Spec.NodeName != "" || p.DeletionTimestamp != nil:
				continue // bound or gone: no room to hold
			case p.Status.NominatedNodeName == node:
			case p.ResourceVersion == w.over: // the write not seen yet
				settled = false
			case p.Status.NominatedNodeName != "":
				continue // nominated elsewhere since
			default: // taken off since: written again (if it still fits), and waited for
				settled = false
				w.over = p.ResourceVersion
				if !n.renominate(ctx, w.key) {
					continue
				}
			}
			kept = append(kept, w)
		}
		written = kept
		if settled {
			return
		}
		select {
		case <-ctx.Done():
			n.log.V(1).Info("the node's nominations were not seen in time; taking its taint off anyway", "node", node, "unseen", len(written))
			return
		case <-changed:
		}
	}
}

// write is one nomination written: the pod, and the resourceVersion of the pod it was written
// over.
type write struct {
	key  types.NamespacedName
	over string
}

// registrationSettle bounds how long registration waits for tenon's informers to see the
// nominations it wrote.
const registrationSettle = 2 * time.Second

// nominateAll nominates the pods planned onto claim to node, as many at once as slots has
// room for, and returns, when they are written, the nominations it wrote.
func (n *nominator) nominateAll(ctx context.Context, claim, node string, slots chan struct{}) []write {
	n.mu.Lock()
	keys := n.take(claim)
	n.mu.Unlock()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		written []write
	)
	for _, key := range keys {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return written
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			if over, ok := n.nominateOne(ctx, key, node); ok {
				mu.Lock()
				written = append(written, write{key: key, over: over})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return written
}

// registrationWriters is how many nominations of one registering node are written at once
// (registrations themselves run side by side, lifecycle.Options.MaxConcurrentReconciles).
const registrationWriters = 8

// unregistered reports whether node still carries karpenter.sh/unregistered.
func unregistered(node *corev1.Node) bool {
	return slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&apisv1.UnregisteredNoExecuteTaint) })
}

// nominateOne nominates one pod to node unless it is bound, going, or nominated by another,
// and reports whether it wrote the nomination, and over which resourceVersion of the pod.
func (n *nominator) nominateOne(ctx context.Context, key types.NamespacedName, node string) (string, bool) {
	pod := &corev1.Pod{}
	if err := n.kube.Get(ctx, key, pod); err != nil {
		return "", false // gone
	}
	if pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil {
		return "", false
	}
	over := pod.ResourceVersion
	n.mu.Lock()
	own := n.made[key].node
	n.mu.Unlock()
	// Another's nomination (kube-scheduler's, for a preemption) is left alone; tenon's own
	// earlier one is replaced by the new plan's.
	if nnn := pod.Status.NominatedNodeName; nnn == node || (nnn != "" && nnn != own) {
		return "", false
	}
	if n.write(ctx, pod, node) != nil {
		return "", false
	}
	n.mu.Lock()
	n.made[key] = nomination{node: node, at: n.clock.Now()}
	n.mu.Unlock()
	return over, true
}

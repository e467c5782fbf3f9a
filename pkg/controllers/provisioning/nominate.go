package provisioning

import (
	"context"
	"slices"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-sh/tenon/pkg/snapshot"
	"github.com/tenon-sh/tenon/pkg/state"
)

// nominator tells kube-scheduler where the plan put each pod. The provisioner records, for each
// NodeClaim, the pods it planned onto it (new claims and claims in flight alike); once the
// claim's Node registers, the nominator sets status.nominatedNodeName on those still pending,
// and kube-scheduler (with NominatedNodeNameForExpectation, beta and on by default from
// Kubernetes 1.35) tries that node first. Without it kube-scheduler binds a burst as its scores
// say, onto whichever node registers first, and the pods planned there find it full and wait
// for another batch, which buys more.
type nominator struct {
	kube    client.Client
	cluster *state.Cluster
	log     logr.Logger

	mu      sync.Mutex
	planned map[string][]types.NamespacedName // claim → the pods planned onto it
	claimOf map[types.NamespacedName]string   // pod → the claim it is planned onto
	queue   chan string                       // provider IDs of nodes registered or updated
}

func newNominator(kube client.Client, cluster *state.Cluster, log logr.Logger) *nominator {
	return &nominator{kube: kube, cluster: cluster, log: log, planned: map[string][]types.NamespacedName{},
		claimOf: map[types.NamespacedName]string{}, queue: make(chan string, 4096)}
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

// run nominates until ctx ends.
func (n *nominator) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case id := <-n.queue:
			n.nominate(ctx, id)
		}
	}
}

// nominate sets the node of the claim with providerID as the nominated node of the pods
// planned onto the claim that are still pending and nominated nowhere.
func (n *nominator) nominate(ctx context.Context, providerID string) {
	claim, node := n.cluster.ByProviderID(providerID)
	if claim == nil || node == nil {
		return
	}
	n.mu.Lock()
	keys := n.take(claim.Name)
	n.mu.Unlock()
	for _, key := range keys {
		pod := &corev1.Pod{}
		if err := n.kube.Get(ctx, key, pod); err != nil {
			continue // gone
		}
		if pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil || pod.Status.NominatedNodeName != "" {
			continue
		}
		patch := client.MergeFrom(pod.DeepCopy())
		pod.Status.NominatedNodeName = node.Name
		if err := n.kube.Status().Patch(ctx, pod, patch); err != nil && !apierrors.IsNotFound(err) {
			n.log.V(1).Info("could not nominate a pod to its planned node", "pod", snapshot.PodKey(pod), "node", node.Name, "error", err.Error())
		}
	}
}

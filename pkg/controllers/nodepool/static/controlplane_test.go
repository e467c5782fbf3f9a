package static_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/ctrltest"
	"github.com/tenon-sh/tenon/pkg/controllers/nodepool/static"
)

// TestOnControlPlane runs the static controller with the others against a real control plane
// and the simulated cloud; the subtests share it and run in parallel.
func TestOnControlPlane(t *testing.T) {
	e := ctrltest.Start(t)
	opts := ctrltest.FastOptions()
	opts.Setup = func(mgr manager.Manager, m *ctrltest.Manager) error {
		return static.Register(mgr, static.Deps{CloudProvider: m.Provider, Filter: m.Unavailable}, static.Options{})
	}
	e.StartManager(t, opts)
	t.Run("parallel", func(t *testing.T) {
		t.Run("ScalesToReplicas", func(t *testing.T) { t.Parallel(); testScales(t, e) })
		t.Run("NodeLimit", func(t *testing.T) { t.Parallel(); testNodeLimit(t, e) })
		t.Run("ReplacesDeletedNodeClaim", func(t *testing.T) { t.Parallel(); testReplaces(t, e) })
		t.Run("CountsTheReplacementOfADisruptedNode", func(t *testing.T) { t.Parallel(); testDisrupted(t, e) })
		t.Run("IgnoresDynamicPools", func(t *testing.T) { t.Parallel(); testDynamic(t, e) })
		t.Run("WaitsForNodeClass", func(t *testing.T) { t.Parallel(); testWaitsForNodeClass(t, e) })
	})
}

func newStaticPool(name string, replicas int64) *apisv1.NodePool {
	return &apisv1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apisv1.NodePoolSpec{Replicas: &replicas, Template: apisv1.NodeClaimTemplate{Spec: apisv1.NodeClaimTemplateSpec{
			Requirements: []apisv1.NodeSelectorRequirementWithMinValues{
				ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand),
			},
			NodeClassRef: ctrltest.NodeClassRef(name),
		}}},
	}
}

// claims lists the pool's NodeClaims: the live ones, registered or not, and how many are deleting.
func claims(t *testing.T, e *ctrltest.Env, pool string) (live []apisv1.NodeClaim, registered []string, deleting int) {
	t.Helper()
	list := &apisv1.NodeClaimList{}
	if err := e.Client.List(context.Background(), list, client.MatchingLabels{apisv1.NodePoolLabelKey: pool}); err != nil {
		t.Fatal(err)
	}
	for _, nc := range list.Items {
		if !nc.DeletionTimestamp.IsZero() {
			deleting++
			continue
		}
		live = append(live, nc)
		if c := nc.GetCondition(apisv1.ConditionTypeRegistered); c != nil && c.Status == metav1.ConditionTrue {
			registered = append(registered, nc.Status.NodeName)
		}
	}
	return live, registered, deleting
}

// waitClaims waits until the pool has exactly n NodeClaims, none deleting, all registered,
// and returns their nodes' names.
func waitClaims(t *testing.T, e *ctrltest.Env, pool string, n int) []string {
	t.Helper()
	var nodes []string
	ctrltest.Eventually(t, fmt.Sprintf("nodepool %s has %d registered nodeclaims", pool, n), func() (bool, string) {
		live, registered, deleting := claims(t, e, pool)
		nodes = registered
		return len(live) == n && len(registered) == n && deleting == 0,
			fmt.Sprintf("%d live, %d registered, %d deleting", len(live), len(registered), deleting)
	})
	for _, name := range nodes {
		node := &corev1.Node{}
		if !e.Get(t, "", name, node) {
			t.Fatalf("node %s of nodepool %s does not exist", name, pool)
		}
	}
	return nodes
}

func setReplicas(t *testing.T, e *ctrltest.Env, pool string, n int64) {
	t.Helper()
	np := &apisv1.NodePool{}
	e.Get(t, "", pool, np)
	orig := np.DeepCopy()
	np.Spec.Replicas = &n
	if err := e.Client.Patch(context.Background(), np, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
}

// testScales: three replicas launch three nodes; scaling to one removes the two without pods
// and keeps the one running a pod.
func testScales(t *testing.T, e *ctrltest.Env) {
	e.NodeClass(t, "scales", ctrltest.FastSpec())
	e.Create(t, newStaticPool("scales", 3))
	nodes := waitClaims(t, e, "scales", 3)

	e.Namespace(t, "scales")
	busy := nodes[1]
	e.Create(t, ctrltest.NewPod("scales", "app", busy))
	e.PodRunning(t, "scales", "app", busy)

	setReplicas(t, e, "scales", 1)
	left := waitClaims(t, e, "scales", 1)
	if !slices.Equal(left, []string{busy}) {
		t.Errorf("after scaling to 1, nodes %v are left; want the one with a pod, %s", left, busy)
	}
	ctrltest.Eventually(t, "the removed nodes are gone", func() (bool, string) {
		var still []string
		for _, name := range nodes {
			if name != busy && e.Get(t, "", name, &corev1.Node{}) {
				still = append(still, name)
			}
		}
		return len(still) == 0, fmt.Sprintf("still there: %v", still)
	})
}

// testNodeLimit: with limits.nodes 2, three replicas launch only two nodes, with an event.
func testNodeLimit(t *testing.T, e *ctrltest.Env) {
	e.NodeClass(t, "limited", ctrltest.FastSpec())
	np := newStaticPool("limited", 3)
	np.Spec.Limits = apisv1.Limits{apisv1.ResourceNodes: resource.MustParse("2")}
	e.Create(t, np)
	waitClaims(t, e, "limited", 2)
	e.WaitEvent(t, "limited", static.EventNodeLimitReached)
	// The limit holds over further reconciles.
	live, _, _ := claims(t, e, "limited")
	if len(live) != 2 {
		t.Errorf("%d nodeclaims, want 2", len(live))
	}
}

// testReplaces: a NodeClaim of a static pool deleted by hand is replaced.
func testReplaces(t *testing.T, e *ctrltest.Env) {
	e.NodeClass(t, "replaces", ctrltest.FastSpec())
	e.Create(t, newStaticPool("replaces", 2))
	waitClaims(t, e, "replaces", 2)
	live, _, _ := claims(t, e, "replaces")
	gone := live[0].Name
	if err := e.Client.Delete(context.Background(), &live[0]); err != nil {
		t.Fatal(err)
	}
	e.WaitGone(t, "", gone, &apisv1.NodeClaim{})
	waitClaims(t, e, "replaces", 2)
}

// testDynamic: a NodePool without replicas gets no NodeClaims from this controller.
func testDynamic(t *testing.T, e *ctrltest.Env) {
	e.NodeClass(t, "dynamic", ctrltest.FastSpec())
	np := newStaticPool("dynamic", 0)
	np.Spec.Replicas = nil
	e.Create(t, np)
	// A static pool created after it is served, so the controller has had its chance.
	e.NodeClass(t, "after-dynamic", ctrltest.FastSpec())
	e.Create(t, newStaticPool("after-dynamic", 1))
	waitClaims(t, e, "after-dynamic", 1)
	if live, _, _ := claims(t, e, "dynamic"); len(live) != 0 {
		t.Errorf("dynamic nodepool has %d nodeclaims, want 0", len(live))
	}
}

// testWaitsForNodeClass: a static pool whose NodeClass does not exist yet launches nothing, and
// its nodes as soon as the NodeClass is ready.
func testWaitsForNodeClass(t *testing.T, e *ctrltest.Env) {
	e.Create(t, newStaticPool("waits", 2))
	ctrltest.Eventually(t, "nodepool waits is not Ready", func() (bool, string) {
		np := &apisv1.NodePool{}
		e.Get(t, "", "waits", np)
		c := np.GetCondition(apisv1.ConditionTypeReady)
		return c != nil && c.Status == metav1.ConditionFalse, fmt.Sprintf("Ready %+v", c)
	})
	if live, _, _ := claims(t, e, "waits"); len(live) != 0 {
		t.Fatalf("%d nodeclaims without a NodeClass, want 0", len(live))
	}
	e.NodeClass(t, "waits", ctrltest.FastSpec())
	waitClaims(t, e, "waits", 2)
}

// testDisrupted: while a disruption command replaces a static node (the node tainted
// karpenter.sh/disrupted, then one replacement NodeClaim of the pool created), the controller
// creates no claim between the taint and the replacement, and neither deletes the replacement
// as surplus nor creates another claim after it; once the old claim is
// deleted the pool is at its replicas with the replacement among them.
func testDisrupted(t *testing.T, e *ctrltest.Env) {
	ctx := context.Background()
	e.NodeClass(t, "disrupted", ctrltest.FastSpec())
	e.Create(t, newStaticPool("disrupted", 2))
	nodes := waitClaims(t, e, "disrupted", 2)
	live, _, _ := claims(t, e, "disrupted")
	var old apisv1.NodeClaim
	for _, nc := range live {
		if nc.Status.NodeName == nodes[0] {
			old = nc
		}
	}
	// The node's status moves on under the test (kubelet, lifecycle): taint the version read
	// last, again on a conflict.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node := e.Node(t, nodes[0])
		orig := node.DeepCopy()
		node.Spec.Taints = append(node.Spec.Taints, apisv1.DisruptedNoScheduleTaint)
		return e.Client.Patch(ctx, node, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil {
		t.Fatal(err)
	}
	// The command creates its replacement only after the taint: in between, the pool must not
	// buy a claim of its own (the replacement would then be one too many).
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if live, _, deleting := claims(t, e, "disrupted"); len(live) != 2 || deleting != 0 {
			t.Fatalf("%s tainted, its replacement not yet created: %d live, %d deleting nodeclaims; want the 2, none deleting", nodes[0], len(live), deleting)
		}
	}
	repl := &apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{GenerateName: "disrupted-", Labels: map[string]string{apisv1.NodePoolLabelKey: "disrupted"}},
		Spec: *old.Spec.DeepCopy()}
	e.Create(t, repl)
	waitClaims(t, e, "disrupted", 3)
	// A claim event makes the controller look again; nothing may change.
	got := e.Claim(t, repl.Name)
	patch := got.DeepCopy()
	patch.Annotations = map[string]string{"test.tenon.sh/touch": "1"}
	if err := e.Client.Patch(ctx, patch, client.MergeFrom(got)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if live, _, deleting := claims(t, e, "disrupted"); len(live) != 3 || deleting != 0 {
			t.Fatalf("while %s is disrupted: %d live, %d deleting nodeclaims; want the 2 and the replacement, none deleting", nodes[0], len(live), deleting)
		}
	}
	if err := e.Client.Delete(ctx, &old); err != nil {
		t.Fatal(err)
	}
	e.WaitGone(t, "", old.Name, &apisv1.NodeClaim{})
	waitClaims(t, e, "disrupted", 2)
	live, _, _ = claims(t, e, "disrupted")
	if !slices.ContainsFunc(live, func(nc apisv1.NodeClaim) bool { return nc.Name == repl.Name }) {
		t.Errorf("the replacement %s is not among the pool's claims after the disrupted one went", repl.Name)
	}
}

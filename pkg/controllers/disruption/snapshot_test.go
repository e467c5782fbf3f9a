package disruption

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/solverinput"
	"github.com/tenon-sh/tenon/pkg/disruption"
	"github.com/tenon-sh/tenon/pkg/state"
)

// fakeCloud serves a catalog and a drift verdict per claim, counting the drift checks.
type fakeCloud struct {
	cloudprovider.CloudProvider
	types  []*catalog.InstanceType
	mu     sync.Mutex
	drift  map[string]cloudprovider.DriftReason
	checks map[string]int
}

func (f *fakeCloud) NodeClasses() []schema.GroupKind { return simulated.NodeClasses }

func (f *fakeCloud) Name() string { return "fake" }

func (f *fakeCloud) GetInstanceTypes(context.Context, *apisv1.NodePool) ([]*catalog.InstanceType, error) {
	return f.types, nil
}

func (f *fakeCloud) IsDrifted(_ context.Context, nc *apisv1.NodeClaim) (cloudprovider.DriftReason, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checks[nc.Name]++
	return f.drift[nc.Name], nil
}

var (
	catOnce sync.Once
	cat     *catalog.Catalog
	catErr  error
)

func testCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	catOnce.Do(func() {
		cat, catErr = catalog.Load("us-east-1", catalog.WithZones("us-east-1a", "us-east-1b"),
			catalog.WithReservations(catalog.Reservation{ID: "cr-1", InstanceType: "m5.xlarge", Zone: "us-east-1a", Count: 2}))
	})
	if catErr != nil {
		t.Fatal(catErr)
	}
	return cat
}

// world is a hand-filled mirror for the builder.
type world struct {
	t       *testing.T
	clk     *clocktesting.FakeClock
	cluster *state.Cluster
	cloud   *fakeCloud
	pool    *apisv1.NodePool
	seq     int
	b       *Builder
	static  bool // the StaticCapacity gate
}

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// simRef is the nodeClassRef of the test's NodePool and claims: a kind the simulated provider
// serves, so they are tenon's.
var simRef = &apisv1.NodeClassReference{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind, Name: "default"}

func newWorld(t *testing.T) *world {
	clk := clocktesting.NewFakeClock(t0)
	w := &world{t: t, clk: clk, cluster: state.NewCluster(clk),
		cloud: &fakeCloud{types: testCatalog(t).Types, drift: map[string]cloudprovider.DriftReason{}, checks: map[string]int{}}}
	np := &apisv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "general", UID: "pool-uid"}}
	np.Spec.Template.Spec.Requirements = []apisv1.NodeSelectorRequirementWithMinValues{
		{Key: apisv1.LabelInstanceFamily, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5"}},
	}
	np.Spec.Template.Spec.NodeClassRef = simRef
	np.Spec.Template.Spec.ExpireAfter = apisv1.NewNillableDuration(720 * time.Hour)
	np.Spec.Disruption.ConsolidateAfter = apisv1.NewNillableDuration(0)
	np.Spec.Disruption.Budgets = []apisv1.Budget{{Nodes: "100%"}}
	w.pool = np
	w.cluster.UpdateNodePool(np)
	return w
}

// node adds a launched, registered, initialized node of the pool and its claim.
func (w *world) node(typ, zone, ct string, mutate ...func(*corev1.Node, *apisv1.NodeClaim)) (*corev1.Node, *apisv1.NodeClaim) {
	w.seq++
	name := "node-" + string(rune('a'+w.seq-1))
	pid := "sim:///" + name
	labels := map[string]string{
		apisv1.NodePoolLabelKey: "general", apisv1.LabelInstanceType: typ, apisv1.LabelZone: zone, apisv1.CapacityTypeLabelKey: ct,
		apisv1.LabelInstanceFamily: strings.Split(typ, ".")[0], apisv1.NodeInitializedLabelKey: "true", corev1.LabelHostname: name,
	}
	if ct == apisv1.CapacityTypeReserved {
		labels[apisv1.LabelCapacityReservationID] = "cr-1"
	}
	nc := &apisv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "claim-" + name, UID: types.UID("uid-" + name), Labels: labels, CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour)),
			Annotations: map[string]string{apisv1.NodePoolHashAnnotationKey: w.pool.Hash(), apisv1.NodePoolHashVersionAnnotationKey: apisv1.NodePoolHashVersion}},
		Spec:   apisv1.NodeClaimSpec{ExpireAfter: apisv1.NewNillableDuration(2 * time.Hour), NodeClassRef: simRef},
		Status: apisv1.NodeClaimStatus{ProviderID: pid, NodeName: name},
	}
	nc.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeInitialized, Status: metav1.ConditionTrue, Reason: "Initialized"}, t0)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1.NodeSpec{ProviderID: pid},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
	for _, m := range mutate {
		m(node, nc)
	}
	w.cluster.UpdateNodeClaim(nc)
	w.cluster.UpdateNode(node)
	return node, nc
}

func (w *world) build(o BuildOptions) *View {
	w.t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		w.t.Fatal(err)
	}
	reader := fake.NewClientBuilder().WithScheme(scheme).Build()
	if w.b == nil {
		src := &solverinput.Source{Cluster: w.cluster, Cloud: w.cloud, Reader: reader, Schedulers: []string{corev1.DefaultSchedulerName}}
		w.b = newBuilder(src, w.clk, time.Minute, w.static)
	}
	v, err := w.b.Build(context.Background(), o)
	if err != nil {
		w.t.Fatal(err)
	}
	return v
}

func TestBuildPricesNodesByTheirOffering(t *testing.T) {
	w := newWorld(t)
	cat := testCatalog(t)
	od, _ := w.node("m5.2xlarge", "us-east-1a", apisv1.CapacityTypeOnDemand)
	spot, _ := w.node("m5.large", "us-east-1b", apisv1.CapacityTypeSpot)
	res, _ := w.node("m5.xlarge", "us-east-1a", apisv1.CapacityTypeReserved)
	odd, _ := w.node("x9.weird", "us-east-1a", apisv1.CapacityTypeOnDemand)
	v := w.build(BuildOptions{})

	want := func(typ, zone, ct string) float64 {
		it, ok := cat.Get(typ)
		if !ok {
			t.Fatalf("no %s", typ)
		}
		for _, o := range it.Offerings {
			if o.Zone == zone && o.CapacityType == ct {
				return o.Price
			}
		}
		t.Fatalf("no %s %s offering of %s", zone, ct, typ)
		return 0
	}
	for _, c := range []struct {
		node  *corev1.Node
		price float64
	}{
		{od, want("m5.2xlarge", "us-east-1a", apisv1.CapacityTypeOnDemand)},
		{spot, want("m5.large", "us-east-1b", apisv1.CapacityTypeSpot)},
		{res, want("m5.xlarge", "us-east-1a", apisv1.CapacityTypeReserved)},
	} {
		e, ok := v.Node(c.node.Name)
		if !ok {
			t.Fatalf("%s is not in the snapshot", c.node.Name)
		}
		if e.Price != c.price || v.PriceUnknown[c.node.Name] {
			t.Errorf("%s (%s %s): price %v, want %v", c.node.Name, e.InstanceType, e.CapacityType, e.Price, c.price)
		}
		if e.NodeClaim != "claim-"+c.node.Name || e.NodePool != "general" || !e.Initialized || e.NotReady || e.Deleting {
			t.Errorf("%s: %+v", c.node.Name, e)
		}
	}
	if e, _ := v.Node(res.Name); e.ReservationID != "cr-1" || e.Price >= 0.01 {
		t.Errorf("a reserved node costs the catalog's reserved price: %+v", e)
	}
	if e, _ := v.Node(odd.Name); e.Price != 0 || !v.PriceUnknown[odd.Name] {
		t.Errorf("an instance type the nodepool does not offer has no price: %+v", e)
	}
	// The solver's copy of each registered node carries the price too.
	for _, sn := range v.Snapshot.Solver.Nodes {
		if e, ok := v.Node(sn.Name); ok && sn.Price != e.Price {
			t.Errorf("solver node %s costs %v, disruption node %v", sn.Name, sn.Price, e.Price)
		}
	}
}

func TestBuildState(t *testing.T) {
	w := newWorld(t)
	plain, _ := w.node("m5.large", "us-east-1a", apisv1.CapacityTypeOnDemand)
	tainted, _ := w.node("m5.large", "us-east-1a", apisv1.CapacityTypeOnDemand, func(n *corev1.Node, _ *apisv1.NodeClaim) {
		n.Spec.Taints = []corev1.Taint{apisv1.DisruptedNoScheduleTaint}
	})
	marked, markedClaim := w.node("m5.large", "us-east-1a", apisv1.CapacityTypeOnDemand)
	w.cluster.MarkForDeletion(markedClaim.Name)
	busy, _ := w.node("m5.large", "us-east-1a", apisv1.CapacityTypeOnDemand)
	held, _ := w.node("m5.large", "us-east-1a", apisv1.CapacityTypeOnDemand)
	notReady, _ := w.node("m5.large", "us-east-1a", apisv1.CapacityTypeOnDemand, func(n *corev1.Node, nc *apisv1.NodeClaim) {
		n.Status.Conditions[0].Status = corev1.ConditionFalse
		nc.Status.Conditions = nil
		n.Annotations = map[string]string{apisv1.DoNotDisruptAnnotationKey: "true"}
	})
	nominated, _ := w.node("m5.large", "us-east-1a", apisv1.CapacityTypeOnDemand)
	// A node a pending pod is nominated to (kube-scheduler keeps the pod's room there) is
	// nominated too; a pod nominated somewhere and bound elsewhere nominates nothing.
	waitedFor, _ := w.node("m5.large", "us-east-1a", apisv1.CapacityTypeOnDemand)
	w.cluster.UpdatePod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "waiting"}, Status: corev1.PodStatus{NominatedNodeName: waitedFor.Name}})
	w.cluster.UpdatePod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "landed"}, Spec: corev1.PodSpec{NodeName: plain.Name},
		Status: corev1.PodStatus{NominatedNodeName: busy.Name}})
	// A claim being deleted whose node is gone still counts; one never launched does not.
	gone := &apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "claim-gone", Labels: map[string]string{apisv1.NodePoolLabelKey: "general"},
		DeletionTimestamp: &metav1.Time{Time: t0}, Finalizers: []string{apisv1.TerminationFinalizer}},
		Spec: apisv1.NodeClaimSpec{NodeClassRef: simRef}, Status: apisv1.NodeClaimStatus{ProviderID: "sim:///gone"}}
	w.cluster.UpdateNodeClaim(gone)
	unlaunched := gone.DeepCopy()
	unlaunched.Name, unlaunched.Status.ProviderID = "claim-unlaunched", ""
	w.cluster.UpdateNodeClaim(unlaunched)
	// Nodes tenon does not manage, and nodes of static nodepools, are no candidates.
	w.cluster.UpdateNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "foreign"}, Spec: corev1.NodeSpec{ProviderID: "aws:///i-1"}})
	// Karpenter's node and claim (an EC2NodeClass while the simulated provider runs) are no
	// candidates, and its claim being deleted counts against no budget of tenon's.
	karpenter, _ := w.node("m5.large", "us-east-1a", apisv1.CapacityTypeOnDemand, func(_ *corev1.Node, nc *apisv1.NodeClaim) {
		nc.Spec.NodeClassRef = &apisv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	})
	karpenterGone := gone.DeepCopy()
	karpenterGone.Name, karpenterGone.Status.ProviderID = "claim-karpenter-gone", "aws:///us-east-1a/i-2"
	karpenterGone.Spec.NodeClassRef = &apisv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	w.cluster.UpdateNodeClaim(karpenterGone)
	static := w.pool.DeepCopy()
	static.Name, static.Spec.Replicas = "fixed", new(int64(2))
	w.cluster.UpdateNodePool(static)
	st, _ := w.node("m5.large", "us-east-1a", apisv1.CapacityTypeOnDemand, func(n *corev1.Node, nc *apisv1.NodeClaim) {
		n.Labels[apisv1.NodePoolLabelKey], nc.Labels[apisv1.NodePoolLabelKey] = "fixed", "fixed"
	})
	// Pods arriving and leaving.
	w.clk.Step(time.Minute)
	w.cluster.UpdatePod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p"}, Spec: corev1.PodSpec{NodeName: plain.Name}})
	w.cluster.Nominate(nominated.Name)

	v := w.build(BuildOptions{Busy: map[string]bool{busy.Name: true}, Held: map[string]string{held.Name: "backing off"}})
	get := func(n *corev1.Node) (deleting, notReady, nominated, dnd, initialized bool) {
		e, ok := v.Node(n.Name)
		if !ok {
			t.Fatalf("%s is not in the snapshot", n.Name)
		}
		return e.Deleting, e.NotReady, e.Nominated, e.DoNotDisrupt, e.Initialized
	}
	if d, _, _, _, _ := get(plain); d {
		t.Error("a plain node is not deleting")
	}
	for _, n := range []*corev1.Node{tainted, marked, busy} {
		if d, _, _, _, _ := get(n); !d {
			t.Errorf("%s (tainted, marked or busy) must count as deleting", n.Name)
		}
	}
	if _, nr, _, dnd, init := get(notReady); !nr || !dnd || init {
		t.Errorf("not-ready node: notReady %v doNotDisrupt %v initialized %v", nr, dnd, init)
	}
	if _, _, nom, _, _ := get(nominated); !nom {
		t.Error("nominated node not reported as such")
	}
	if _, _, nom, _, _ := get(waitedFor); !nom {
		t.Error("a node a pending pod is nominated to is not reported as nominated")
	}
	if _, _, nom, _, _ := get(plain); nom {
		t.Error("a node with only bound pods is reported as nominated")
	}
	if e, ok := v.Node("claim-gone"); !ok || !e.Deleting || e.NodePool != "general" {
		t.Errorf("a launched claim being deleted without its node must count as deleting: %+v", e)
	}
	if _, ok := v.Node("claim-unlaunched"); ok {
		t.Error("a claim that never launched disrupts nothing")
	}
	if _, ok := v.Node("claim-karpenter-gone"); ok {
		t.Error("another autoscaler's claim being deleted counts as tenon's disruption")
	}
	for name, why := range map[string]string{held.Name: "backing off", "foreign": "no NodeClaim", st.Name: "static",
		karpenter.Name: "nodeClassRef (EC2NodeClass.karpenter.k8s.aws) is not served by the fake provider"} {
		if _, ok := v.Node(name); ok || !strings.Contains(v.Excluded[name], why) {
			t.Errorf("%s: in snapshot %v, excluded %q, want a reason with %q", name, ok, v.Excluded[name], why)
		}
	}
	if e, _ := v.Node(plain.Name); !e.LastPodEvent.Equal(w.clk.Now()) || !e.ExpireAt.Equal(t0.Add(time.Hour)) || !e.CreatedAt.Equal(t0.Add(-time.Hour)) {
		t.Errorf("plain node times: last pod event %v, expires %v, created %v", e.LastPodEvent, e.ExpireAt, e.CreatedAt)
	}
	if _, ok := v.Snapshot.NodePools["fixed"]; ok {
		t.Error("a static nodepool is no disruption policy")
	}
}

func TestBuildDrift(t *testing.T) {
	w := newWorld(t)
	same, _ := w.node("m5.large", "us-east-1a", apisv1.CapacityTypeOnDemand)
	stale, _ := w.node("m5.large", "us-east-1a", apisv1.CapacityTypeOnDemand, func(_ *corev1.Node, nc *apisv1.NodeClaim) {
		nc.Annotations[apisv1.NodePoolHashAnnotationKey] = "12345"
	})
	foreign, _ := w.node("m5.large", "us-east-1a", apisv1.CapacityTypeOnDemand, func(_ *corev1.Node, nc *apisv1.NodeClaim) {
		nc.Annotations[apisv1.NodePoolHashAnnotationKey] = "12345"
		nc.Annotations[apisv1.NodePoolHashVersionAnnotationKey] = "karpenter-v3"
	})
	c5, _ := w.node("c5.large", "us-east-1a", apisv1.CapacityTypeOnDemand)
	cloudy, cloudyClaim := w.node("m5.large", "us-east-1a", apisv1.CapacityTypeOnDemand)
	w.cloud.drift[cloudyClaim.Name] = "NodeClassDrift"

	v := w.build(BuildOptions{})
	drift := func(n *corev1.Node) string {
		e, _ := v.Node(n.Name)
		return e.Drifted
	}
	if d := drift(same); d != "" {
		t.Errorf("an unchanged node drifted: %s", d)
	}
	if d := drift(stale); !strings.Contains(d, "template changed") {
		t.Errorf("a claim made from an older template: %q", d)
	}
	if d := drift(foreign); d != "" {
		t.Errorf("a claim stamped by another hash version must not be judged by its hash: %q", d)
	}
	if d := drift(c5); !strings.Contains(d, apisv1.LabelInstanceFamily+"=c5") {
		t.Errorf("a node the requirements no longer allow: %q", d)
	}
	if d := drift(cloudy); !strings.Contains(d, "NodeClassDrift") {
		t.Errorf("the provider's drift: %q", d)
	}

	// The provider is asked once per claim per DriftCheckInterval.
	checks := w.cloud.checks[cloudyClaim.Name]
	w.build(BuildOptions{})
	if got := w.cloud.checks[cloudyClaim.Name]; got != checks {
		t.Errorf("drift asked again within the interval: %d checks, then %d", checks, got)
	}
	w.clk.Step(2 * time.Minute)
	delete(w.cloud.drift, cloudyClaim.Name)
	v = w.build(BuildOptions{})
	if got := w.cloud.checks[cloudyClaim.Name]; got != checks+1 {
		t.Errorf("drift not asked again after the interval: %d checks, then %d", checks, got)
	}
	if d := drift(cloudy); d != "" {
		t.Errorf("a node the provider no longer reports drifted: %q", d)
	}
}

func TestBuildStaticNodePoolsWithTheGate(t *testing.T) {
	w := newWorld(t)
	w.static = true
	fixed := w.pool.DeepCopy()
	fixed.Name, fixed.UID, fixed.Spec.Replicas = "fixed", "fixed-uid", new(int64(2))
	fixed.Status.Conditions = []metav1.Condition{{Type: apisv1.ConditionTypeReady, Status: metav1.ConditionTrue, Reason: "Ready"}}
	w.cluster.UpdateNodePool(fixed)
	idle := fixed.DeepCopy()
	idle.Name, idle.UID = "idle", "idle-uid"
	idle.Status.Conditions = nil // not Ready: it launches nothing
	w.cluster.UpdateNodePool(idle)
	inPool := func(pool string, drifted bool) func(*corev1.Node, *apisv1.NodeClaim) {
		return func(n *corev1.Node, nc *apisv1.NodeClaim) {
			n.Labels[apisv1.NodePoolLabelKey], nc.Labels[apisv1.NodePoolLabelKey] = pool, pool
			if drifted {
				nc.Annotations[apisv1.NodePoolHashAnnotationKey] = "12345"
			}
		}
	}
	st, _ := w.node("m5.xlarge", "us-east-1a", apisv1.CapacityTypeOnDemand, inPool("fixed", true))
	waiting, _ := w.node("m5.xlarge", "us-east-1a", apisv1.CapacityTypeOnDemand, inPool("idle", true))
	v := w.build(BuildOptions{})
	for _, n := range []*corev1.Node{st, waiting} {
		e, ok := v.Node(n.Name)
		if !ok || e.Drifted == "" || e.Price == 0 || v.PriceUnknown[n.Name] {
			t.Fatalf("%s: in snapshot %v (excluded %q), drifted %q, price %v unknown %v", n.Name, ok, v.Excluded[n.Name], e.Drifted, e.Price, v.PriceUnknown[n.Name])
		}
	}
	if v.Snapshot.NodePools["fixed"] == nil || v.Snapshot.Static["idle"] != nil {
		t.Fatalf("static nodepools: policy of fixed %v, a claim for not-Ready idle %v", v.Snapshot.NodePools["fixed"] != nil, v.Snapshot.Static["idle"])
	}
	// The cheapest offering the pool allows is the test catalog's m5.xlarge reservation.
	if cl := v.Snapshot.Static["fixed"]; cl == nil || cl.InstanceType.Name != "m5.xlarge" || cl.Offering.CapacityType != apisv1.CapacityTypeReserved || len(cl.InstanceTypes) < 2 {
		t.Fatalf("fixed launches %+v, want its cheapest offering (reserved m5.xlarge) and the other m5 types", cl)
	}
	d, err := disruption.Decide(v.Snapshot, disruption.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Commands) != 1 || d.Commands[0].Candidates[0] != st.Name || len(d.Commands[0].Replacements) != 1 || d.Commands[0].Replacements[0].NodePool != "fixed" {
		t.Fatalf("want %s replaced by one claim of fixed, got %+v", st.Name, d.Commands)
	}
	for _, s := range d.Skips {
		if s.Node == waiting.Name && s.Reason != disruption.SkipStatic {
			t.Errorf("%s: skip %s, want %s", waiting.Name, s.Reason, disruption.SkipStatic)
		}
	}
}

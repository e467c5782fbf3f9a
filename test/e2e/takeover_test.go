package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-sh/tenon/internal/controlplane"
	"github.com/tenon-sh/tenon/internal/controlplane/testenv"
	"github.com/tenon-sh/tenon/pkg/apis/crds"
	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
	disruptionctrl "github.com/tenon-sh/tenon/pkg/controllers/disruption"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/lifecycle"
	"github.com/tenon-sh/tenon/pkg/operator"
)

// karpenterHashVersion is the karpenter.sh/nodepool-hash-version Karpenter v1 stamps.
const karpenterHashVersion = "v3"

// tenon takes over a cluster another Karpenter built, without an outage. The cluster holds
// what Karpenter leaves behind: a NodePool it stamped, three NodeClaims it launched (its hash
// annotations, its finalizer, Launched/Registered/Initialized), their instances in the cloud,
// their Nodes (registered, initialized, with its finalizer and owner) and pods Running on them,
// and Karpenter's leader-election Lease, renewed as a live leader does.
//
//   - Without --takeover tenon refuses to start, and the error names the Lease, its holder and
//     its renewal.
//   - With it, tenon starts and adopts the claims: each is re-stamped with tenon's hash and an
//     Adopted event; through disruption passes and garbage collection no claim is created or
//     deleted, no instance terminated, no Node replaced and no pod moved.
//   - Then it disrupts them like its own: scaled down, the emptied nodes are consolidated away
//     (their instances terminated, Karpenter's finalizers removed by tenon's termination), the
//     busy one kept, and nothing new launched.
func TestTakeoverAdoptsKarpenterNodeClaims(t *testing.T) {
	all, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	cp := testenv.Start(t, controlplane.Options{Scheduler: true, ControllerManager: true, Kwok: true, CRDs: all})
	kube, err := client.New(cp.RESTConfig(), client.Options{Scheme: operator.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var passes atomic.Int64
	opts := operator.Options{MetricsAddr: "0", HealthAddr: "0", AllowRepeatedControllers: true}
	opts.Provisioning.BatchIdle, opts.Provisioning.BatchMax = 300*time.Millisecond, 3*time.Second
	opts.Disruption.PassInterval, opts.Disruption.ValidationDelay = time.Second, time.Second
	opts.Disruption.OnPass = func(r disruptionctrl.PassResult) {
		if r.Err == nil && r.Decision != nil {
			passes.Add(1)
		}
	}
	opts.GarbageCollection.Interval = 2 * time.Second
	e := &env{t: t, cp: cp, kube: kube, ctx: ctx, opts: opts, stop: func() {}}

	// --- what Karpenter built ---
	class := nodeClass("default")
	pool := nodePool("general", "default", []string{"m5"}, func(np *apisv1.NodePool) {
		np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, apisv1.NodeSelectorRequirementWithMinValues{
			Key: apisv1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.large"}})
		np.Annotations = map[string]string{apisv1.NodePoolHashAnnotationKey: "6971421302419733321", apisv1.NodePoolHashVersionAnnotationKey: karpenterHashVersion}
	})
	e.create(class, pool)
	karpenter := karpenterLease(t, kube)
	renewing := karpenter.renew(ctx)

	claims := make([]*apisv1.NodeClaim, 3)
	for i := range claims {
		claims[i] = e.karpenterNode(pool, class, fmt.Sprintf("general-k%d", i), fmt.Sprintf("i-0karpenter%06d", i))
	}
	e.create(deployment("web", 3, "1500m", "1Gi"))
	e.podsRunning("web", 3, 90*time.Second)
	before := e.takeoverState()
	if len(before.claims) != 3 || len(before.nodes) != 3 || len(before.instances) != 3 || len(before.pods) != 3 {
		t.Fatalf("Karpenter's cluster: %s", before)
	}

	// --- without --takeover: refused, with the Lease, its holder and its renewal named ---
	_, err = operator.New(ctx, cp.RESTConfig(), e.opts, discard())
	var running *operator.KarpenterRunningError
	if !errors.As(err, &running) {
		t.Fatalf("tenon started next to a live Karpenter (error %v), want a KarpenterRunningError", err)
	}
	for _, want := range []string{"kube-system/karpenter-leader-election", karpenter.holder, "renewed 20", "--takeover"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not say %q", err, want)
		}
	}
	if got := e.takeoverState(); got.String() != before.String() {
		t.Fatalf("a refused start changed the cluster:\nbefore %s\nafter  %s", before, got)
	}

	// --- with --takeover: adopted, nothing relaunched ---
	e.opts.Coexistence.Takeover = true
	e.startOperator()
	renewing() // Karpenter is scaled to 0: its leader stops renewing
	e.eventually(60*time.Second, "every Karpenter claim re-stamped with tenon's hash", func() (bool, string) {
		var stamped []string
		for _, nc := range e.nodeClaims() {
			if nc.Annotations[apisv1.NodePoolHashVersionAnnotationKey] == apisv1.NodePoolHashVersion &&
				nc.Annotations[apisv1.NodePoolHashAnnotationKey] == pool.Hash() {
				stamped = append(stamped, nc.Name)
			}
		}
		return len(stamped) == 3, fmt.Sprintf("stamped: %v", stamped)
	})
	e.eventually(30*time.Second, "an Adopted event on each claim", func() (bool, string) {
		on := map[string]bool{}
		for _, ev := range e.events(lifecycle.ReasonAdopted) {
			on[ev.InvolvedObject.Name] = true
		}
		return len(on) == 3, fmt.Sprintf("Adopted on %v", on)
	})
	// Several disruption passes and garbage-collection passes (every 2s, their instances an
	// hour old) go by; the cluster stays exactly as Karpenter left it.
	seen := passes.Load()
	e.eventually(90*time.Second, "5 disruption passes after adoption", func() (bool, string) {
		if got := e.takeoverState(); got.String() != before.String() {
			t.Fatalf("tenon changed the adopted cluster:\nbefore %s\nafter  %s", before, got)
		}
		n := passes.Load() - seen
		return n >= 5, fmt.Sprintf("%d passes", n)
	})
	time.Sleep(2 * opts.GarbageCollection.Interval) // two more garbage-collection passes, then look once more
	if got := e.takeoverState(); got.String() != before.String() {
		t.Fatalf("tenon changed the adopted cluster:\nbefore %s\nafter  %s", before, got)
	}

	// --- and disrupts them as its own ---
	d := &appsv1.Deployment{}
	if err := kube.Get(ctx, types.NamespacedName{Namespace: "default", Name: "web"}, d); err != nil {
		t.Fatal(err)
	}
	d.Spec.Replicas = ptr.To[int32](1)
	if err := kube.Update(ctx, d); err != nil {
		t.Fatal(err)
	}
	e.eventually(120*time.Second, "the two emptied Karpenter nodes consolidated away", func() (bool, string) {
		s := e.takeoverState()
		return len(s.claims) == 1 && len(s.nodes) == 1 && len(s.instances) == 1, s.String()
	})
	after := e.takeoverState()
	for uid := range after.claims {
		if _, ok := before.claims[uid]; !ok {
			t.Errorf("tenon launched NodeClaim %s while taking over: %s", after.claims[uid], after)
		}
	}
	for _, in := range e.instances() {
		if in.Status.Phase == simv1alpha1.InstanceTerminated {
			continue
		}
		if !strings.HasPrefix(in.Name, "i-0karpenter") {
			t.Errorf("tenon launched instance %s", in.Name)
		}
	}
	e.podsRunning("web", 1, 60*time.Second)
}

// takeoverView is what must not change while tenon adopts: claims, nodes and running
// instances by identity, and the pods with their nodes.
type takeoverView struct {
	claims, nodes   map[types.UID]string
	instances, pods map[string]string
}

func (e *env) takeoverState() takeoverView {
	e.t.Helper()
	v := takeoverView{claims: map[types.UID]string{}, nodes: map[types.UID]string{}, instances: map[string]string{}, pods: map[string]string{}}
	for _, nc := range e.nodeClaims() {
		del := ""
		if nc.DeletionTimestamp != nil {
			del = "(deleting)"
		}
		v.claims[nc.UID] = nc.Name + del
	}
	for _, n := range e.nodes() {
		v.nodes[n.UID] = n.Name
	}
	for _, in := range e.instances() {
		if in.Status.Phase != simv1alpha1.InstanceTerminated && in.Status.Phase != simv1alpha1.InstanceTerminating {
			v.instances[in.Name] = string(in.Status.Phase)
		}
	}
	var pods corev1.PodList
	if err := e.kube.List(e.ctx, &pods, client.InNamespace("default")); err != nil {
		e.t.Fatal(err)
	}
	for _, p := range pods.Items {
		v.pods[string(p.UID)] = p.Spec.NodeName + "/" + string(p.Status.Phase)
	}
	return v
}

func (v takeoverView) String() string {
	show := func(m map[string]string) string {
		var s []string
		for k, x := range m {
			s = append(s, k+"="+x)
		}
		slices.Sort(s)
		return strings.Join(s, " ")
	}
	byUID := func(m map[types.UID]string) map[string]string {
		out := map[string]string{}
		for k, x := range m {
			out[string(k)] = x
		}
		return out
	}
	return fmt.Sprintf("claims [%s] nodes [%s] instances [%s] pods [%s]", show(byUID(v.claims)), show(byUID(v.nodes)), show(v.instances), show(v.pods))
}

// karpenterNode writes what Karpenter leaves for one node: the instance in the (simulated)
// cloud, the NodeClaim as Karpenter stamps it, and the Node its kubelet registered, which
// Karpenter then synced (labels, finalizer, owner, unregistered taint gone). It returns the
// claim.
func (e *env) karpenterNode(pool *apisv1.NodePool, class *simv1alpha1.SimNodeClass, name, id string) *apisv1.NodeClaim {
	e.t.Helper()
	const region, zone, typ = "us-east-1", "us-east-1a", "m5.large"
	cat, err := catalog.Load(region)
	if err != nil {
		e.t.Fatal(err)
	}
	it, ok := cat.Get(typ)
	if !ok {
		e.t.Fatalf("%s is not in the %s catalog", typ, region)
	}
	var offering *catalog.Offering
	for i := range it.Offerings {
		if o := &it.Offerings[i]; o.Zone == zone && o.CapacityType == apisv1.CapacityTypeOnDemand {
			offering = o
		}
	}
	if offering == nil {
		e.t.Fatalf("no on-demand offering of %s in %s", typ, zone)
	}
	arch, _ := it.Label(apisv1.LabelArch)
	labels := it.NodeLabels(offering)
	labels[apisv1.NodePoolLabelKey] = pool.Name
	providerID := cloud.ProviderID(region, zone, id)
	launched := time.Now().Add(-time.Hour).Truncate(time.Microsecond)

	claim := &apisv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Labels: labels, Finalizers: []string{apisv1.TerminationFinalizer},
			Annotations: map[string]string{
				apisv1.NodePoolHashAnnotationKey: "6971421302419733321", apisv1.NodePoolHashVersionAnnotationKey: karpenterHashVersion,
				apisv1.NodeClassHashAnnotationKey: class.Hash(),
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: apisv1.SchemeGroupVersion.String(), Kind: "NodePool", Name: pool.Name, UID: pool.UID, BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: apisv1.NodeClaimSpec{
			NodeClassRef: pool.Spec.Template.Spec.NodeClassRef.DeepCopy(),
			Requirements: append(slices.Clone(pool.Spec.Template.Spec.Requirements), apisv1.NodeSelectorRequirementWithMinValues{
				Key: apisv1.NodePoolLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{pool.Name}}),
			Resources:   apisv1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}},
			ExpireAfter: pool.Spec.Template.Spec.ExpireAfter,
		},
	}
	e.create(claim)
	claim.Status = apisv1.NodeClaimStatus{
		ProviderID: providerID, NodeName: id, ImageID: simulated.ImageID(arch),
		Capacity: it.Capacity.ResourceList(), Allocatable: it.Allocatable().ResourceList(),
	}
	for _, c := range []string{apisv1.ConditionTypeLaunched, apisv1.ConditionTypeRegistered, apisv1.ConditionTypeInitialized, apisv1.ConditionTypeReady} {
		claim.SetCondition(metav1.Condition{Type: c, Status: metav1.ConditionTrue, Reason: c}, launched.Add(time.Minute))
	}
	if err := e.kube.Status().Update(e.ctx, claim); err != nil {
		e.t.Fatalf("NodeClaim %s status: %v", name, err)
	}

	inst := &simv1alpha1.SimInstance{
		ObjectMeta: metav1.ObjectMeta{Name: id,
			Labels:      map[string]string{simv1alpha1.NodeClassLabelKey: class.Name, simv1alpha1.NodeClaimLabelKey: name, apisv1.NodePoolLabelKey: pool.Name},
			Annotations: map[string]string{apisv1.NodeClassHashAnnotationKey: class.Hash()},
		},
		Spec: simv1alpha1.SimInstanceSpec{
			NodeClaim: name, NodeClass: class.Name, Region: region, Zone: zone, ZoneID: offering.ZoneID, InstanceType: typ,
			CapacityType: apisv1.CapacityTypeOnDemand, Price: strconv.FormatFloat(offering.Price, 'f', -1, 64),
			ImageID: simulated.ImageID(arch), LaunchTime: metav1.NewMicroTime(launched), NodeLabels: labels,
		},
	}
	e.create(inst)
	inst.Status = simv1alpha1.SimInstanceStatus{Phase: simv1alpha1.InstanceRunning, NodeName: id}
	if err := e.kube.Status().Update(e.ctx, inst); err != nil {
		e.t.Fatalf("SimInstance %s status: %v", id, err)
	}

	node := simulated.RegisteringNode(id, providerID, it, labels, nil, simulated.ImageID(arch))
	node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&apisv1.UnregisteredNoExecuteTaint) })
	node.Labels[apisv1.NodeRegisteredLabelKey], node.Labels[apisv1.NodeInitializedLabelKey] = "true", "true"
	node.Finalizers = []string{apisv1.TerminationFinalizer}
	node.OwnerReferences = []metav1.OwnerReference{{APIVersion: apisv1.SchemeGroupVersion.String(), Kind: apisv1.NodeClaimKind, Name: name, UID: claim.UID, BlockOwnerDeletion: ptr.To(true)}}
	e.create(node)
	return claim
}

// lease is Karpenter's leader-election Lease, held by a Karpenter pod.
type lease struct {
	kube   client.Client
	obj    *coordinationv1.Lease
	holder string
}

func karpenterLease(t *testing.T, kube client.Client) *lease {
	t.Helper()
	now := metav1.NewMicroTime(time.Now())
	l := &lease{kube: kube, holder: "karpenter-5d8b9c7f4-x2x4z_3b0f2c1e-8a1d-4c62-9f0e-2d7c5b1a9e44"}
	l.obj = &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: operator.DefaultKarpenterLeaseNamespace, Name: operator.DefaultKarpenterLeaseName},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &l.holder, LeaseDurationSeconds: ptr.To[int32](15),
			AcquireTime: &now, RenewTime: &now},
	}
	if err := kube.Create(context.Background(), l.obj); err != nil {
		t.Fatal(err)
	}
	return l
}

// renew renews the Lease every second, as Karpenter's leader does, until the returned function
// is called (which waits for the renewals to stop).
func (l *lease) renew(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			cur := &coordinationv1.Lease{}
			if err := l.kube.Get(ctx, client.ObjectKeyFromObject(l.obj), cur); err != nil {
				continue
			}
			cur.Spec.RenewTime = ptr.To(metav1.NewMicroTime(time.Now()))
			_ = l.kube.Update(ctx, cur)
		}
	}()
	return func() { cancel(); <-done }
}

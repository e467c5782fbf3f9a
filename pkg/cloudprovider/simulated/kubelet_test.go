package simulated_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// These tests drive the Kubelet pass by pass with a virtual clock against a fake client, so
// they can check what exists at each instant.

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type virtualClock struct{ now time.Time }

func (c *virtualClock) Now() time.Time { return c.now }

func fakeClient(t testing.TB, objs ...client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apisv1.AddToScheme, simv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithStatusSubresource(&simv1alpha1.SimNodeClass{}, &simv1alpha1.SimInstance{}, &corev1.Node{}).Build()
}

func get[T client.Object](t *testing.T, c client.Client, name string, obj T) (T, bool) {
	t.Helper()
	err := c.Get(context.Background(), keyOf(name), obj)
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return obj, err == nil
}

func TestKubeletTimeline(t *testing.T) {
	ctx := context.Background()
	spec := simv1alpha1.SimNodeClassSpec{BootDelay: dur("2s"), RegistrationDelay: dur("1s"), DevicePluginDelay: dur("3s"), ShutdownDelay: dur("10s")}
	c := fakeClient(t, &simv1alpha1.SimNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "fake"}, Spec: spec})
	clk := &virtualClock{now: epoch}
	p, err := simulated.New(simulated.Options{Client: c, Clock: clk.Now, IDSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	k := p.Kubelet()
	claim := &apisv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu"},
		Spec: apisv1.NodeClaimSpec{
			Requirements: []apisv1.NodeSelectorRequirementWithMinValues{req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "g5.xlarge")},
			NodeClassRef: &apisv1.NodeClassReference{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind, Name: "fake"},
		},
	}
	got, err := p.Create(ctx, claim)
	if err != nil {
		t.Fatal(err)
	}
	id := instanceID(t, got.Status.ProviderID)
	gpu := corev1.ResourceName(scheduling.ResourceNvidiaGPU)
	type state struct {
		phase     simv1alpha1.InstancePhase
		node, gpu bool
		record    bool
	}
	at := func(offset time.Duration, want state) {
		t.Helper()
		clk.now = epoch.Add(offset)
		next, err := k.Pass(ctx)
		if err != nil {
			t.Fatal(err)
		}
		si, record := get(t, c, id, &simv1alpha1.SimInstance{})
		node, hasNode := get(t, c, id, &corev1.Node{})
		_, hasGPU := node.Status.Capacity[gpu]
		st := state{node: hasNode, gpu: hasNode && hasGPU, record: record}
		if record {
			st.phase = si.Status.Phase
		}
		if st != want {
			t.Errorf("at +%v: %+v, want %+v (next event %v)", offset, st, want, next.Sub(epoch))
		}
	}
	at(1999*time.Millisecond, state{phase: "Pending", record: true})
	at(2*time.Second, state{phase: "Running", record: true})
	at(2999*time.Millisecond, state{phase: "Running", record: true})
	at(3*time.Second, state{phase: "Running", node: true, record: true})
	at(5999*time.Millisecond, state{phase: "Running", node: true, record: true})
	at(6*time.Second, state{phase: "Running", node: true, gpu: true, record: true})

	clk.now = epoch.Add(10 * time.Second)
	if err := p.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	if err := p.Delete(ctx, got); err != nil {
		t.Errorf("Delete while shutting down: %v", err)
	}
	at(10*time.Second, state{phase: "Terminating", record: true})
	at(19*time.Second, state{phase: "Terminating", record: true})
	at(20*time.Second, state{})
	if err := p.Delete(ctx, got); !cloudprovider.IsNodeClaimNotFound(err) {
		t.Errorf("Delete after shutdown: %v", err)
	}
}

// An instance whose SimNodeClass is gone is restored on the plain catalog of its region, keeps
// running and can be deleted.
func TestRestoreWithoutNodeClass(t *testing.T) {
	ctx := context.Background()
	obj := &simv1alpha1.SimInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "i-00000000000000001", Annotations: map[string]string{apisv1.NodeClassHashAnnotationKey: "1"}},
		Spec: simv1alpha1.SimInstanceSpec{
			NodeClaim: "orphan", NodeClass: "deleted", Region: "us-east-1", Zone: "us-east-1c", ZoneID: "use1-az3",
			InstanceType: "c5.large", CapacityType: "spot", Price: "0.04", ImageID: "sim-al2023-amd64",
			LaunchTime: metav1.NewMicroTime(epoch), NodeLabels: map[string]string{apisv1.NodePoolLabelKey: "np"},
		},
		Status: simv1alpha1.SimInstanceStatus{Phase: simv1alpha1.InstanceRunning, NodeName: "i-00000000000000001"},
	}
	c := fakeClient(t, obj)
	clk := &virtualClock{now: epoch.Add(time.Hour)}
	p, err := simulated.New(simulated.Options{Client: c, Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	list, err := p.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != "orphan" || list[0].Status.ProviderID != "sim://us-east-1/us-east-1c/i-00000000000000001" ||
		list[0].Labels[apisv1.CapacityTypeLabelKey] != "spot" || list[0].Labels[apisv1.NodePoolLabelKey] != "np" ||
		!list[0].CreationTimestamp.Time.Equal(epoch) {
		t.Fatalf("restored %+v", list)
	}
	k := p.Kubelet()
	if _, err := k.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := get(t, c, obj.Name, &corev1.Node{}); ok {
		t.Error("a Node was registered again for an instance that had registered before")
	}
	if err := p.Delete(ctx, list[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := get(t, c, obj.Name, &simv1alpha1.SimInstance{}); ok {
		t.Error("the terminated instance's SimInstance is still there")
	}
}

// Deleting a SimInstance by hand makes the instance vanish at its next change of state.
func TestDeletedSimInstanceVanishes(t *testing.T) {
	ctx := context.Background()
	c := fakeClient(t, &simv1alpha1.SimNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "fake"}})
	clk := &virtualClock{now: epoch}
	p, err := simulated.New(simulated.Options{Client: c, Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	claim := &apisv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "vanish"},
		Spec: apisv1.NodeClaimSpec{
			Requirements: []apisv1.NodeSelectorRequirementWithMinValues{anyCapacity},
			NodeClassRef: &apisv1.NodeClassReference{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind, Name: "fake"},
		},
	}
	got, err := p.Create(ctx, claim)
	if err != nil {
		t.Fatal(err)
	}
	id := instanceID(t, got.Status.ProviderID)
	if err := c.Delete(ctx, &simv1alpha1.SimInstance{ObjectMeta: metav1.ObjectMeta{Name: id}}); err != nil {
		t.Fatal(err)
	}
	clk.now = epoch.Add(time.Minute)
	if _, err := p.Kubelet().Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Get(ctx, got.Status.ProviderID); !cloudprovider.IsNodeClaimNotFound(err) {
		t.Errorf("Get of the vanished instance: %v", err)
	}
	if _, ok := get(t, c, id, &corev1.Node{}); ok {
		t.Error("the vanished instance has a Node")
	}
}

// laggingNodes is a client whose reads of Nodes miss, as a manager's cache that has not yet
// seen a Node the Kubelet has just created; its writes reach the store.
func laggingNodes(c client.Client) client.Client {
	return interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.Node); ok {
				return apierrors.NewNotFound(corev1.Resource("nodes"), key.Name)
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
}

// A GPU instance's device resources reach its Node even when the Kubelet's client reads the
// Nodes from a cache that lags: a Node missing from the cache is not a Node that is gone (the
// regression: AddDevices took it for one, the GPUs were never published, and a pod asking for
// one stayed pending for ever).
func TestKubeletPublishesDevicesThroughALaggingCache(t *testing.T) {
	ctx := context.Background()
	spec := simv1alpha1.SimNodeClassSpec{BootDelay: dur("1s"), RegistrationDelay: dur("1s"), DevicePluginDelay: dur("1s")}
	store := fakeClient(t, &simv1alpha1.SimNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "fake"}, Spec: spec})
	clk := &virtualClock{now: epoch}
	p, err := simulated.New(simulated.Options{Client: laggingNodes(store), Reader: store, Clock: clk.Now, IDSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Create(ctx, &apisv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu"},
		Spec: apisv1.NodeClaimSpec{
			Requirements: []apisv1.NodeSelectorRequirementWithMinValues{req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "g5.xlarge")},
			NodeClassRef: &apisv1.NodeClassReference{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind, Name: "fake"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	id := instanceID(t, got.Status.ProviderID)
	k := p.Kubelet()
	for _, at := range []time.Duration{2 * time.Second, 3 * time.Second, 4 * time.Second} {
		clk.now = epoch.Add(at)
		if _, err := k.Pass(ctx); err != nil {
			t.Fatalf("pass at +%v: %v", at, err)
		}
	}
	node, ok := get(t, store, id, &corev1.Node{})
	if !ok {
		t.Fatal("the instance's Node was not registered")
	}
	gpu := corev1.ResourceName(scheduling.ResourceNvidiaGPU)
	if q := node.Status.Capacity[gpu]; q.Value() != 1 {
		t.Errorf("Node capacity %s = %v, want 1 (capacity %v)", gpu, q.String(), node.Status.Capacity)
	}
	if q := node.Status.Allocatable[gpu]; q.Value() != 1 {
		t.Errorf("Node allocatable %s = %v, want 1", gpu, q.String())
	}
	if q := node.Status.Capacity[corev1.ResourceCPU]; q.Value() != 4 {
		t.Errorf("Node capacity cpu = %v after the devices were added, want 4", q.String())
	}
}

// Adding devices to a Node that is really gone (deleted while its instance runs) needs nothing
// and is no error, so the Kubelet does not retry it for ever.
func TestAddDevicesToADeletedNode(t *testing.T) {
	c := fakeClient(t)
	cat, err := catalog.Load("us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	it, ok := cat.Get("g5.xlarge")
	if !ok {
		t.Fatal("g5.xlarge is not in the catalog")
	}
	if err := simulated.AddDevices(context.Background(), c, "i-gone", it); err != nil {
		t.Errorf("AddDevices on a Node that does not exist: %v", err)
	}
}

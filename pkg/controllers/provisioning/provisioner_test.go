package provisioning

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated"
	"github.com/tenon-sh/tenon/pkg/state"
)

func pendingPod(name string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func TestProvisionableFilter(t *testing.T) {
	both := []string{corev1.DefaultSchedulerName, "batch"}
	for _, c := range []struct {
		name       string
		pod        *corev1.Pod
		schedulers []string
		want       bool
	}{
		{"marked unschedulable", pendingPod("a"), nil, true},
		{"not yet tried by the scheduler", pendingPod("a", func(p *corev1.Pod) { p.Status.Conditions = nil }), nil, false},
		{"scheduled condition false for another reason", pendingPod("a", func(p *corev1.Pod) { p.Status.Conditions[0].Reason = "SchedulerError" }), nil, false},
		{"bound", pendingPod("a", func(p *corev1.Pod) { p.Spec.NodeName = "n1" }), nil, false},
		{"nominated by preemption", pendingPod("a", func(p *corev1.Pod) { p.Status.NominatedNodeName = "n1" }), nil, false},
		{"being deleted", pendingPod("a", func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: time.Now()} }), nil, false},
		{"succeeded", pendingPod("a", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }), nil, false},
		{"failed", pendingPod("a", func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }), nil, false},
		{"mirror pod", pendingPod("a", func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"} }), nil, false},
		{"daemonset pod", pendingPod("a", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds"}}
		}), nil, false},
		{"owned by a replicaset", pendingPod("a", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs"}}
		}), nil, true},
		{"no scheduler name counts as the default", pendingPod("a"), []string{corev1.DefaultSchedulerName}, true},
		{"another scheduler", pendingPod("a", func(p *corev1.Pod) { p.Spec.SchedulerName = "volcano" }), []string{corev1.DefaultSchedulerName}, false},
		{"one of several schedulers", pendingPod("a", func(p *corev1.Pod) { p.Spec.SchedulerName = "batch" }), both, true},
		{"default scheduler not listed", pendingPod("a"), []string{"batch"}, false},
	} {
		if got := IsProvisionable(c.pod, c.schedulers); got != c.want {
			t.Errorf("%s: provisionable %v, want %v", c.name, got, c.want)
		}
	}
}

// provisioner is a Provisioner on a fake API client and the simulated cloud, with a NodePool
// "general" of the SimNodeClass "default"; no API server is involved.
func provisioner(t *testing.T, pods ...*corev1.Pod) (*Provisioner, *record.FakeRecorder) {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apisv1.AddToScheme, simv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	class := &simv1alpha1.SimNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(class).WithStatusSubresource(&simv1alpha1.SimInstance{}).Build()
	cloud, err := simulated.New(simulated.Options{Client: kube, IDSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(time.Now())
	cluster := state.NewCluster(clk)
	cluster.UpdateNodePool(&apisv1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "general"},
		Spec: apisv1.NodePoolSpec{Template: apisv1.NodeClaimTemplate{Spec: apisv1.NodeClaimTemplateSpec{
			NodeClassRef: &apisv1.NodeClassReference{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind, Name: "default"},
		}}},
	})
	for _, p := range pods {
		cluster.UpdatePod(p)
	}
	rec := record.NewFakeRecorder(100)
	return New(Deps{Client: kube, Cluster: cluster, Cloud: cloud, Recorder: rec, Clock: clk, Log: logr.Discard()}, Options{}), rec
}

// start runs p until t ends, and returns the context it runs in.
func start(t *testing.T, p *Provisioner) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return ctx
}

func events(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestScheduleRejectsAPodSelectingAMissingNodePoolAndPlansTheRest(t *testing.T) {
	p, rec := provisioner(t,
		pendingPod("web"),
		pendingPod("lost", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{apisv1.NodePoolLabelKey: "gpu"} }),
		pendingPod("running", func(p *corev1.Pod) { p.Spec.NodeName = "n1" }),
	)
	res, err := p.Schedule(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Pods != 2 || res.Invalid != 1 {
		t.Errorf("pods %d, invalid %d; want 2 pending of which 1 invalid (the bound pod is not pending)", res.Pods, res.Invalid)
	}
	if len(res.Claims) != 1 || res.Nominated != 0 || res.Unschedulable != 0 {
		t.Errorf("claims %d, nominated %d, unschedulable %d; want one new NodeClaim for the valid pod", len(res.Claims), res.Nominated, res.Unschedulable)
	}
	if len(res.Claims) == 1 && res.Claims[0].Labels[apisv1.NodePoolLabelKey] != "general" {
		t.Errorf("the claim's labels %v must name nodepool general", res.Claims[0].Labels)
	}
	var invalid, nominated int
	for _, e := range events(rec) {
		switch {
		case strings.HasPrefix(e, "Warning "+EventFailedValidation):
			invalid++
			if !strings.Contains(e, `nodepool "gpu"`) {
				t.Errorf("the validation event must name the missing nodepool: %q", e)
			}
		case strings.HasPrefix(e, "Normal "+EventNominated):
			nominated++
		}
	}
	if invalid != 1 || nominated != 1 {
		t.Errorf("%d FailedValidation and %d Nominated events; want one of each", invalid, nominated)
	}
}

func TestScheduleWithNothingPendingDoesNothing(t *testing.T) {
	p, rec := provisioner(t, pendingPod("done", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }))
	res, err := p.Schedule(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Pods != 0 || res.Plan != nil || len(res.Claims) != 0 {
		t.Errorf("result %+v; want an empty batch and no plan", res)
	}
	if ev := events(rec); len(ev) != 0 {
		t.Errorf("events %v; want none", ev)
	}
}

// failingTypes is a cloud whose instance types cannot be read the first fails times; with a
// clock, it records when each call came.
type failingTypes struct {
	cloudprovider.CloudProvider
	mu    sync.Mutex
	fails int
	clock clock.PassiveClock
	calls []time.Time
}

func (f *failingTypes) GetInstanceTypes(ctx context.Context, np *apisv1.NodePool) ([]*catalog.InstanceType, error) {
	f.mu.Lock()
	failing := f.fails > 0
	f.fails--
	if f.clock != nil {
		f.calls = append(f.calls, f.clock.Now())
	}
	f.mu.Unlock()
	if failing {
		return nil, errors.New("UnauthorizedOperation: You are not authorized to perform this operation: DescribeInstanceTypes")
	}
	return f.CloudProvider.GetInstanceTypes(ctx, np)
}

// A batch whose NodePool's instance types could not be read (a refused or failed call) leaves
// its pods unplanned; the provisioner retries it after a backoff, with no other change to the
// cluster to trigger it, and the retry creates the NodeClaim.
func TestAFailedBatchIsRetried(t *testing.T) {
	p, _ := provisioner(t, pendingPod("web"))
	clk := p.clock.(*clocktesting.FakeClock)
	flaky := &failingTypes{CloudProvider: p.source.Cloud, fails: 2, clock: clk}
	p.source.Cloud = flaky
	ctx := start(t, p)
	claims := func() int {
		var l apisv1.NodeClaimList
		if err := p.kube.List(ctx, &l); err != nil {
			t.Fatal(err)
		}
		return len(l.Items)
	}
	// Virtual time passes in steps of 100 ms, each once the provisioner waits on the clock
	// again, for at most a minute: the two failures back off 1 s and 2 s.
	var waited time.Duration
	for claims() == 0 {
		if waited > time.Minute {
			flaky.mu.Lock()
			left := flaky.fails
			flaky.mu.Unlock()
			t.Fatalf("no NodeClaim %v after the batch failed (failures left %d): the failed batch was not retried", waited, max(left, 0))
		}
		deadline := time.Now().Add(10 * time.Second)
		for !clk.HasWaiters() && claims() == 0 {
			if time.Now().After(deadline) {
				t.Fatal("the provisioner neither waits on its clock nor created a NodeClaim")
			}
			time.Sleep(time.Millisecond)
		}
		clk.Step(100 * time.Millisecond)
		waited += 100 * time.Millisecond
		time.Sleep(2 * time.Millisecond)
	}
	// The retries are timed by the calls, in virtual time: the test steps the clock while the
	// provisioner writes the NodeClaim in real time, which on a loaded machine adds seconds of
	// virtual time after the last call (12 s once in CI).
	flaky.mu.Lock()
	calls := slices.Clone(flaky.calls)
	flaky.mu.Unlock()
	if len(calls) < 3 {
		t.Fatalf("%d reads of the instance types; want the two that failed and the one that did not", len(calls))
	}
	if gap1, gap2 := calls[1].Sub(calls[0]), calls[2].Sub(calls[1]); gap1 < time.Second || gap2 < 2*time.Second || calls[2].Sub(calls[0]) > 10*time.Second {
		t.Errorf("retries %v and %v after the failures (the NodeClaim %v after the first batch); two failures back off 1 s + 2 s", gap1, gap2, waited)
	}
}

// A pod promised to a claim whose node registered is planned again once the promise ends by
// time alone, with nothing in the cluster changing to wake the provisioner (the chaos suite's
// startup test once left a pod pending for five minutes so).
func TestAPromiseEndingByTimeIsPlannedAgain(t *testing.T) {
	p, _ := provisioner(t, pendingPod("web"))
	clk := p.clock.(*clocktesting.FakeClock)
	claim := &apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c1", UID: "uid-c1", Labels: map[string]string{apisv1.NodePoolLabelKey: "general"},
		CreationTimestamp: metav1.Time{Time: clk.Now()}},
		Spec:   apisv1.NodeClaimSpec{NodeClassRef: &apisv1.NodeClassReference{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind, Name: "default"}},
		Status: apisv1.NodeClaimStatus{ProviderID: "sim:///i-1", NodeName: "n1"}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "uid-n1", CreationTimestamp: metav1.Time{Time: clk.Now()}, Labels: map[string]string{apisv1.NodePoolLabelKey: "general"}},
		Spec: corev1.NodeSpec{ProviderID: "sim:///i-1"},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
			corev1.ResourcePods: resource.MustParse("110")}}}
	p.cluster.UpdateNodeClaim(claim)
	p.cluster.UpdateNode(node)
	web, _ := p.cluster.Pod("default", "web")
	p.cluster.Promise("c1", []*corev1.Pod{web})
	if !p.cluster.HoldsPromises() {
		t.Fatal("the promise does not hold")
	}
	var mu sync.Mutex
	var batches []int
	p.opts.OnBatch = func(res *Result, _, _ time.Time) {
		mu.Lock()
		defer mu.Unlock()
		batches = append(batches, res.Pods)
	}
	start(t, p)
	planned := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(batches, 1)
	}
	// Virtual time passes in steps of a second, each once the provisioner waits on the clock;
	// the promise ends a minute after the node registered.
	var waited time.Duration
	for !planned() {
		if waited > 2*time.Minute {
			mu.Lock()
			t.Fatalf("the pod was not planned again %v after its promise began (batches of %v pods)", waited, batches)
		}
		deadline := time.Now().Add(10 * time.Second)
		for !clk.HasWaiters() && !planned() {
			if time.Now().After(deadline) {
				t.Fatal("the provisioner neither waits on its clock nor planned the pod")
			}
			time.Sleep(time.Millisecond)
		}
		clk.Step(time.Second)
		waited += time.Second
		time.Sleep(2 * time.Millisecond)
	}
	if waited < state.PromiseTTL {
		t.Errorf("the pod was planned again %v after its promise began, before the promise ended", waited)
	}
}

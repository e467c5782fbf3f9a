package provisioning

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tenon-sh/tenon/pkg/state"
)

// A nomination tenon made goes stale NominationTTL after it was made if the pod has not bound:
// the sweep then asks for a batch once, and the pod counts as pending again; another's
// nomination (a preemption) never does. A later plan moves a pod off the claim it was planned
// onto before.
func TestNominationsGoStale(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	cluster := state.NewCluster(clk)
	pod := func(name, nnn, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: corev1.PodSpec{NodeName: node},
			Status: corev1.PodStatus{NominatedNodeName: nnn}}
	}
	ours, theirs := pod("ours", "n1", ""), pod("theirs", "n2", "")
	cluster.UpdatePod(ours)
	cluster.UpdatePod(theirs)
	triggered := 0
	n := newNominator(nil, cluster, clk, logr.Discard(), func() { triggered++ })
	n.made[types.NamespacedName{Namespace: "default", Name: "ours"}] = nomination{node: "n1", at: clk.Now()}

	if n.isStale(ours) || n.isStale(theirs) {
		t.Fatal("a fresh nomination is stale")
	}
	n.sweep()
	clk.Step(NominationTTL + time.Second)
	if !n.isStale(ours) || n.isStale(theirs) {
		t.Errorf("after the TTL: ours stale %v (want true), theirs stale %v (want false)", n.isStale(ours), n.isStale(theirs))
	}
	n.sweep()
	n.sweep()
	if triggered != 1 {
		t.Errorf("%d batches asked for; want one for the stale nomination", triggered)
	}
	if moved := pod("ours", "n3", ""); n.isStale(moved) {
		t.Error("a pod nominated elsewhere since counts as stale")
	}
	// Bound, the pod's nomination is forgotten.
	cluster.UpdatePod(pod("ours", "", "n1"))
	n.sweep()
	if len(n.made) != 0 {
		t.Errorf("nominations kept for bound pods: %v", n.made)
	}

	p1, p2 := pod("a", "", ""), pod("b", "", "")
	n.plan("claim-1", []*corev1.Pod{p1, p2})
	n.plan("claim-2", []*corev1.Pod{p2})
	if got := n.planned["claim-1"]; len(got) != 1 || got[0].Name != "a" || n.claimOf[types.NamespacedName{Namespace: "default", Name: "b"}] != "claim-2" {
		t.Errorf("after re-planning b: claim-1 %v, b on %s", got, n.claimOf[types.NamespacedName{Namespace: "default", Name: "b"}])
	}
	n.forget("claim-2")
	if _, ok := n.claimOf[types.NamespacedName{Namespace: "default", Name: "b"}]; ok || len(n.planned["claim-2"]) != 0 {
		t.Error("forgetting a claim kept its pods")
	}
}

// While kube-scheduler is still binding other pods (a burst), a nomination does not go stale
// at NominationTTL: it waits until kube-scheduler has gone quiet, or state.MaxSchedulerWait.
func TestNominationsWaitForABusyScheduler(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	cluster := state.NewCluster(clk)
	ours := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ours"}, Status: corev1.PodStatus{NominatedNodeName: "n1"}}
	cluster.UpdatePod(ours)
	n := newNominator(nil, cluster, clk, logr.Discard(), func() {})
	start := clk.Now()
	n.made[types.NamespacedName{Namespace: "default", Name: "ours"}] = nomination{node: "n1", at: start}
	for i := 0; clk.Since(start) <= state.MaxSchedulerWait; i++ {
		clk.Step(5 * time.Second)
		other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprint("burst-", i)}}
		cluster.UpdatePod(other)
		other = other.DeepCopy()
		other.Spec.NodeName = "n2"
		cluster.UpdatePod(other)
		if stale := n.isStale(ours); stale != (clk.Since(start) > state.MaxSchedulerWait) {
			t.Fatalf("at %s, with kube-scheduler binding every 5 s: stale %v", clk.Since(start), stale)
		}
	}
}

// When kube-scheduler takes tenon's nomination off a pending pod (a failed attempt while the
// planned node is still tainted), tenon writes it again, keeping when it was first made; it
// leaves alone another's nomination, a nomination past NominationTTL, and a pod whose node is
// gone.
func TestClearedNominationsAreMadeAgain(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	cluster := state.NewCluster(clk)
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
	}
	node := func(name, cpu string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourcePods: resource.MustParse("110")}}}
	}
	names := []string{"ours", "theirs", "old", "orphan", "crowded"}
	kube := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithStatusSubresource(&corev1.Pod{}).Build()
	for _, name := range names {
		p := pod(name)
		if err := kube.Create(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		cluster.UpdatePod(p)
	}
	// n1 holds "ours" (and "old"); "small" has room for one of the two pods nominated there.
	cluster.UpdateNode(node("n1", "2"))
	cluster.UpdateNode(node("small", "1500m"))
	n := newNominator(kube, cluster, clk, logr.Discard(), func() {})
	first := clk.Now()
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "default", Name: name} }
	n.made[key("ours")] = nomination{node: "n1", at: first}
	n.made[key("old")] = nomination{node: "n1", at: first.Add(-NominationTTL - time.Second)}
	n.made[key("orphan")] = nomination{node: "gone", at: first}
	n.made[key("crowded")] = nomination{node: "small", at: first}
	n.made[key("theirs")] = nomination{node: "small", at: first} // and then nominated elsewhere by another

	nominated := func(name, node string) *corev1.Pod {
		p := pod(name)
		p.Status.NominatedNodeName = node
		return p
	}
	for _, c := range []struct{ name, node string }{{"ours", "n1"}, {"theirs", "n2"}, {"old", "n1"}, {"orphan", "gone"}, {"crowded", "small"}} {
		n.podChanged(nominated(c.name, c.node), pod(c.name))
	}
	// A nomination replaced (not cleared), and a bound pod, are not queued.
	n.podChanged(nominated("ours", "n1"), nominated("ours", "n3"))
	bound := pod("ours")
	bound.Spec.NodeName = "n2"
	n.podChanged(nominated("ours", "n1"), bound)

	var queued []string
	for len(n.cleared) > 0 {
		k := <-n.cleared
		queued = append(queued, k.Name)
		n.renominate(context.Background(), k)
	}
	if fmt.Sprint(queued) != "[ours old orphan crowded]" {
		t.Errorf("queued %v; want [ours old orphan crowded] (tenon's own nominations, taken off)", queued)
	}
	for name, want := range map[string]string{"ours": "n1", "theirs": "", "old": "", "orphan": "", "crowded": ""} {
		got := &corev1.Pod{}
		if err := kube.Get(context.Background(), key(name), got); err != nil {
			t.Fatal(err)
		}
		if got.Status.NominatedNodeName != want {
			t.Errorf("pod %s nominated to %q; want %q", name, got.Status.NominatedNodeName, want)
		}
	}
	if m := n.made[key("ours")]; !m.at.Equal(first) {
		t.Errorf("the nomination made again dates from %s; want its first, %s", m.at, first)
	}
}

// Registration waits, before the node's unregistered taint comes off, until tenon's informers
// see every pod planned there nominated there. kube-scheduler may take a nomination off while
// the node is still tainted (another node's registration requeues every pending pod, and the
// attempt fails on the tainted node): such a pod is nominated again before registration
// returns, whether the informers saw the nomination before it was taken off or not, so that the
// room the plan kept for it is not free for others when the node becomes schedulable.
func TestRegistrationNominatesAgainWhatTheSchedulerTookOff(t *testing.T) {
	for _, seenFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("seen-before-taken-off=%v", seenFirst), func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Now())
			cluster := state.NewCluster(clk)
			cluster.UpdateNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"},
				Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourcePods: resource.MustParse("110")}}})
			// The informers: every status write reaches cluster at once, except that p2's
			// first nomination is held back until the test delivers it.
			var (
				mu   sync.Mutex
				held *corev1.Pod
			)
			kube := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithStatusSubresource(&corev1.Pod{}).
				WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
					if err := c.SubResource(sub).Patch(ctx, obj, patch, opts...); err != nil {
						return err
					}
					p := obj.(*corev1.Pod).DeepCopy()
					mu.Lock()
					defer mu.Unlock()
					if p.Name == "p2" && held == nil {
						held = p
						return nil
					}
					cluster.UpdatePod(p)
					return nil
				}}).Build()
			var pods []*corev1.Pod
			for i := range 3 {
				p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("p%d", i)},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
				if err := kube.Create(context.Background(), p); err != nil {
					t.Fatal(err)
				}
				cluster.UpdatePod(p.DeepCopy())
				pods = append(pods, p)
			}
			n := newNominator(kube, cluster, clk, logr.Discard(), func() {})
			n.plan("claim", pods)
			done := make(chan struct{})
			go func() {
				defer close(done)
				n.registering(context.Background(), "claim", "n1")
			}()
			// Once every nomination is written (p2's held back), kube-scheduler takes p0's off.
			deadline := time.Now().Add(10 * time.Second)
			for {
				mu.Lock()
				h := held
				mu.Unlock()
				p0, _ := cluster.Pod("default", "p0")
				if h != nil && (!seenFirst || p0.Status.NominatedNodeName == "n1") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the nominations were not written")
				}
				time.Sleep(time.Millisecond)
			}
			p0 := &corev1.Pod{}
			if err := kube.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "p0"}, p0); err != nil {
				t.Fatal(err)
			}
			p0.Status.NominatedNodeName = ""
			if err := kube.Status().Update(context.Background(), p0); err != nil {
				t.Fatal(err)
			}
			cluster.UpdatePod(p0.DeepCopy())
			mu.Lock()
			cluster.UpdatePod(held)
			mu.Unlock()
			select {
			case <-done:
			case <-time.After(registrationSettle + 5*time.Second):
				t.Fatal("registration did not return")
			}
			for _, name := range []string{"p0", "p1", "p2"} {
				got := &corev1.Pod{}
				if err := kube.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: name}, got); err != nil {
					t.Fatal(err)
				}
				if got.Status.NominatedNodeName != "n1" {
					t.Errorf("when registration returned, %s was nominated to %q; want n1", name, got.Status.NominatedNodeName)
				}
			}
		})
	}
}

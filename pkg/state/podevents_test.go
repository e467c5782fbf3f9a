package state

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

func TestLastPodEventFollowsArrivalsAndDepartures(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(t0)
	c := NewCluster(clk)
	if got := c.LastPodEvent("n1"); !got.IsZero() {
		t.Fatalf("no pod event yet, got %v", got)
	}

	// A pending pod is no event; binding it is an arrival at its scheduling time.
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a", CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour))}}
	c.UpdatePod(p)
	if got := c.LastPodEvent("n1"); !got.IsZero() {
		t.Fatalf("a pending pod is on no node, got %v", got)
	}
	clk.Step(10 * time.Second)
	bound := p.DeepCopy()
	bound.Spec.NodeName = "n1"
	bound.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(9 * time.Second))}}
	c.UpdatePod(bound)
	if got, want := c.LastPodEvent("n1"), t0.Add(9*time.Second); !got.Equal(want) {
		t.Errorf("arrival: got %v, want the binding time %v", got, want)
	}

	// An update that changes nothing about where the pod runs is no event.
	clk.Step(10 * time.Second)
	running := bound.DeepCopy()
	running.Status.Phase = corev1.PodRunning
	c.UpdatePod(running)
	if got, want := c.LastPodEvent("n1"), t0.Add(9*time.Second); !got.Equal(want) {
		t.Errorf("a status update moved the last pod event to %v", got)
	}

	// Finishing is a departure, now.
	clk.Step(10 * time.Second)
	done := running.DeepCopy()
	done.Status.Phase = corev1.PodSucceeded
	c.UpdatePod(done)
	if got, want := c.LastPodEvent("n1"), t0.Add(30*time.Second); !got.Equal(want) {
		t.Errorf("departure by finishing: got %v, want %v", got, want)
	}

	// Deleting a running pod is a departure; deleting a finished one is not.
	q := running.DeepCopy()
	q.Name = "b"
	c.UpdatePod(q)
	clk.Step(10 * time.Second)
	c.DeletePod("default", "b")
	if got, want := c.LastPodEvent("n1"), t0.Add(40*time.Second); !got.Equal(want) {
		t.Errorf("departure by deletion: got %v, want %v", got, want)
	}
	clk.Step(10 * time.Second)
	c.DeletePod("default", "a")
	if got, want := c.LastPodEvent("n1"), t0.Add(40*time.Second); !got.Equal(want) {
		t.Errorf("deleting a finished pod moved the last pod event to %v", got)
	}

	// A pod first seen already bound (the mirror starting) keeps when it arrived, not now.
	old := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "old", CreationTimestamp: metav1.NewTime(t0.Add(-2 * time.Hour))},
		Spec: corev1.PodSpec{NodeName: "n2"}, Status: corev1.PodStatus{StartTime: &metav1.Time{Time: t0.Add(-time.Hour)}}}
	c.UpdatePod(old)
	if got, want := c.LastPodEvent("n2"), t0.Add(-time.Hour); !got.Equal(want) {
		t.Errorf("a pod found running: got %v, want its start %v", got, want)
	}
	// A time in the future is clamped to now.
	future := old.DeepCopy()
	future.Name, future.Spec.NodeName = "future", "n3"
	future.Status.StartTime = &metav1.Time{Time: clk.Now().Add(time.Hour)}
	c.UpdatePod(future)
	if got := c.LastPodEvent("n3"); !got.Equal(clk.Now()) {
		t.Errorf("a start time in the future must count as now, got %v", got)
	}
	c.DeleteNode("n2")
	if got := c.LastPodEvent("n2"); !got.IsZero() {
		t.Errorf("a deleted node keeps a pod event: %v", got)
	}
}

func TestLoadFillsTheMirrorFromLists(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := apisv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	lbl := map[string]string{apisv1.NodePoolLabelKey: "default"}
	objs := []runtime.Object{
		&apisv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
		&apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "default-x", Labels: lbl}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: lbl}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "p"}, Spec: corev1.PodSpec{NodeName: "n1"}},
		&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "agent"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"team": "a"}}},
		&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "pdb"}},
	}
	r := fake.NewClientBuilder().WithScheme(scheme).WithRuntimeObjects(objs...).Build()
	c := NewCluster(clocktesting.NewFakeClock(time.Now()))
	if err := c.Load(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if len(c.NodePools()) != 1 || len(c.NodeClaims()) != 1 || len(c.Nodes()) != 1 || len(c.PodsOn("n1")) != 1 ||
		len(c.DaemonSets()) != 1 || c.NamespaceLabels()["web"]["team"] != "a" || len(c.PDBs()) != 1 {
		t.Errorf("mirror after Load: %d pools, %d claims, %d nodes, %d pods on n1, %d daemonsets, namespaces %v, %d pdbs",
			len(c.NodePools()), len(c.NodeClaims()), len(c.Nodes()), len(c.PodsOn("n1")), len(c.DaemonSets()), c.NamespaceLabels(), len(c.PDBs()))
	}

	// A kind the reader cannot list is an error naming it.
	bare := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).Build()
	err := NewCluster(clocktesting.NewFakeClock(time.Now())).Load(context.Background(), bare)
	if err == nil || !strings.Contains(err.Error(), "NodePools") {
		t.Errorf("listing an unknown kind: %v", err)
	}
}

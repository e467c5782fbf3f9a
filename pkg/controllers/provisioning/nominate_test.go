package provisioning

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

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

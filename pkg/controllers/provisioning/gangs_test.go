package provisioning

import (
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/snapshot"
	"github.com/tenon-sh/tenon/pkg/solver"
)

func TestIncompleteGangs(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	const deadline = 10 * time.Minute
	gang := solver.Gang{Namespace: "ml", Name: "train", MinCount: 3}
	member := func(name, node string, mutate ...func(*corev1.Pod)) *corev1.Pod {
		g := "train"
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name},
			Spec: corev1.PodSpec{NodeName: node, SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: &g}}}
		for _, m := range mutate {
			m(p)
		}
		return p
	}
	claim := func(name, node string, age time.Duration, groups string) *apisv1.NodeClaim {
		nc := &apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0.Add(-age)),
			Annotations: map[string]string{snapshot.AnnotationPodGroups: groups}}}
		nc.Status.NodeName = node
		return nc
	}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "api"}, Spec: corev1.PodSpec{NodeName: "n2"}}
	daemon := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "agent",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "DaemonSet", Name: "agent", Controller: new(true)}}},
		Spec: corev1.PodSpec{NodeName: "n1"}}
	onNode := map[string][]*corev1.Pod{"n1": {daemon}, "n2": {other}}
	podsOn := func(n string) []*corev1.Pod { return onNode[n] }
	pending := []*corev1.Pod{member("w0", ""), member("w1", ""), member("w2", "")}

	for _, tc := range []struct {
		name   string
		pods   []*corev1.Pod
		claims []*apisv1.NodeClaim
		want   []string // released claims
		kept   []string
	}{
		{name: "within the deadline", pods: pending,
			claims: []*apisv1.NodeClaim{claim("c1", "n1", 9*time.Minute, "ml/train"), claim("c2", "", 20*time.Second, "ml/train")}},
		{name: "past the deadline, counted from the first claim", pods: pending,
			claims: []*apisv1.NodeClaim{claim("c1", "n1", 11*time.Minute, "ml/train"), claim("c2", "", 20*time.Second, "ml/train")},
			want:   []string{"c1", "c2"}},
		{name: "a claim that runs another pod is kept", pods: pending,
			claims: []*apisv1.NodeClaim{claim("c1", "n1", 11*time.Minute, "ml/train"), claim("c2", "n2", 11*time.Minute, "ml/train,web/other")},
			want:   []string{"c1"}, kept: []string{"c2"}},
		{name: "complete gangs keep their claims", pods: []*corev1.Pod{member("w0", "n1"), member("w1", "n3"), member("w2", "n4")},
			claims: []*apisv1.NodeClaim{claim("c1", "n1", time.Hour, "ml/train")}},
		{name: "pods that finished or are going do not count", pods: []*corev1.Pod{
			member("w0", "n5", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }),
			member("w1", "n5", func(p *corev1.Pod) { p.DeletionTimestamp = new(metav1.NewTime(t0)) }),
			member("w2", "n5")},
			claims: []*apisv1.NodeClaim{claim("c1", "", time.Hour, "ml/train")}, want: []string{"c1"}},
		{name: "claims of other gangs and claims being deleted are left alone", pods: pending,
			claims: []*apisv1.NodeClaim{claim("c1", "", time.Hour, "ml/eval"), func() *apisv1.NodeClaim {
				nc := claim("c2", "", time.Hour, "ml/train")
				nc.DeletionTimestamp = new(metav1.NewTime(t0))
				return nc
			}()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Seen incomplete since long before: the claims' age decides.
			got := incompleteGangs([]solver.Gang{gang}, tc.pods, tc.claims, podsOn, map[string]time.Time{"ml/train": t0.Add(-time.Hour)}, t0, deadline)
			var released, kept []string
			for _, r := range got {
				for _, nc := range r.claims {
					released = append(released, nc.Name)
				}
				kept = append(kept, r.kept...)
			}
			if !slices.Equal(released, tc.want) || !slices.Equal(kept, tc.kept) {
				t.Errorf("released %v kept %v, want %v and %v", released, kept, tc.want, tc.kept)
			}
		})
	}
}

// A gang that ran and lost a worker (its pod recreated, pending for a moment) is not released
// at the next check though its claims are old: the deadline counts from when it was first seen
// incomplete. Once complete again it is forgotten, and so is a gang that is gone.
func TestIncompleteGangsCountFromWhenFirstSeen(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	const deadline = 10 * time.Minute
	gang := solver.Gang{Namespace: "ml", Name: "train", MinCount: 2}
	g := "train"
	pod := func(name, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name},
			Spec: corev1.PodSpec{NodeName: node, SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: &g}}}
	}
	claims := []*apisv1.NodeClaim{
		{ObjectMeta: metav1.ObjectMeta{Name: "c1", CreationTimestamp: metav1.NewTime(t0.Add(-24 * time.Hour)), Annotations: map[string]string{snapshot.AnnotationPodGroups: "ml/train"}},
			Status: apisv1.NodeClaimStatus{NodeName: "n1"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "c2", CreationTimestamp: metav1.NewTime(t0.Add(-24 * time.Hour)), Annotations: map[string]string{snapshot.AnnotationPodGroups: "ml/train"}},
			Status: apisv1.NodeClaimStatus{NodeName: "n2"}},
	}
	running := pod("w0", "n1")
	podsOn := func(n string) []*corev1.Pod {
		if n == "n1" {
			return []*corev1.Pod{running}
		}
		return nil
	}
	incomplete := map[string]time.Time{}
	if got := incompleteGangs([]solver.Gang{gang}, []*corev1.Pod{running, pod("w1", "n2")}, claims, podsOn, incomplete, t0, deadline); len(got) != 0 || len(incomplete) != 0 {
		t.Fatalf("a complete gang: released %v, remembered %v", got, incomplete)
	}
	lost := []*corev1.Pod{running, pod("w1", "")}
	if got := incompleteGangs([]solver.Gang{gang}, lost, claims, podsOn, incomplete, t0.Add(time.Minute), deadline); len(got) != 0 {
		t.Fatalf("a gang that just lost a worker is released: %+v", got)
	}
	got := incompleteGangs([]solver.Gang{gang}, lost, claims, podsOn, incomplete, t0.Add(11*time.Minute+time.Second), deadline)
	if len(got) != 1 || len(got[0].claims) != 1 || got[0].claims[0].Name != "c2" || !slices.Equal(got[0].kept, []string{"c1"}) {
		t.Fatalf("after the deadline: %+v, want c2 released and c1 (running a pod) kept", got)
	}
	if incompleteGangs(nil, lost, claims, podsOn, incomplete, t0.Add(12*time.Minute), deadline); len(incomplete) != 0 {
		t.Errorf("a gang that is gone is remembered: %v", incomplete)
	}
}

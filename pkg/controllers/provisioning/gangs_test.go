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
			got := incompleteGangs([]solver.Gang{gang}, tc.pods, tc.claims, podsOn, t0, deadline)
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

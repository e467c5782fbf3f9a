package snapshot

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

func TestNodeClaimRecordsMinValuesAndTheirRelaxation(t *testing.T) {
	np := &apisv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	cpu := scheduling.MustRequirement(apisv1.LabelInstanceCPU, corev1.NodeSelectorOpGt, "48")
	cpu.MinValues = 2
	for _, relaxed := range []bool{false, true} {
		c := &solver.Claim{NodePool: "default", Requirements: scheduling.NewRequirements(cpu), MinValuesRelaxed: relaxed}
		nc := NodeClaim(c, np)
		want := map[bool]string{false: "false", true: "true"}[relaxed]
		if got := nc.Annotations[apisv1.NodeClaimMinValuesRelaxedAnnotationKey]; got != want {
			t.Errorf("relaxed=%v: annotation %q, want %q", relaxed, got, want)
		}
		found := false
		for _, r := range nc.Spec.Requirements {
			if r.Key == apisv1.LabelInstanceCPU {
				found = true
				if r.MinValues == nil || *r.MinValues != 2 {
					t.Errorf("instance-cpu %s requirement lost its minValues: %v", r.Operator, r.MinValues)
				}
			}
		}
		if !found {
			t.Errorf("no instance-cpu requirement in %v", nc.Spec.Requirements)
		}
	}
}

func TestZoneBalanceAnnotation(t *testing.T) {
	for v, want := range map[string]int{"1": 1, " 3 ": 3} {
		np := &apisv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{AnnotationZoneBalanceMaxSkew: v}}}
		sp, err := NodePool(np, nil, Usage{})
		if err != nil || sp.ZoneMaxSkew != want {
			t.Errorf("%q: skew %d, %v; want %d", v, sp.ZoneMaxSkew, err, want)
		}
	}
	for _, v := range []string{"0", "-1", "one", "", "1.5", "99999999999999999999"} {
		np := &apisv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{AnnotationZoneBalanceMaxSkew: v}}}
		if _, err := NodePool(np, nil, Usage{}); err == nil || !strings.Contains(err.Error(), AnnotationZoneBalanceMaxSkew) {
			t.Errorf("%q: error %v; want one naming the annotation", v, err)
		}
	}
}

// TestNodeClaimNamesItsPodGroups: a claim bought for pods of PodGroups names them, once each,
// sorted; one without such pods has no annotation.
func TestNodeClaimNamesItsPodGroups(t *testing.T) {
	np := &apisv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	member := func(ns, group string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"}}
		if group != "" {
			p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &group}
		}
		return p
	}
	c := &solver.Claim{NodePool: "default", Pods: []*corev1.Pod{member("b", "train"), member("a", "tune"), member("b", "train"), member("a", "")}}
	if got := NodeClaim(c, np).Annotations[AnnotationPodGroups]; got != "a/tune,b/train" {
		t.Errorf("annotation %q, want a/tune,b/train", got)
	}
	c.Pods = []*corev1.Pod{member("a", "")}
	if got, ok := NodeClaim(c, np).Annotations[AnnotationPodGroups]; ok {
		t.Errorf("annotation %q on a claim without PodGroups", got)
	}
}

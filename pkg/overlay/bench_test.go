package overlay_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/apis/v1alpha1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/overlay"
)

// benchInput is a cluster's worth of overlays over the whole us-east-1 catalog: five NodePools
// (general, spot, GPU by label, two teams by template label) and 24 overlays written the way
// users write them: family surcharges and discounts, a spot premium, per-team prices, GPU
// capacity, hugepages on memory families, a few by weight over the others.
func benchInput(b *testing.B) ([]*v1alpha1.NodeOverlay, []overlay.Pool) {
	cat, err := catalog.Load("us-east-1")
	if err != nil {
		b.Fatal(err)
	}
	var pools []overlay.Pool
	for i, name := range []string{"general", "spot", "gpu", "team-a", "team-b"} {
		p := pool(name, map[string]string{"team": fmt.Sprintf("t%d", i%3)}, cat.Types)
		pools = append(pools, p)
	}
	var os []ov
	families := []string{"m5", "c5", "r5", "m6i", "c6i", "r6i", "m7i", "c7g", "g5", "p4d", "g6", "inf2"}
	for i, f := range families {
		o := ov{name: "family-" + f, weight: int32(1 + i%3), reqs: []v1alpha1.NodeSelectorRequirement{req(apisv1.LabelInstanceFamily, corev1.NodeSelectorOpIn, f)}}
		if i%2 == 0 {
			o.adj = "-12%"
		} else {
			o.adj = "+0.02"
		}
		os = append(os, o)
	}
	os = append(os,
		ov{name: "spot-premium", weight: 5, reqs: []v1alpha1.NodeSelectorRequirement{req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "spot")}, adj: "+10%"},
		ov{name: "team-a", weight: 20, reqs: []v1alpha1.NodeSelectorRequirement{req(apisv1.NodePoolLabelKey, corev1.NodeSelectorOpIn, "team-a"), req("karpenter.k8s.aws/instance-cpu", corev1.NodeSelectorOpGt, "15")}, price: "1.5"},
		ov{name: "team-t1", weight: 15, reqs: []v1alpha1.NodeSelectorRequirement{req("team", corev1.NodeSelectorOpIn, "t1")}, adj: "-5%"},
		ov{name: "gpu-slices", reqs: []v1alpha1.NodeSelectorRequirement{req("karpenter.k8s.aws/instance-gpu-count", corev1.NodeSelectorOpExists)}, capacity: corev1.ResourceList{"nvidia.com/gpu.shared": resource.MustParse("8")}},
		ov{name: "hugepages", reqs: []v1alpha1.NodeSelectorRequirement{req(apisv1.LabelInstanceFamily, corev1.NodeSelectorOpIn, "r5", "r6i", "x2idn")}, capacity: corev1.ResourceList{"hugepages-2Mi": resource.MustParse("2Gi")}},
	)
	for i := range 7 {
		os = append(os, ov{name: fmt.Sprintf("zone-%d", i), weight: 30, reqs: []v1alpha1.NodeSelectorRequirement{
			req(apisv1.LabelZone, corev1.NodeSelectorOpIn, fmt.Sprintf("us-east-1%c", 'a'+i)), req(apisv1.LabelInstanceFamily, corev1.NodeSelectorOpIn, families[i])}, adj: "-1%"})
	}
	return objects(os...), pools
}

// BenchmarkEvaluate is the controller's evaluation on a change of any overlay or NodePool.
func BenchmarkEvaluate(b *testing.B) {
	os, pools := benchInput(b)
	b.ReportAllocs()
	for b.Loop() {
		if e := overlay.Evaluate(os, pools); len(e.Applied) == 0 {
			b.Fatal("nothing applied")
		}
	}
}

// BenchmarkApply is what every GetInstanceTypes of one NodePool adds with those overlays.
func BenchmarkApply(b *testing.B) {
	os, pools := benchInput(b)
	e := overlay.Evaluate(os, pools)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Apply("team-a", pools[3].Types); err != nil {
			b.Fatal(err)
		}
	}
}

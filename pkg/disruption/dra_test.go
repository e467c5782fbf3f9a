package disruption

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tenon-sh/tenon/pkg/dra"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// TestConsolidationMovesPodsWithTemplateClaims: two 4-GPU nodes each run one pod holding one
// GPU through a claim generated from a template; resolved as the simulation moves them (the
// replacement pod gets a claim of its own), both pods fit on one node and the other is deleted.
// A pod whose named claim is allocated on its node is pinned there: its node is not deleted.
func TestConsolidationMovesPodsWithTemplateClaims(t *testing.T) {
	class := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu.nvidia.com"}, Spec: resourcev1.DeviceClassSpec{
		Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "gpu.nvidia.com"`}}},
	}}
	spec := resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
		{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.nvidia.com"}},
	}}}
	tmpl := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: "one-gpu", Namespace: "default"}, Spec: resourcev1.ResourceClaimTemplateSpec{Spec: spec}}
	allocatedOn := func(name, node string) *resourcev1.ResourceClaim {
		return &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: spec,
			Status: resourcev1.ResourceClaimStatus{Allocation: &resourcev1.AllocationResult{
				Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{{Request: "gpu", Driver: dra.DriverNVIDIA, Pool: node, Device: "gpu-0"}}},
				NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
					{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}},
			}}}
	}
	fromTemplate := func(p *corev1.Pod, generated string) *corev1.Pod {
		p.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("one-gpu")}}
		p.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: ptr.To(generated)}}
		return p
	}
	named := func(p *corev1.Pod, claim string) *corev1.Pod {
		p.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To(claim)}}
		return p
	}

	for _, tc := range []struct {
		name    string
		pinned  bool
		deleted int
	}{{"template claims move", false, 1}, {"named claims pin", true, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			w := newFixture(t)
			w.pool("gpu", append(families("g5"), onDemandOnly()))
			pa, pb := pod("2", "8Gi"), pod("2", "8Gi")
			var claims []*resourcev1.ResourceClaim
			if tc.pinned {
				pa, pb = named(pa, "a"), named(pb, "b")
			} else {
				pa, pb = fromTemplate(pa, "pa-gpu"), fromTemplate(pb, "pb-gpu")
			}
			a := w.node("gpu", "g5.12xlarge", "us-east-1a", "on-demand", pa)
			b := w.node("gpu", "g5.12xlarge", "us-east-1a", "on-demand", pb)
			if tc.pinned {
				claims = []*resourcev1.ResourceClaim{allocatedOn("a", a.Name), allocatedOn("b", b.Name)}
			} else {
				claims = []*resourcev1.ResourceClaim{allocatedOn("pa-gpu", a.Name), allocatedOn("pb-gpu", b.Name)}
			}
			s := w.snapshot()
			// As the controller's snapshot does: each node's GPUs less its allocated claims, and
			// the running pods resolved as the simulation moves them.
			for i := range s.Solver.Nodes {
				s.Solver.Nodes[i].Allocatable[scheduling.NvidiaGPU]--
			}
			r := dra.NewResolver(dra.Objects{DeviceClasses: []*resourcev1.DeviceClass{class}, ResourceClaims: claims, Templates: []*resourcev1.ResourceClaimTemplate{tmpl}})
			s.Solver.Devices = r.ResolveMoving([]*corev1.Pod{pa, pb}, dra.PoolTypes(s.Solver.NodePools))
			d := decide(t, s, Options{})
			deleted := 0
			for _, c := range d.Commands {
				if c.Action == ActionDelete {
					deleted += len(c.Candidates)
				}
			}
			if deleted != tc.deleted {
				t.Fatalf("%d nodes deleted, want %d: %+v (skips %+v)", deleted, tc.deleted, d.Commands, d.Skips)
			}
		})
	}
}

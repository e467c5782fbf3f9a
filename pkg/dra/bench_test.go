package dra

import (
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// draWorkload returns n GPU pods of varied CPU and memory, each with one claim from a handful
// of templates written the way users write them (a count of any GPU, a product, a memory floor,
// a compute capability, first-available alternatives), and the templates. With plugin set the
// same pods ask for the same number of GPUs through nvidia.com/gpu instead, with a required
// node affinity to the instance types their claim allows (the same problem, posed without DRA).
func draWorkload(b *testing.B, n int, plugin bool) ([]*corev1.Pod, []*resourcev1.ResourceClaimTemplate) {
	templates := []*resourcev1.ResourceClaimTemplate{
		template("any-1", exactly("gpu", "gpu.nvidia.com", "", 1)),
		template("any-4", exactly("gpu", "gpu.nvidia.com", "", 4)),
		template("a10g-1", exactly("gpu", "gpu.nvidia.com", `device.attributes["gpu.nvidia.com"].productName == "NVIDIA A10G"`, 1)),
		template("mem24-2", exactly("gpu", "gpu.nvidia.com", `device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("24Gi")) >= 0`, 2)),
		template("mem40-8", exactly("gpu", "gpu.nvidia.com", `device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0`, 8)),
		template("hopper-8", exactly("gpu", "gpu.nvidia.com", `device.attributes["gpu.nvidia.com"].cudaComputeCapability.isGreaterThan(semver("8.9.0"))`, 8)),
		template("l-or-any", resourcev1.DeviceRequest{Name: "gpu", FirstAvailable: []resourcev1.DeviceSubRequest{
			{Name: "l", DeviceClassName: "gpu.nvidia.com", Selectors: sel(`device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA L")`), Count: 1},
			{Name: "any", DeviceClassName: "gpu.nvidia.com", Count: 1},
		}}),
	}
	counts := map[string]int64{"any-1": 1, "any-4": 4, "a10g-1": 1, "mem24-2": 2, "mem40-8": 8, "hopper-8": 8, "l-or-any": 1} // for the pods' CPU and memory
	r := rand.New(rand.NewPCG(11, 0))
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		tm := templates[r.IntN(len(templates))]
		g := counts[tm.Name]
		p := claimPod(fmt.Sprintf("p%d", i), fromTemplate("gpu", tm.Name))
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(500+r.IntN(3500))*g, resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(int64(1+r.IntN(15))*g<<30, resource.BinarySI),
		}
		pods[i] = p
	}
	if !plugin {
		return pods, templates
	}
	pools := gpuPools(b)
	needs := NewResolver(Objects{DeviceClasses: []*resourcev1.DeviceClass{gpuClass}, Templates: templates}).Resolve(pods, PoolTypes(pools))
	for _, p := range pods {
		need := needs[p]
		if need.Reason != nil {
			b.Fatalf("pod %s: %s", p.Name, need.Reason)
		}
		p.Spec.ResourceClaims = nil
		p.Spec.Containers[0].Resources.Requests[scheduling.ResourceNvidiaGPU] = *resource.NewQuantity(need.Count, resource.DecimalSI)
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: need.Requirements.NodeSelectorRequirements()}},
		}}}
	}
	return pods, templates
}

// BenchmarkSolveDRA: 5,000 GPU pods with claims (resolving them against the catalog's devices
// is timed too) against the same pods asking for nvidia.com/gpu directly. In "generated" each
// pod's claim exists already, generated from its template as kube-controller-manager does
// before kube-scheduler sees the pod (the controller's usual case): 5,000 claims read.
func BenchmarkSolveDRA(b *testing.B) {
	pools := gpuPools(b)
	its := PoolTypes(pools)
	for _, mode := range []string{"claims", "generated", "plugin"} {
		b.Run(fmt.Sprintf("pods=5000/%s", mode), func(b *testing.B) {
			pods, templates := draWorkload(b, 5000, mode == "plugin")
			var claims []*resourcev1.ResourceClaim
			if mode == "generated" {
				byName := map[string]*resourcev1.ResourceClaimTemplate{}
				for _, t := range templates {
					byName[t.Name] = t
				}
				for _, p := range pods {
					name := p.Name + "-gpu"
					claims = append(claims, &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: p.Namespace},
						Spec: byName[*p.Spec.ResourceClaims[0].ResourceClaimTemplateName].Spec.Spec})
					p.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: &name}}
				}
			}
			b.ReportAllocs()
			var plan *solver.Plan
			for b.Loop() {
				snap := &solver.Snapshot{NodePools: pools, Pods: pods}
				if mode != "plugin" {
					snap.Devices = NewResolver(Objects{DeviceClasses: []*resourcev1.DeviceClass{gpuClass}, ResourceClaims: claims, Templates: templates}).Resolve(pods, its)
				}
				var err error
				if plan, err = solver.Solve(snap, solver.Options{SkipBound: true}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(plan.Price, "$/h")
			b.ReportMetric(float64(len(plan.Claims)), "nodes")
			b.ReportMetric(float64(len(plan.Unschedulable)), "unschedulable")
		})
	}
}

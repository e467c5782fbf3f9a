package dra

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/tenon-sh/tenon/pkg/solver"
)

// FuzzResolve: any selector text, count, allocation mode and class name resolves without a
// panic, to a need that either has a reason or counts no more GPUs than some allowed type has
// and allows only types with GPUs (unless it takes none); and the need plans without error.
func FuzzResolve(f *testing.F) {
	f.Add(`device.driver == "gpu.nvidia.com"`, int64(1), "", "gpu.nvidia.com", false)
	f.Add(`device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0`, int64(2), "ExactCount", "gpu.nvidia.com", false)
	f.Add(`device.attributes["gpu.nvidia.com"].cudaComputeCapability.isGreaterThan(semver("8.0.0"))`, int64(8), "", "gpu.nvidia.com", true)
	f.Add(`device.attributes["gpu.nvidia.com"].uuid == "x"`, int64(1), "All", "other", false)
	f.Add(`1 +`, int64(-3), "Some", "", false)
	f.Add("\x00\xff", int64(1<<62), "", "gpu.nvidia.com", false)
	pools := gpuPools(f)
	its := PoolTypes(pools)
	f.Fuzz(func(t *testing.T, expr string, count int64, mode, class string, admin bool) {
		classes := []*resourcev1.DeviceClass{gpuClass}
		req := resourcev1.DeviceRequest{Name: "r", Exactly: &resourcev1.ExactDeviceRequest{
			DeviceClassName: class, Selectors: sel(expr), Count: count,
			AllocationMode: resourcev1.DeviceAllocationMode(mode), AdminAccess: &admin,
		}}
		r := NewResolver(Objects{DeviceClasses: classes, Templates: []*resourcev1.ResourceClaimTemplate{template("t", req)}})
		pod := claimPod("p", fromTemplate("c", "t"))
		need := r.Resolve([]*corev1.Pod{pod}, its)[pod]
		if need == nil {
			t.Fatal("no need")
		}
		if need.Reason != nil {
			if need.Reason.Kind != solver.ReasonDevices || strings.TrimSpace(need.Reason.Detail) == "" {
				t.Fatalf("reason %+v", need.Reason)
			}
			return
		}
		if need.Count < 0 || need.Count > 8 {
			t.Fatalf("need of %d devices", need.Count)
		}
		snap := &solver.Snapshot{NodePools: pools, Pods: []*corev1.Pod{pod}, Devices: map[*corev1.Pod]*solver.DeviceNeed{pod: need}}
		plan, err := solver.Solve(snap, solver.Options{SkipBound: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := solver.Verify(snap, plan); err != nil {
			t.Fatal(err)
		}
	})
}

package dra

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// gpuPools are a GPU NodePool (categories g and p, on-demand), a general one (c, m, r), and
// one of the p types with their GPUs in MIG layout all-1g.10gb.
func gpuPools(t testing.TB) []solver.NodePool {
	its := awsTypes(t)
	pool := func(name string, cats ...string) solver.NodePool {
		return solver.NodePool{Name: name, InstanceTypes: its, NodeLimit: -1, Requirements: scheduling.NewRequirements(
			scheduling.In(apisv1.LabelInstanceCategory, cats...),
			scheduling.In(apisv1.CapacityTypeLabelKey, apisv1.CapacityTypeOnDemand),
		)}
	}
	mig := pool("mig", "p")
	var err error
	if mig.InstanceTypes, err = catalog.PartitionAll(its, "all-1g.10gb"); err != nil {
		t.Fatal(err)
	}
	mig.Labels = map[string]string{catalog.LabelMIGConfig: "all-1g.10gb"}
	return []solver.NodePool{pool("gpu", "g", "p"), pool("general", "c", "m", "r"), mig}
}

// planWithOneUnservable plans the pods, their claims resolved by r, checks the plan is valid
// and that the unservable pod alone is unschedulable, for its devices, and returns the plan.
func planWithOneUnservable(t *testing.T, pools []solver.NodePool, pods []*corev1.Pod, r *Resolver, unservable *corev1.Pod) *solver.Plan {
	t.Helper()
	snap := &solver.Snapshot{NodePools: pools, Pods: pods, Devices: r.Resolve(pods, PoolTypes(pools))}
	plan, err := solver.Solve(snap, solver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := solver.Verify(snap, plan); err != nil {
		t.Fatal(err)
	}
	if len(plan.Unschedulable) != 1 || plan.Unschedulable[0].Pod != unservable || plan.Unschedulable[0].Reasons[0].Kind != solver.ReasonDevices {
		t.Fatalf("unschedulable %+v, want only pod %s for its devices", plan.Unschedulable, unservable.Name)
	}
	return plan
}

// TestPlanServesClaims: pods whose claims ask for two GPUs of at least 40 GiB get nodes whose
// GPUs match, the devices counted so that four such pods share one eight-GPU node; a pod with
// a claim no type can serve is unschedulable with the reason; a pod asking for a GPU through
// the device plugin and one through a claim take the same node's GPUs.
func TestPlanServesClaims(t *testing.T) {
	pools := gpuPools(t)
	big := template("big", exactly("gpu", "gpu.nvidia.com", `device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0`, 2))
	nope := template("nope", exactly("gpu", "gpu.nvidia.com", `device.attributes["gpu.nvidia.com"].productName == "NVIDIA GB300"`, 1))
	r := NewResolver(Objects{DeviceClasses: []*resourcev1.DeviceClass{gpuClass}, Templates: []*resourcev1.ResourceClaimTemplate{big, nope}})
	var pods []*corev1.Pod
	for i := range 4 {
		pods = append(pods, claimPod(fmt.Sprintf("big-%d", i), fromTemplate("gpu", "big")))
	}
	unservable := claimPod("nope", fromTemplate("gpu", "nope"))
	pods = append(pods, unservable)
	plan := planWithOneUnservable(t, pools, pods, r, unservable)
	gpus := int64(0)
	for _, c := range plan.Claims {
		d, ok := DevicesOf(c.InstanceType)
		mem := d.Capacity["memory"].Value
		if !ok || mem.Cmp(resource.MustParse("40Gi")) < 0 {
			t.Errorf("claim %s on %s: GPUs %v with %s, want GPUs of at least 40 GiB", c.Hostname, c.InstanceType.Name, ok, mem.String())
		}
		gpus += d.Count
	}
	if gpus > 8 {
		t.Errorf("the plan buys %d GPUs for 8 claimed: %+v", gpus, plan.Claims)
	}
	t.Logf("plan: %d claims, $%.2f/h, %s", len(plan.Claims), plan.Price, plan.Claims[0].InstanceType.Name)

	// A device-plugin GPU and a claimed GPU take the same node's GPUs.
	plugin := claimPod("plugin")
	plugin.Spec.ResourceClaims = nil
	plugin.Spec.Containers[0].Resources.Requests[scheduling.ResourceNvidiaGPU] = resource.MustParse("1")
	single := template("one", exactly("gpu", "gpu.nvidia.com", `device.attributes["gpu.nvidia.com"].productName == "NVIDIA A10G"`, 1))
	r = NewResolver(Objects{DeviceClasses: []*resourcev1.DeviceClass{gpuClass}, Templates: []*resourcev1.ResourceClaimTemplate{single}})
	claimed := claimPod("claimed", fromTemplate("gpu", "one"))
	two := []*corev1.Pod{plugin, claimed}
	snap := &solver.Snapshot{NodePools: pools[:1], Pods: two, Devices: r.Resolve(two, pools[0].InstanceTypes)}
	snap.NodePools[0].Requirements = snap.NodePools[0].Requirements.Add(scheduling.In(apisv1.LabelInstanceFamily, "g5"))
	plan, err := solver.Solve(snap, solver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := solver.Verify(snap, plan); err != nil {
		t.Fatal(err)
	}
	for _, c := range plan.Claims {
		if d, _ := DevicesOf(c.InstanceType); d.Count < int64(len(c.Pods)) {
			t.Errorf("claim on %s (%d GPUs) holds %d GPU pods", c.InstanceType.Name, d.Count, len(c.Pods))
		}
	}
}

// TestPlanServesMIGProfiles: a claim for a MIG profile lands on a type of the NodePool whose
// GPUs are in that profile's layout, the instances counted so that a node holds at most as
// many such pods as it has instances, at the bound's price (one p4d.24xlarge's 32 slices, not
// four p5.4xlarge's 7: the merge repair); a device-plugin request for the profile's resource lands
// there too; a claim for a whole H100 does not; a profile no NodePool's layout has is
// unschedulable with the reason.
func TestPlanServesMIGProfiles(t *testing.T) {
	pools := gpuPools(t)
	slice := template("slice", exactly("mig", "mig.nvidia.com", `device.attributes["gpu.nvidia.com"].profile == "1g.10gb"`, 1))
	whole := template("whole", exactly("gpu", "gpu.nvidia.com", `device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"`, 1))
	other := template("other", exactly("mig", "mig.nvidia.com", `device.attributes["gpu.nvidia.com"].profile == "3g.40gb"`, 1))
	r := NewResolver(Objects{DeviceClasses: []*resourcev1.DeviceClass{gpuClass, migClass}, Templates: []*resourcev1.ResourceClaimTemplate{slice, whole, other}})
	var pods []*corev1.Pod
	for i := range 20 {
		pods = append(pods, claimPod(fmt.Sprintf("slice-%d", i), fromTemplate("mig", "slice")))
	}
	plugin := claimPod("plugin")
	plugin.Spec.ResourceClaims = nil
	plugin.Spec.Containers[0].Resources.Requests["nvidia.com/mig-1g.10gb"] = resource.MustParse("2")
	h100 := claimPod("h100", fromTemplate("gpu", "whole"))
	unservable := claimPod("other", fromTemplate("mig", "other"))
	pods = append(pods, plugin, h100, unservable)
	plan := planWithOneUnservable(t, pools, pods, r, unservable)
	t.Logf("reason: %s", plan.Unschedulable[0].Reasons[0])
	instances := int64(0)
	for _, c := range plan.Claims {
		mig := c.InstanceType.Shape.MIG
		for _, p := range c.Pods {
			switch {
			case p == h100 && (mig != nil || c.InstanceType.Shape.GPUName != "h100"):
				t.Errorf("pod h100 on %s (MIG %v), want a whole H100", c.InstanceType.Name, mig)
			case p != h100 && (mig == nil || mig.Profile != "1g.10gb" || c.NodePool != "mig"):
				t.Errorf("pod %s on %s of pool %s (MIG %v), want a 1g.10gb instance", p.Name, c.InstanceType.Name, c.NodePool, mig)
			}
		}
		if mig != nil {
			d, _ := DevicesOf(c.InstanceType)
			if int64(len(c.Pods)) > d.Count {
				t.Errorf("claim on %s holds %d pods for %d instances", c.InstanceType.Name, len(c.Pods), d.Count)
			}
			instances += d.Count
		}
	}
	if plan.Price > plan.LowerBound*1.01 {
		t.Errorf("the plan buys %d MIG instances for 22 at $%.2f/h, bound $%.2f/h", instances, plan.Price, plan.LowerBound)
	}
	t.Logf("plan: %d claims, $%.2f/h, bound $%.2f (%+v), guide %+v", len(plan.Claims), plan.Price, plan.LowerBound, plan.Bound, plan.Guide)
	for _, c := range plan.Claims {
		t.Logf("  %s: %d pods", c.InstanceType.Name, len(c.Pods))
	}
}

// selectors are CEL selectors the way users write them for NVIDIA GPUs.
var selectors = []string{
	"",
	`device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"`,
	`device.attributes["gpu.nvidia.com"].productName == "NVIDIA A10G"`,
	`device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA L")`,
	`device.attributes["gpu.nvidia.com"].architecture == "Ampere"`,
	`device.attributes["gpu.nvidia.com"].cudaComputeCapability.isGreaterThan(semver("8.5.0"))`,
	`device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("24Gi")) >= 0`,
	`device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0`,
	`device.attributes["gpu.nvidia.com"].brand == "Nvidia" && device.attributes["gpu.nvidia.com"].type == "gpu"`,
	`device.attributes["gpu.nvidia.com"].productName == "Tesla T4"`,
	`device.attributes["gpu.nvidia.com"].type == "mig"`,
	`device.attributes["gpu.nvidia.com"].profile == "1g.10gb" && device.attributes["gpu.nvidia.com"].architecture == "Hopper"`,
}

// TestPropertyNoDeviceTakenTwice: on random pods with claims (random selectors, counts,
// allocation mode All, first available alternatives, several claims per pod, whole GPUs and
// MIG instances) and device-plugin GPU pods, every plan is
// valid, no node holds more GPUs than its type has, and every pod with claims sits on a type
// (at every launch option) whose devices its claims' selectors accept in the count it takes.
func TestPropertyNoDeviceTakenTwice(t *testing.T) {
	pools := gpuPools(t)
	its := PoolTypes(pools)
	rapid.Check(t, func(t *rapid.T) {
		var templates []*resourcev1.ResourceClaimTemplate
		for i := range rapid.IntRange(1, 4).Draw(t, "templates") {
			var reqs []resourcev1.DeviceRequest
			for j := range rapid.IntRange(1, 2).Draw(t, "requests") {
				name := fmt.Sprintf("r%d", j)
				if rapid.IntRange(0, 3).Draw(t, "firstAvailable") == 0 {
					var subs []resourcev1.DeviceSubRequest
					for k := range rapid.IntRange(1, 3).Draw(t, "subs") {
						subs = append(subs, resourcev1.DeviceSubRequest{Name: fmt.Sprintf("s%d", k), DeviceClassName: "gpu.nvidia.com",
							Selectors: sel(rapid.SampledFrom(selectors).Draw(t, "subSelector")), Count: int64(rapid.IntRange(1, 8).Draw(t, "subCount"))})
					}
					reqs = append(reqs, resourcev1.DeviceRequest{Name: name, FirstAvailable: subs})
					continue
				}
				class := rapid.SampledFrom([]string{"gpu.nvidia.com", "mig.nvidia.com"}).Draw(t, "class")
				req := exactly(name, class, rapid.SampledFrom(selectors).Draw(t, "selector"), int64(rapid.IntRange(1, 4).Draw(t, "count")))
				if rapid.IntRange(0, 5).Draw(t, "all") == 0 {
					req.Exactly.AllocationMode, req.Exactly.Count = resourcev1.DeviceAllocationModeAll, 0
				}
				reqs = append(reqs, req)
			}
			templates = append(templates, template(fmt.Sprintf("t%d", i), reqs...))
		}
		var pods []*corev1.Pod
		for i := range rapid.IntRange(1, 24).Draw(t, "pods") {
			p := claimPod(fmt.Sprintf("p%d", i))
			p.Spec.ResourceClaims = nil
			for j := range rapid.IntRange(0, 2).Draw(t, "claims") {
				p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, fromTemplate(fmt.Sprintf("c%d", j), rapid.SampledFrom(templates).Draw(t, "template").Name))
			}
			if len(p.Spec.ResourceClaims) == 0 {
				p.Spec.Containers[0].Resources.Requests[scheduling.ResourceNvidiaGPU] = *resource.NewQuantity(int64(rapid.IntRange(0, 4).Draw(t, "pluginGPUs")), resource.DecimalSI)
				p.Spec.Tolerations = nil
			}
			pods = append(pods, p)
		}
		r := NewResolver(Objects{DeviceClasses: []*resourcev1.DeviceClass{gpuClass, migClass}, Templates: templates})
		snap := &solver.Snapshot{NodePools: pools, Pods: pods, Devices: r.Resolve(pods, its)}
		plan, err := solver.Solve(snap, solver.Options{SkipBound: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := solver.Verify(snap, plan); err != nil {
			t.Fatal(err)
		}
		for _, c := range plan.Claims {
			for _, it := range c.InstanceTypes {
				// Device-plugin GPUs and DRA devices alike, counted as whole GPUs or MIG instances.
				slot := scheduling.NvidiaGPU
				d, ok := DevicesOf(it)
				if ok {
					slot, _ = scheduling.ResourceIndex(d.Resource)
				}
				gpus := it.Capacity[slot]
				if ok && d.Count != gpus {
					t.Fatalf("%s publishes %d devices for %d %s", it.Name, d.Count, gpus, d.Resource)
				}
				taken := int64(0)
				for _, p := range c.Pods {
					req, _ := scheduling.PodRequests(p)
					taken += req[slot]
					if len(p.Spec.ResourceClaims) == 0 {
						continue
					}
					// The pod's claims, resolved against this type alone, take what the plan counted.
					alone := NewResolver(Objects{DeviceClasses: []*resourcev1.DeviceClass{gpuClass, migClass}, Templates: templates}).Resolve([]*corev1.Pod{p}, []*catalog.InstanceType{it})[p]
					if alone.Reason != nil || alone.Count != snap.Devices[p].Count {
						t.Fatalf("pod %s on %s: its claims there give %+v, the plan counted %d", p.Name, it.Name, alone, snap.Devices[p].Count)
					}
					taken += alone.Count
				}
				if taken > gpus {
					t.Fatalf("claim on %s takes %d GPUs of %d", it.Name, taken, gpus)
				}
			}
		}
	})
}

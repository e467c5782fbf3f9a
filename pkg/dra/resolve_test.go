package dra

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

var (
	awsOnce sync.Once
	awsCat  *catalog.Catalog
	awsErr  error
)

func awsTypes(t testing.TB) []*catalog.InstanceType {
	t.Helper()
	awsOnce.Do(func() { awsCat, awsErr = catalog.Load("us-east-1") })
	if awsErr != nil {
		t.Fatal(awsErr)
	}
	return awsCat.Types
}

func awsType(t testing.TB, name string) *catalog.InstanceType {
	t.Helper()
	awsTypes(t)
	it, ok := awsCat.Get(name)
	if !ok {
		t.Fatalf("no instance type %s", name)
	}
	return it
}

// gpuClass is the DeviceClass NVIDIA's driver installs for whole GPUs.
var gpuClass = &resourcev1.DeviceClass{
	ObjectMeta: metav1.ObjectMeta{Name: "gpu.nvidia.com"},
	Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{
		{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu"`}},
	}},
}

// migClass is the DeviceClass NVIDIA's driver installs for MIG instances.
var migClass = &resourcev1.DeviceClass{
	ObjectMeta: metav1.ObjectMeta{Name: "mig.nvidia.com"},
	Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{
		{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "mig"`}},
	}},
}

func sel(expr string) []resourcev1.DeviceSelector {
	if expr == "" {
		return nil
	}
	return []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: expr}}}
}

func exactly(name, class, expr string, count int64) resourcev1.DeviceRequest {
	return resourcev1.DeviceRequest{Name: name, Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class, Selectors: sel(expr), Count: count}}
}

func template(name string, reqs ...resourcev1.DeviceRequest) *resourcev1.ResourceClaimTemplate {
	return &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: reqs}}},
	}
}

func claimPod(name string, claims ...corev1.PodResourceClaim) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			Containers:     []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: *mustQty("1")}}}},
			ResourceClaims: claims,
		},
	}
}

func fromTemplate(name, tmpl string) corev1.PodResourceClaim {
	return corev1.PodResourceClaim{Name: name, ResourceClaimTemplateName: ptr.To(tmpl)}
}

func fromClaim(name, claim string) corev1.PodResourceClaim {
	return corev1.PodResourceClaim{Name: name, ResourceClaimName: ptr.To(claim)}
}

// typeNames returns the instance types a need allows, sorted.
func typeNames(t *testing.T, need *solver.DeviceNeed) []string {
	t.Helper()
	r, ok := need.Requirements.Get(apisv1.LabelInstanceType)
	if !ok {
		t.Fatalf("need %+v has no instance-type requirement", need)
	}
	out := slices.Clone(r.Values())
	slices.Sort(out)
	return out
}

func TestDevicesOfInstanceTypes(t *testing.T) {
	for _, tc := range []struct {
		typ, product, memory string
		count                int64
	}{
		{"p4d.24xlarge", "NVIDIA A100-SXM4-40GB", "40Gi", 8},
		{"p4de.24xlarge", "NVIDIA A100-SXM4-80GB", "80Gi", 8},
		{"p5.48xlarge", "NVIDIA H100 80GB HBM3", "80Gi", 8},
		{"g5.xlarge", "NVIDIA A10G", "22888Mi", 1},
		{"g4dn.12xlarge", "Tesla T4", "16Gi", 4},
		{"p3dn.24xlarge", "Tesla V100-SXM2-32GB", "32Gi", 8},
		{"p3.2xlarge", "Tesla V100-SXM2-16GB", "16Gi", 1},
		{"m5.large", "", "", 0},
		{"g6f.large", "", "", 0},   // a fraction of an L4: no whole device
		{"inf2.xlarge", "", "", 0}, // Neuron devices are not modelled
		{"p5.48xlarge/all-1g.10gb", "NVIDIA H100 80GB HBM3", "10Gi", 56},
		{"p4d.24xlarge/all-1g.10gb", "NVIDIA A100-SXM4-40GB", "10Gi", 32},
		{"p4d.24xlarge/all-3g.20gb", "NVIDIA A100-SXM4-40GB", "20Gi", 16},
		{"p5e.48xlarge/all-7g.141gb", "NVIDIA H200", "141Gi", 8},
	} {
		name, layout, _ := strings.Cut(tc.typ, "/")
		it, err := catalog.PartitionGPUs(awsType(t, name), layout)
		if err != nil {
			t.Fatal(err)
		}
		d, ok := DevicesOf(it)
		if ok != (tc.count > 0) {
			t.Errorf("%s: devices %v, want %v", tc.typ, ok, tc.count > 0)
			continue
		}
		if !ok {
			continue
		}
		if d.Count != tc.count || *d.Attributes["productName"].StringValue != tc.product || d.Driver != DriverNVIDIA {
			t.Errorf("%s: %d × %s of %s, want %d × %s", tc.typ, d.Count, *d.Attributes["productName"].StringValue, d.Driver, tc.count, tc.product)
		}
		if mem := d.Capacity["memory"].Value; mem.Cmp(*mustQty(tc.memory)) != 0 {
			t.Errorf("%s: memory %s, want %s", tc.typ, mem.String(), tc.memory)
		}
		if names := DeviceNames(it, d); int64(len(names)) != d.Count || len(names) != len(slices.Compact(slices.Sorted(slices.Values(names)))) {
			t.Errorf("%s: device names %v, want %d distinct", tc.typ, names, d.Count)
		}
		if mig := it.Shape.MIG; mig != nil && (*d.Attributes["type"].StringValue != "mig" || *d.Attributes["profile"].StringValue != mig.Profile || d.Resource != mig.Resource()) {
			t.Errorf("%s: %+v, want MIG instances of %s", tc.typ, d, mig.Profile)
		}
	}
}

func TestResolveClaims(t *testing.T) {
	its := awsTypes(t)
	memory40 := `device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0`
	h100 := `device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"`
	hopper := `device.attributes["gpu.nvidia.com"].cudaComputeCapability.isGreaterThan(semver("8.9.0"))`
	for _, tc := range []struct {
		name      string
		templates []*resourcev1.ResourceClaimTemplate
		claims    []corev1.PodResourceClaim
		count     int64
		types     []string // the allowed types, or a prefix of them when wantSome
		wantSome  []string
		excluded  []string
		reason    string // a substring of the reason, when the pod cannot be served
	}{
		{
			name:      "two GPUs of at least 40 GiB",
			templates: []*resourcev1.ResourceClaimTemplate{template("big", exactly("gpu", "gpu.nvidia.com", memory40, 2))},
			claims:    []corev1.PodResourceClaim{fromTemplate("gpu", "big")},
			count:     2,
			wantSome:  []string{"p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "g6e.12xlarge"},
			excluded:  []string{"g5.12xlarge", "g6e.xlarge", "g4dn.12xlarge", "m5.large"},
		},
		{
			name:      "one H100 by product name",
			templates: []*resourcev1.ResourceClaimTemplate{template("h100", exactly("gpu", "gpu.nvidia.com", h100, 0))},
			claims:    []corev1.PodResourceClaim{fromTemplate("gpu", "h100")},
			count:     1,
			types:     []string{"p5.48xlarge", "p5.4xlarge"},
		},
		{
			name:      "compute capability above 8.9",
			templates: []*resourcev1.ResourceClaimTemplate{template("hopper", exactly("gpu", "gpu.nvidia.com", hopper, 8))},
			claims:    []corev1.PodResourceClaim{fromTemplate("gpu", "hopper")},
			count:     8,
			wantSome:  []string{"p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge"},
			excluded:  []string{"p4d.24xlarge", "g6e.48xlarge"},
		},
		{
			name: "two claims add up on one node",
			templates: []*resourcev1.ResourceClaimTemplate{
				template("a", exactly("gpu", "gpu.nvidia.com", h100, 4)),
				template("b", exactly("gpu", "gpu.nvidia.com", "", 4)),
			},
			claims: []corev1.PodResourceClaim{fromTemplate("a", "a"), fromTemplate("b", "b")},
			count:  8,
			types:  []string{"p5.48xlarge"},
		},
		{
			name: "first available: eight H100s before four of anything",
			templates: []*resourcev1.ResourceClaimTemplate{template("fa", resourcev1.DeviceRequest{Name: "gpu", FirstAvailable: []resourcev1.DeviceSubRequest{
				{Name: "h100", DeviceClassName: "gpu.nvidia.com", Selectors: sel(h100), Count: 8},
				{Name: "any", DeviceClassName: "gpu.nvidia.com", Count: 4},
			}})},
			claims: []corev1.PodResourceClaim{fromTemplate("gpu", "fa")},
			count:  8,
			types:  []string{"p5.48xlarge"},
		},
		{
			name:      "no type has the product",
			templates: []*resourcev1.ResourceClaimTemplate{template("nope", exactly("gpu", "gpu.nvidia.com", `device.attributes["gpu.nvidia.com"].productName == "NVIDIA GB300"`, 1))},
			claims:    []corev1.PodResourceClaim{fromTemplate("gpu", "nope")},
			reason:    "no instance type the NodePools may launch has devices that satisfy them",
		},
		{
			name:   "missing template",
			claims: []corev1.PodResourceClaim{fromTemplate("gpu", "absent")},
			reason: "ResourceClaimTemplate default/absent of claim \"gpu\" not found",
		},
		{
			name:      "missing device class",
			templates: []*resourcev1.ResourceClaimTemplate{template("t", exactly("gpu", "mig.nvidia.com", "", 1))},
			claims:    []corev1.PodResourceClaim{fromTemplate("gpu", "t")},
			reason:    `DeviceClass "mig.nvidia.com" not found`,
		},
		{
			// All takes every H100 of the node: as many as the type has. Of the types that
			// serve it, the cheapest's count wins (one p5.4xlarge GPU, not eight of a p5.48xlarge).
			name: "allocation mode All",
			templates: []*resourcev1.ResourceClaimTemplate{template("all", resourcev1.DeviceRequest{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{
				DeviceClassName: "gpu.nvidia.com", AllocationMode: resourcev1.DeviceAllocationModeAll, Selectors: sel(h100)}})},
			claims: []corev1.PodResourceClaim{fromTemplate("gpu", "all")},
			count:  1,
			types:  []string{"p5.4xlarge"},
		},
		{
			name: "allocation mode All beside another claim for the same GPUs",
			templates: []*resourcev1.ResourceClaimTemplate{template("all", resourcev1.DeviceRequest{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{
				DeviceClassName: "gpu.nvidia.com", AllocationMode: resourcev1.DeviceAllocationModeAll, Selectors: sel(memory40)}}),
				template("two", exactly("gpu", "gpu.nvidia.com", memory40, 2))},
			// All leaves no GPU of the node for the other claim, on any type.
			claims: []corev1.PodResourceClaim{fromTemplate("a", "all"), fromTemplate("b", "two")},
			reason: "no instance type the NodePools may launch has devices that satisfy them",
		},
		{
			name: "allocation mode All with a count",
			templates: []*resourcev1.ResourceClaimTemplate{template("all", resourcev1.DeviceRequest{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{
				DeviceClassName: "gpu.nvidia.com", AllocationMode: resourcev1.DeviceAllocationModeAll, Count: 2}})},
			claims: []corev1.PodResourceClaim{fromTemplate("gpu", "all")},
			reason: "allocationMode All with a count",
		},
		{
			name:      "a selector that does not compile",
			templates: []*resourcev1.ResourceClaimTemplate{template("bad", exactly("gpu", "gpu.nvidia.com", `device.attributes["gpu.nvidia.com"].productName ==`, 1))},
			claims:    []corev1.PodResourceClaim{fromTemplate("gpu", "bad")},
			reason:    "selector",
		},
		{
			name:      "more devices than any node has",
			templates: []*resourcev1.ResourceClaimTemplate{template("many", exactly("gpu", "gpu.nvidia.com", "", 16))},
			claims:    []corev1.PodResourceClaim{fromTemplate("gpu", "many")},
			reason:    "no instance type the NodePools may launch has devices that satisfy them",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewResolver(Objects{DeviceClasses: []*resourcev1.DeviceClass{gpuClass}, Templates: tc.templates})
			pod := claimPod("p", tc.claims...)
			need := r.Resolve([]*corev1.Pod{pod}, its)[pod]
			if need == nil {
				t.Fatal("no need for a pod with claims")
			}
			if tc.reason != "" {
				if need.Reason == nil || !strings.Contains(need.Reason.Detail, tc.reason) || need.Reason.Kind != solver.ReasonDevices {
					t.Fatalf("reason %+v, want one containing %q", need.Reason, tc.reason)
				}
				return
			}
			if need.Reason != nil {
				t.Fatalf("unexpected reason %s", need.Reason)
			}
			if need.Count != tc.count || need.Resource != scheduling.ResourceNvidiaGPU {
				t.Errorf("need %d × %s, want %d × %s", need.Count, need.Resource, tc.count, scheduling.ResourceNvidiaGPU)
			}
			got := typeNames(t, need)
			if tc.types != nil && !slices.Equal(got, tc.types) {
				t.Errorf("types %v, want %v", got, tc.types)
			}
			for _, n := range tc.wantSome {
				if !slices.Contains(got, n) {
					t.Errorf("types %v lack %s", got, n)
				}
			}
			for _, n := range tc.excluded {
				if slices.Contains(got, n) {
					t.Errorf("types %v include %s", got, n)
				}
			}
		})
	}
}

// TestSharedAndAllocatedClaims: a named claim shared by two pending pods is charged to the
// first, the other waits for its allocation; an allocated claim pins its pod to the node its
// devices are on and takes no more devices.
func TestSharedAndAllocatedClaims(t *testing.T) {
	its := awsTypes(t)
	shared := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: "default"},
		Spec:       resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{exactly("gpu", "gpu.nvidia.com", "", 1)}}},
	}
	allocated := shared.DeepCopy()
	allocated.Name = "allocated"
	allocated.Status.Allocation = &resourcev1.AllocationResult{NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"gpu-node-1"}}},
	}}}}
	r := NewResolver(Objects{DeviceClasses: []*resourcev1.DeviceClass{gpuClass}, ResourceClaims: []*resourcev1.ResourceClaim{shared, allocated}})
	a, b := claimPod("a", fromClaim("gpu", "shared")), claimPod("b", fromClaim("gpu", "shared"))
	c := claimPod("c", fromClaim("gpu", "allocated"))
	needs := r.Resolve([]*corev1.Pod{a, b, c}, its)
	if needs[a].Reason != nil || needs[a].Count != 1 {
		t.Errorf("first sharer: %+v, want one GPU", needs[a])
	}
	if needs[b].Reason == nil || !strings.Contains(needs[b].Reason.Detail, "shared with pod default/a") {
		t.Errorf("second sharer: %+v, want it to wait for the claim", needs[b])
	}
	if n := needs[c]; n.Reason != nil || n.Count != 0 || !n.Requirements.Has(scheduling.FieldNodeName) {
		t.Errorf("allocated: %+v, want no devices and the node pinned", n)
	}

	// A running pod whose claim was generated from a template: pinned where it runs, and free
	// to move (a claim of its own from the template) as the disruption simulation moves it.
	generated := allocated.DeepCopy()
	generated.Name = "d-gpu"
	tmpl := template("one", exactly("gpu", "gpu.nvidia.com", "", 1))
	d := claimPod("d", fromTemplate("gpu", "one"))
	d.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: ptr.To("d-gpu")}}
	r = NewResolver(Objects{DeviceClasses: []*resourcev1.DeviceClass{gpuClass}, ResourceClaims: []*resourcev1.ResourceClaim{generated, allocated}, Templates: []*resourcev1.ResourceClaimTemplate{tmpl}})
	if n := r.Resolve([]*corev1.Pod{d}, its)[d]; n.Reason != nil || n.Count != 0 || !n.Requirements.Has(scheduling.FieldNodeName) {
		t.Errorf("running, resolved where it is: %+v, want the node pinned", n)
	}
	if n := r.ResolveMoving([]*corev1.Pod{d}, its)[d]; n.Reason != nil || n.Count != 1 || n.Requirements.Has(scheduling.FieldNodeName) {
		t.Errorf("running, resolved as it moves: %+v, want one GPU anywhere", n)
	}
	if n := r.ResolveMoving([]*corev1.Pod{c}, its)[c]; n.Reason != nil || n.Count != 0 || !n.Requirements.Has(scheduling.FieldNodeName) {
		t.Errorf("named allocated claim, as it moves: %+v, want the node pinned", n)
	}
}

func mustQty(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

// TestDevicesByNode: published devices and allocated results are counted per node and per
// resource (a MIG instance as its profile's), other drivers and administrative access left out.
func TestDevicesByNode(t *testing.T) {
	mig := resourcev1.Device{Name: "gpu-0-mig-1g10gb-0", Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
		"type": {StringValue: ptr.To("mig")}, "profile": {StringValue: ptr.To("1g.10gb")},
	}}
	slice := func(node, driver string, n int, dev resourcev1.Device) *resourcev1.ResourceSlice {
		s := &resourcev1.ResourceSlice{Spec: resourcev1.ResourceSliceSpec{Driver: driver, NodeName: ptr.To(node), Pool: resourcev1.ResourcePool{Name: node}}}
		for i := range n {
			d := dev
			d.Name = fmt.Sprintf("%s-%d", dev.Name, i)
			s.Spec.Devices = append(s.Spec.Devices, d)
		}
		return s
	}
	claim := func(node string, results ...resourcev1.DeviceRequestAllocationResult) *resourcev1.ResourceClaim {
		return &resourcev1.ResourceClaim{Status: resourcev1.ResourceClaimStatus{Allocation: &resourcev1.AllocationResult{
			Devices: resourcev1.DeviceAllocationResult{Results: results},
			NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
			}}},
		}}}
	}
	gpu := resourcev1.DeviceRequestAllocationResult{Driver: DriverNVIDIA, Pool: "a", Device: "gpu-0"}
	admin := resourcev1.DeviceRequestAllocationResult{Driver: DriverNVIDIA, Pool: "a", Device: "gpu-1", AdminAccess: ptr.To(true)}
	nic := resourcev1.DeviceRequestAllocationResult{Driver: "nic.example.com"}
	slice1 := resourcev1.DeviceRequestAllocationResult{Driver: DriverNVIDIA, Pool: "c", Device: mig.Name + "-3"}
	got := DevicesByNode(
		[]*resourcev1.ResourceSlice{slice("a", DriverNVIDIA, 8, resourcev1.Device{Name: "gpu"}), slice("b", DriverNVIDIA, 4, resourcev1.Device{Name: "gpu"}),
			slice("a", "nic.example.com", 2, resourcev1.Device{Name: "nic"}), slice("c", DriverNVIDIA, 56, mig)},
		[]*resourcev1.ResourceClaim{claim("a", gpu, gpu, nic), claim("a", admin), claim("b", gpu), claim("c", slice1), {}},
	)
	want := map[string]NodeDevices{
		"a": {scheduling.ResourceNvidiaGPU: {Published: 8, Allocated: 2}},
		"b": {scheduling.ResourceNvidiaGPU: {Published: 4, Allocated: 1}},
		"c": {"nvidia.com/mig-1g.10gb": {Published: 56, Allocated: 1}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("DevicesByNode = %+v, want %+v", got, want)
	}
}

// TestGeneratedClaimsShareANeed: pods whose claims kube-controller-manager generated from one
// template (each its own claim, not yet allocated) need the same, under one key, so they share
// a class; a pod whose template asks for the same devices another way shares it too.
func TestGeneratedClaimsShareANeed(t *testing.T) {
	tmpl := template("one", exactly("gpu", "gpu.nvidia.com", "", 1))
	same := template("same", exactly("gpu", "gpu.nvidia.com", `device.driver == "gpu.nvidia.com"`, 1))
	var claims []*resourcev1.ResourceClaim
	var pods []*corev1.Pod
	for i := range 3 {
		name := fmt.Sprintf("g-%d-gpu", i)
		claims = append(claims, &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: tmpl.Spec.Spec})
		p := claimPod(fmt.Sprintf("g-%d", i), fromTemplate("gpu", "one"))
		p.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: ptr.To(name)}}
		pods = append(pods, p)
	}
	pods = append(pods, claimPod("other", fromTemplate("gpu", "same")))
	r := NewResolver(Objects{DeviceClasses: []*resourcev1.DeviceClass{gpuClass}, ResourceClaims: claims, Templates: []*resourcev1.ResourceClaimTemplate{tmpl, same}})
	needs := r.Resolve(pods, awsTypes(t))
	for _, p := range pods {
		if n := needs[p]; n.Reason != nil || n.Count != 1 || n.Key != needs[pods[0]].Key {
			t.Errorf("pod %s: %+v, want one GPU under the key %q", p.Name, n, needs[pods[0]].Key)
		}
	}
}

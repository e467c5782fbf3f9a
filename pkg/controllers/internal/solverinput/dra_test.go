package solverinput

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated"
	"github.com/tenon-sh/tenon/pkg/dra"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
	"github.com/tenon-sh/tenon/pkg/state"
)

// TestPodWithResourceClaimsIsUnschedulableOnTheControllerPath reads a cluster holding a pod with
// a dynamic resource claim and one without, as the provisioner does (Pending, then Snapshot
// with the simulated cloud's instance types), and solves without resolving the claims: the
// claimed pod is unschedulable with the reason the provisioner would publish as its
// FailedScheduling event; the other gets a node. TestControllerResolvesClaims resolves them.
func TestPodWithResourceClaimsIsUnschedulableOnTheControllerPath(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apisv1.AddToScheme, simv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	nc := &simv1alpha1.SimNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(nc).
		WithStatusSubresource(&simv1alpha1.SimNodeClass{}, &simv1alpha1.SimInstance{}).Build()
	cloud, err := simulated.New(simulated.Options{Client: kube})
	if err != nil {
		t.Fatal(err)
	}
	cluster := state.NewCluster(clocktesting.NewFakeClock(time.Now()))
	cluster.UpdateNodePool(&apisv1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: apisv1.NodePoolSpec{Template: apisv1.NodeClaimTemplate{Spec: apisv1.NodeClaimTemplateSpec{
			NodeClassRef: &apisv1.NodeClassReference{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind, Name: "default"},
			Requirements: []apisv1.NodeSelectorRequirementWithMinValues{{Key: apisv1.LabelInstanceFamily, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5"}}},
		}}},
	})
	requests := func(p *corev1.Pod) {
		p.Spec.Containers = []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}
	}
	cluster.UpdatePod(unschedulable("plain", requests))
	cluster.UpdatePod(unschedulable("claimed", requests, func(p *corev1.Pod) {
		p.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("one-gpu")}}
		p.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	}))

	src := &Source{Cluster: cluster, Cloud: cloud, Reader: kube, Schedulers: []string{corev1.DefaultSchedulerName}}
	pools := src.Pools()
	pods, rejected, _ := src.Pending(context.Background(), pools)
	if len(pods) != 2 || len(rejected) != 0 {
		t.Fatalf("pending %d, rejected %v", len(pods), rejected)
	}
	view, err := src.Snapshot(context.Background(), pools)
	if err != nil {
		t.Fatal(err)
	}
	view.Snapshot.Pods = pods
	plan, err := solver.Solve(view.Snapshot, solver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Unschedulable) != 1 || plan.Unschedulable[0].Pod.Name != "claimed" {
		t.Fatalf("unschedulable %+v; want only the pod with a resource claim", plan.Unschedulable)
	}
	if got := plan.Unschedulable[0].Message(); got != "dynamic resource claims: "+solver.DynamicResourceClaimsDetail {
		t.Errorf("event message %q", got)
	}
	if len(plan.Claims) != 1 || plan.Claims[0].Pods[0].Name != "plain" {
		t.Errorf("claims %+v; want one for the plain pod", plan.Claims)
	}
}

// TestControllerResolvesClaims: Source.Devices reads the DRA objects through the reader and
// resolves the pending pods' claims against the pools' instance types (a GPU pool serves the
// claim; a CPU-only pool leaves the pod unschedulable for its devices), and an existing node's
// GPUs are what its ResourceSlice publishes less what its allocated claims hold.
func TestControllerResolvesClaims(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apisv1.AddToScheme, simv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	class := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu.nvidia.com"}, Spec: resourcev1.DeviceClassSpec{
		Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "gpu.nvidia.com"`}}},
	}}
	tmpl := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: "one-gpu", Namespace: "default"},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.nvidia.com"}}},
		}}}}
	slice := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "gpu-node-gpu.nvidia.com"}, Spec: resourcev1.ResourceSliceSpec{
		Driver: dra.DriverNVIDIA, NodeName: ptr.To("gpu-node"), Pool: resourcev1.ResourcePool{Name: "gpu-node", ResourceSliceCount: 1},
		Devices: []resourcev1.Device{{Name: "gpu-0"}, {Name: "gpu-1"}, {Name: "gpu-2"}, {Name: "gpu-3"}},
	}}
	held := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: "default"},
		Status: resourcev1.ResourceClaimStatus{Allocation: &resourcev1.AllocationResult{
			Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{{Driver: dra.DriverNVIDIA, Device: "gpu-0"}}},
			NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
				{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"gpu-node"}}}}}},
		}}}
	nc := &simv1alpha1.SimNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(nc, class, tmpl, slice, held).
		WithStatusSubresource(&simv1alpha1.SimNodeClass{}, &simv1alpha1.SimInstance{}).Build()
	cloud, err := simulated.New(simulated.Options{Client: kube})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		families []string
		served   bool
	}{{[]string{"g5"}, true}, {[]string{"m5"}, false}} {
		cluster := state.NewCluster(clocktesting.NewFakeClock(time.Now()))
		cluster.UpdateNodePool(&apisv1.NodePool{
			ObjectMeta: metav1.ObjectMeta{Name: "default"},
			Spec: apisv1.NodePoolSpec{Template: apisv1.NodeClaimTemplate{Spec: apisv1.NodeClaimTemplateSpec{
				NodeClassRef: &apisv1.NodeClassReference{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind, Name: "default"},
				Requirements: []apisv1.NodeSelectorRequirementWithMinValues{{Key: apisv1.LabelInstanceFamily, Operator: corev1.NodeSelectorOpIn, Values: tc.families}},
			}}},
		})
		claimed := unschedulable("claimed", func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}, Claims: []corev1.ResourceClaim{{Name: "gpu"}}}}}
			p.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("one-gpu")}}
		})
		cluster.UpdatePod(claimed)
		src := &Source{Cluster: cluster, Cloud: cloud, Reader: kube, Schedulers: []string{corev1.DefaultSchedulerName}}
		pools := src.Pools()
		pods, _, _ := src.Pending(context.Background(), pools)
		view, err := src.Snapshot(context.Background(), pools)
		if err != nil {
			t.Fatal(err)
		}
		view.Snapshot.Pods = pods
		view.Snapshot.Nodes = append(view.Snapshot.Nodes, solver.Node{Name: "gpu-node"})
		if err := src.Devices(context.Background(), view.Snapshot, false); err != nil {
			t.Fatal(err)
		}
		if got := view.Snapshot.Nodes[len(view.Snapshot.Nodes)-1].Allocatable[scheduling.NvidiaGPU]; got != 3 {
			t.Errorf("gpu-node has %d GPUs free, want 4 published less 1 held", got)
		}
		plan, err := solver.Solve(view.Snapshot, solver.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if tc.served {
			if len(plan.Claims) != 1 || plan.Claims[0].InstanceType.Shape.GPUName != "a10g" {
				t.Errorf("%v: claims %+v, want one g5 for the claimed pod (unschedulable %+v)", tc.families, plan.Claims, plan.Unschedulable)
			}
			continue
		}
		if len(plan.Unschedulable) != 1 || plan.Unschedulable[0].Reasons[0].Kind != solver.ReasonDevices {
			t.Errorf("%v: unschedulable %+v, want the claimed pod for its devices", tc.families, plan.Unschedulable)
		}
	}
}

// TestDeviceGPUsCountForPluginPods: a pending pod asking for nvidia.com/gpu (which DRA devices
// may serve, through a DeviceClass's extendedResourceName) has the existing nodes' GPUs counted
// from their ResourceSlices and allocated claims; with no pod asking for GPUs nothing is read.
func TestDeviceGPUsCountForPluginPods(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	slice := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "gpu-node-gpu.nvidia.com"}, Spec: resourcev1.ResourceSliceSpec{
		Driver: dra.DriverNVIDIA, NodeName: ptr.To("gpu-node"), Pool: resourcev1.ResourcePool{Name: "gpu-node", ResourceSliceCount: 1},
		Devices: []resourcev1.Device{{Name: "gpu-0"}, {Name: "gpu-1"}},
	}}
	kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(slice).Build()
	src := &Source{Reader: kube}
	plugin := unschedulable("plugin", func(p *corev1.Pod) {
		p.Spec.Containers = []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{scheduling.ResourceNvidiaGPU: resource.MustParse("1")}}}}
	})
	cpu := unschedulable("cpu")
	for _, tc := range []struct {
		pods []*corev1.Pod
		want int64
	}{{[]*corev1.Pod{cpu}, 0}, {[]*corev1.Pod{cpu, plugin}, 2}} {
		snap := &solver.Snapshot{Pods: tc.pods, Nodes: []solver.Node{{Name: "gpu-node"}}}
		if err := src.Devices(context.Background(), snap, false); err != nil {
			t.Fatal(err)
		}
		if got := snap.Nodes[0].Allocatable[scheduling.NvidiaGPU]; got != tc.want {
			t.Errorf("%d pods: gpu-node has %d GPUs, want %d", len(tc.pods), got, tc.want)
		}
	}
}

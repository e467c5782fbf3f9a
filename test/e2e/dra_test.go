package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/controllers/provisioning"
	"github.com/tenon-sh/tenon/pkg/dra"
	"github.com/tenon-sh/tenon/pkg/operator"
)

// claimTemplate is a ResourceClaimTemplate in namespace default asking for count GPUs of class
// gpu.nvidia.com that the CEL expression accepts.
func claimTemplate(name, expr string, count int64) *resourcev1.ResourceClaimTemplate {
	return &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpus", Exactly: &resourcev1.ExactDeviceRequest{
				DeviceClassName: "gpu.nvidia.com", Count: count,
				Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: expr}}},
			}}},
		}}},
	}
}

// withClaim gives a pod spec a claim from a template, used by its container.
func withClaim(tmpl string) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) {
		s.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpus", ResourceClaimTemplateName: ptr.To(tmpl)}}
		s.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpus"}}
	}
}

// A pod whose claim asks for two GPUs of at least 40 GiB gets a node whose GPUs match:
// kube-scheduler allocates the claim from the ResourceSlice the node publishes, and the pod
// runs. A pod whose claim no instance type's GPUs satisfy gets a FailedScheduling event with
// the reason, and nothing is bought for it. Once the pod is gone, consolidation deletes the
// node and its ResourceSlice goes with it.
func TestDRAClaimGetsMatchingGPUs(t *testing.T) {
	e := start(t, operator.Options{})
	class := &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu.nvidia.com"},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
			Expression: `device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu"`,
		}}}},
	}
	e.create(nodeClass("gpu"), nodePool("gpu", "gpu", []string{"g5", "g6e", "p4d"}), class,
		claimTemplate("big", `device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0`, 2),
		claimTemplate("absent", `device.attributes["gpu.nvidia.com"].productName == "NVIDIA GB300"`, 1),
		deployment("train", 1, "4", "16Gi", withClaim("big")),
		deployment("nope", 1, "1", "1Gi", withClaim("absent")))
	pods := e.podsRunning("train", 1, 120*time.Second)

	var node corev1.Node
	if err := e.kube.Get(e.ctx, clientKey(pods[0].Spec.NodeName), &node); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Load("us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	it, ok := cat.Get(node.Labels[apisv1.LabelInstanceType])
	if !ok {
		t.Fatalf("node %s has an unknown instance type %q", node.Name, node.Labels[apisv1.LabelInstanceType])
	}
	devs, ok := dra.DevicesOf(it)
	mem := devs.Capacity["memory"].Value
	if !ok || devs.Count < 2 || mem.Cmp(resource.MustParse("40Gi")) < 0 {
		t.Errorf("the pod runs on %s, whose GPUs (%d of %s) do not satisfy its claim", it.Name, devs.Count, mem.String())
	}

	// kube-scheduler allocated the pod's claim on that node's published devices.
	var claims resourcev1.ResourceClaimList
	if err := e.kube.List(e.ctx, &claims, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	var mine *resourcev1.ResourceClaim
	for i := range claims.Items {
		for _, ref := range claims.Items[i].OwnerReferences {
			if ref.UID == pods[0].UID {
				mine = &claims.Items[i]
			}
		}
	}
	if mine == nil || mine.Status.Allocation == nil {
		t.Fatalf("the pod's claim is not allocated: %+v", mine)
	}
	if res := mine.Status.Allocation.Devices.Results; len(res) != 2 || res[0].Driver != dra.DriverNVIDIA || res[0].Pool != node.Name {
		t.Errorf("allocation results %+v, want two devices of %s in pool %s", res, dra.DriverNVIDIA, node.Name)
	}

	// The pod no type can serve: an event with the reason, and no capacity bought for it.
	e.eventually(60*time.Second, "a FailedScheduling event on the nope pod", func() (bool, string) {
		var msgs []string
		for _, ev := range e.events(provisioning.EventFailedScheduling) {
			if strings.HasPrefix(ev.InvolvedObject.Name, "nope-") {
				msgs = append(msgs, ev.Message)
			}
		}
		return slices.ContainsFunc(msgs, func(m string) bool {
			return strings.Contains(m, "no instance type the NodePools may launch has devices that satisfy them")
		}), fmt.Sprint(msgs)
	})
	if claims := e.nodeClaims(); len(claims) != 1 {
		t.Errorf("%d NodeClaims, want the train pod's alone: %v", len(claims), claims)
	}
	var published resourcev1.ResourceSliceList
	if err := e.kube.List(e.ctx, &published); err != nil || len(published.Items) != 1 || *published.Items[0].Spec.NodeName != node.Name {
		t.Fatalf("ResourceSlices %+v (%v), want the node's alone", published.Items, err)
	}

	e.scale("train", 0)
	e.eventually(60*time.Second, "the node and its ResourceSlice gone", func() (bool, string) {
		var l resourcev1.ResourceSliceList
		if err := e.kube.List(e.ctx, &l); err != nil {
			return false, err.Error()
		}
		return len(l.Items) == 0 && len(e.nodeClaims()) == 0, fmt.Sprintf("%d slices, %d claims", len(l.Items), len(e.nodeClaims()))
	})
}

// A NodePool whose nodes' GPUs are in MIG layout all-1g.10gb serves pods whose claims ask for
// a 1g.10gb MIG instance: tenon buys a MIG-capable type for them, the node publishes its MIG
// instances (one ResourceSlice device each, and nvidia.com/mig-1g.10gb in its allocatable),
// kube-scheduler allocates each claim one instance and the pods run; a pod asking for
// nvidia.com/mig-1g.10gb through the device plugin runs on such a node too.
func TestDRAMIGProfileLandsOnPartitionedGPU(t *testing.T) {
	e := start(t, operator.Options{})
	class := &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: "mig.nvidia.com"},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
			Expression: `device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "mig"`,
		}}}},
	}
	slice := claimTemplate("slice", `device.attributes["gpu.nvidia.com"].profile == "1g.10gb"`, 1)
	slice.Spec.Spec.Devices.Requests[0].Exactly.DeviceClassName = class.Name
	pool := nodePool("mig", "gpu", []string{"p4d", "p5"}, func(np *apisv1.NodePool) {
		np.Spec.Template.Labels = map[string]string{catalog.LabelMIGConfig: "all-1g.10gb"}
	})
	const resMIG = corev1.ResourceName("nvidia.com/mig-1g.10gb")
	e.create(nodeClass("gpu"), pool, class, slice,
		deployment("infer", 3, "1", "1Gi", withClaim("slice")),
		deployment("plugin", 1, "1", "1Gi", func(s *corev1.PodSpec) {
			s.Containers[0].Resources.Requests[resMIG] = resource.MustParse("1")
			s.Containers[0].Resources.Limits = corev1.ResourceList{resMIG: resource.MustParse("1")}
		}))
	pods := e.podsRunning("infer", 3, 120*time.Second)
	e.podsRunning("plugin", 1, 60*time.Second)

	for _, p := range pods {
		var node corev1.Node
		if err := e.kube.Get(e.ctx, clientKey(p.Spec.NodeName), &node); err != nil {
			t.Fatal(err)
		}
		family := node.Labels[apisv1.LabelInstanceFamily]
		if node.Labels[catalog.LabelMIGConfig] != "all-1g.10gb" || (family != "p4d" && family != "p5") {
			t.Errorf("pod %s runs on %s (%s, MIG layout %q), want a MIG-partitioned p4d or p5", p.Name, node.Name, family, node.Labels[catalog.LabelMIGConfig])
		}
		if q, ok := node.Status.Allocatable[resMIG]; !ok || q.Value() < 7 {
			t.Errorf("node %s allocatable %v, want its MIG instances as %s", node.Name, node.Status.Allocatable, resMIG)
		}
		if q := node.Status.Allocatable[corev1.ResourceName("nvidia.com/gpu")]; !q.IsZero() {
			t.Errorf("node %s advertises %s whole GPUs besides its MIG instances", node.Name, q.String())
		}
	}

	// Each claim holds one MIG instance of the node it runs on.
	var claims resourcev1.ResourceClaimList
	if err := e.kube.List(e.ctx, &claims, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	allocated := 0
	for _, c := range claims.Items {
		a := c.Status.Allocation
		if a == nil {
			t.Errorf("claim %s is not allocated", c.Name)
			continue
		}
		if len(a.Devices.Results) != 1 || !strings.Contains(a.Devices.Results[0].Device, "-mig-1g10gb-") {
			t.Errorf("claim %s holds %+v, want one 1g.10gb MIG instance", c.Name, a.Devices.Results)
		}
		allocated++
	}
	if allocated != 3 {
		t.Errorf("%d claims allocated, want the three infer pods'", allocated)
	}
	var published resourcev1.ResourceSliceList
	if err := e.kube.List(e.ctx, &published); err != nil {
		t.Fatal(err)
	}
	for _, s := range published.Items {
		for _, d := range s.Spec.Devices {
			if dra.ResourceOf(&d) != resMIG {
				t.Fatalf("slice %s publishes %s as %s, want MIG instances alone", s.Name, d.Name, dra.ResourceOf(&d))
			}
		}
	}
	t.Logf("%d NodeClaims, %d ResourceSlices", len(e.nodeClaims()), len(published.Items))
}

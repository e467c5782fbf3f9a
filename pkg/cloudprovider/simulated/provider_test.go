package simulated_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// TestProviderOnControlPlane runs the provider against a real etcd, kube-apiserver,
// kube-scheduler, kube-controller-manager and kwok, shared by the subtests (each uses its own
// SimNodeClass and claims).
func TestProviderOnControlPlane(t *testing.T) {
	e := startEnv(t)
	cat, err := catalog.Load("us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("Lifecycle", func(t *testing.T) { testLifecycle(t, e, cat) })
	t.Run("DevicePluginDelay", func(t *testing.T) { testDevicePluginDelay(t, e) })
	t.Run("Restart", func(t *testing.T) { testRestart(t, e) })
	t.Run("CapacityPool", func(t *testing.T) { testCapacityPool(t, e) })
	t.Run("UnavailableOfferings", func(t *testing.T) { testUnavailableOfferings(t, e) })
	t.Run("TargetedReservation", func(t *testing.T) { testTargetedReservation(t, e) })
	t.Run("NodeClassReadiness", func(t *testing.T) { testNodeClassReadiness(t, e) })
	t.Run("Drift", func(t *testing.T) { testDrift(t, e) })
	t.Run("SpotInterruption", func(t *testing.T) { testSpotInterruption(t, e) })
	t.Run("ListWithoutNodeClaim", func(t *testing.T) { testListWithoutNodeClaim(t, e) })
	t.Run("Manager", func(t *testing.T) { testManager(t, e) })
}

func testLifecycle(t *testing.T, e *env, cat *catalog.Catalog) {
	ctx := context.Background()
	p, _ := e.provider(t, nil)
	spec := fastSpec()
	spec.Labels = map[string]string{"example.com/class": "fast"}
	spec.Tags = map[string]string{"owner": "lifecycle"}
	nc := e.nodeClass(t, "lifecycle", spec)
	claim := e.claim(t, "lifecycle-1", "lifecycle",
		req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large"),
		req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand),
		req(apisv1.LabelZone, corev1.NodeSelectorOpIn, "us-east-1b"))

	began := time.Now()
	got, err := p.Create(ctx, claim)
	if err != nil {
		t.Fatal(err)
	}
	id := instanceID(t, got.Status.ProviderID)
	if want := "sim://us-east-1/us-east-1b/" + id; got.Status.ProviderID != want || !strings.HasPrefix(id, "i-") {
		t.Errorf("provider ID %s", got.Status.ProviderID)
	}
	m5, _ := cat.Get("m5.large")
	if !equality.Semantic.DeepEqual(got.Status.Capacity, m5.Capacity.ResourceList()) ||
		!equality.Semantic.DeepEqual(got.Status.Allocatable, m5.Allocatable().ResourceList()) {
		t.Errorf("capacity %v allocatable %v", got.Status.Capacity, got.Status.Allocatable)
	}
	wantLabels := map[string]string{
		apisv1.NodePoolLabelKey: "default", "team": "a", "example.com/class": "fast",
		apisv1.LabelInstanceType: "m5.large", apisv1.LabelZone: "us-east-1b", apisv1.LabelTopologyZoneID: "use1-az2",
		apisv1.LabelRegion: "us-east-1", apisv1.CapacityTypeLabelKey: apisv1.CapacityTypeOnDemand,
		apisv1.LabelArch: "amd64", apisv1.LabelOS: "linux", apisv1.LabelInstanceFamily: "m5", apisv1.LabelInstanceCPU: "2",
	}
	for k, v := range wantLabels {
		if got.Labels[k] != v {
			t.Errorf("claim label %s = %q, want %q", k, got.Labels[k], v)
		}
	}
	if got.Status.ImageID != "sim-al2023-amd64" || got.Annotations[apisv1.NodeClassHashAnnotationKey] != nc.Hash() {
		t.Errorf("image %q, hash annotation %q (want %s)", got.Status.ImageID, got.Annotations[apisv1.NodeClassHashAnnotationKey], nc.Hash())
	}
	again, err := p.Create(ctx, claim)
	if err != nil || again.Status.ProviderID != got.Status.ProviderID {
		t.Errorf("second Create of the claim: %v, %s", err, again.Status.ProviderID)
	}

	node := e.waitNode(t, id)
	if elapsed := time.Since(began); elapsed < 300*time.Millisecond {
		t.Errorf("node appeared %v after launch, before boot (200ms) + registration (100ms)", elapsed)
	}
	if node.Spec.ProviderID != got.Status.ProviderID || node.Annotations[simulated.KwokNodeAnnotation] != simulated.KwokNodeAnnotationValue {
		t.Errorf("node provider ID %s, annotations %v", node.Spec.ProviderID, node.Annotations)
	}
	wantLabels[apisv1.LabelHostname] = id
	for k, v := range wantLabels {
		if node.Labels[k] != v {
			t.Errorf("node label %s = %q, want %q", k, node.Labels[k], v)
		}
	}
	var taints []string
	for _, taint := range node.Spec.Taints {
		if !strings.HasPrefix(taint.Key, "node.kubernetes.io/") {
			taints = append(taints, taint.ToString())
		}
	}
	if got, want := strings.Join(taints, " "), "karpenter.sh/unregistered:NoExecute startup:NoSchedule dedicated=a:NoSchedule"; got != want {
		t.Errorf("node taints %s, want %s", got, want)
	}
	if !equality.Semantic.DeepEqual(node.Status.Capacity, m5.Capacity.ResourceList()) ||
		!equality.Semantic.DeepEqual(node.Status.Allocatable, m5.Allocatable().ResourceList()) {
		t.Errorf("node capacity %v allocatable %v", node.Status.Capacity, node.Status.Allocatable)
	}
	eventually(t, "kwok makes the node Ready", func() (bool, string) {
		n, err := e.node(id)
		if err != nil {
			return false, err.Error()
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, string(c.Status)
			}
		}
		return false, "no Ready condition"
	})
	eventually(t, "the SimInstance records the node", func() (bool, string) {
		si, err := e.simInstance(id)
		if err != nil {
			return false, err.Error()
		}
		return si.Status.Phase == simv1alpha1.InstanceRunning && si.Status.NodeName == id, fmt.Sprintf("%+v", si.Status)
	})
	si, _ := e.simInstance(id)
	if s := si.Spec; s.NodeClaim != "lifecycle-1" || s.InstanceType != "m5.large" || s.Zone != "us-east-1b" || s.CapacityType != "on-demand" ||
		s.Price != "0.096" || s.Tags["owner"] != "lifecycle" || s.LaunchTime.Time.Before(began.Add(-time.Second)) {
		t.Errorf("SimInstance spec %+v", s)
	}

	if err := p.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	e.waitNodeGone(t, id)
	if err := p.Delete(ctx, got); !cloudprovider.IsNodeClaimNotFound(err) {
		t.Errorf("second Delete: %v, want NodeClaimNotFound", err)
	}
	if _, err := p.Get(ctx, got.Status.ProviderID); !cloudprovider.IsNodeClaimNotFound(err) {
		t.Errorf("Get after Delete: %v", err)
	}
	eventually(t, "the SimInstance is deleted", func() (bool, string) {
		_, err := e.simInstance(id)
		return err != nil && strings.Contains(err.Error(), "not found"), fmt.Sprint(err)
	})
}

func testDevicePluginDelay(t *testing.T, e *env) {
	ctx := context.Background()
	p, _ := e.provider(t, nil)
	spec := fastSpec()
	spec.DevicePluginDelay = dur("1s")
	e.nodeClass(t, "gpu", spec)
	claim := e.claim(t, "gpu-1", "gpu",
		req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "g4dn.xlarge"),
		req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand))
	began := time.Now()
	got, err := p.Create(ctx, claim)
	if err != nil {
		t.Fatal(err)
	}
	gpu := corev1.ResourceName(scheduling.ResourceNvidiaGPU)
	if q := got.Status.Capacity[gpu]; q.Value() != 1 {
		t.Errorf("claim capacity %v, want nvidia.com/gpu 1", got.Status.Capacity)
	}
	id := instanceID(t, got.Status.ProviderID)
	node := e.waitNode(t, id)
	if _, ok := node.Status.Capacity[gpu]; ok {
		t.Errorf("the node has %s at registration, %v after launch", gpu, time.Since(began))
	}
	if _, ok := node.Status.Allocatable[gpu]; ok {
		t.Error("the node has allocatable GPUs at registration")
	}
	eventually(t, "the device plugin registers the GPU", func() (bool, string) {
		n, err := e.node(id)
		if err != nil {
			return false, err.Error()
		}
		c, a := n.Status.Capacity[gpu], n.Status.Allocatable[gpu]
		return c.Value() == 1 && a.Value() == 1, fmt.Sprintf("capacity %v allocatable %v", n.Status.Capacity, n.Status.Allocatable)
	})
	if elapsed := time.Since(began); elapsed < 1300*time.Millisecond {
		t.Errorf("GPU appeared %v after launch, before boot + registration + device plugin (1.3s)", elapsed)
	}
	if err := p.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	e.waitNodeGone(t, id)
}

func testRestart(t *testing.T, e *env) {
	ctx := context.Background()
	first, stopFirst := e.provider(t, nil)
	e.nodeClass(t, "restart", fastSpec())
	claim := e.claim(t, "restart-1", "restart", req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large"))
	got, err := first.Create(ctx, claim)
	if err != nil {
		t.Fatal(err)
	}
	id := instanceID(t, got.Status.ProviderID)
	e.waitNode(t, id)
	stopFirst()

	second, _ := e.provider(t, nil)
	list, err := second.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(list, func(c *apisv1.NodeClaim) bool { return c.Status.ProviderID == got.Status.ProviderID })
	if i < 0 {
		t.Fatalf("the new provider does not list %s", got.Status.ProviderID)
	}
	if c := list[i]; c.Name != "restart-1" || c.Labels[apisv1.LabelInstanceType] != "m5.large" || c.Spec.NodeClassRef.Name != "restart" ||
		c.Status.ImageID != got.Status.ImageID || c.Annotations[apisv1.NodeClassHashAnnotationKey] != got.Annotations[apisv1.NodeClassHashAnnotationKey] {
		t.Errorf("listed claim %s %v %v %s", c.Name, c.Labels, c.Spec.NodeClassRef, c.Status.ImageID)
	}
	if _, err := second.Get(ctx, got.Status.ProviderID); err != nil {
		t.Errorf("Get after restart: %v", err)
	}
	again, err := second.Create(ctx, claim)
	if err != nil || again.Status.ProviderID != got.Status.ProviderID {
		t.Errorf("Create after restart launched again: %v, %s vs %s", err, again.Status.ProviderID, got.Status.ProviderID)
	}
	if err := second.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	e.waitNodeGone(t, id)
}

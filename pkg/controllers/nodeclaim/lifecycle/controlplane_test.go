package lifecycle_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/ctrltest"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/lifecycle"
)

// TestOnControlPlane runs the controllers against a real control plane with the simulated
// cloud; the subtests share it and run in parallel, each with its own SimNodeClass.
func TestOnControlPlane(t *testing.T) {
	e := ctrltest.Start(t)
	opts := ctrltest.FastOptions()
	opts.Lifecycle.LaunchTimeout = 4 * time.Second
	opts.Lifecycle.RegistrationTimeout = 6 * time.Second
	opts.Lifecycle.UnavailableOfferingsTTL = time.Minute
	hooked := &registrations{taints: map[string][]bool{}}
	opts.Setup = func(_ manager.Manager, m *ctrltest.Manager) error {
		m.BeforeRegister = hooked.record
		return nil
	}
	m := e.StartManager(t, opts)
	t.Run("parallel", func(t *testing.T) {
		t.Run("Lifecycle", func(t *testing.T) { t.Parallel(); testLifecycle(t, e, hooked) })
		t.Run("GPU", func(t *testing.T) { t.Parallel(); testGPU(t, e) })
		t.Run("InsufficientCapacity", func(t *testing.T) { t.Parallel(); testInsufficientCapacity(t, e, m) })
		t.Run("RegistrationTimeout", func(t *testing.T) { t.Parallel(); testRegistrationTimeout(t, e, m) })
		t.Run("LaunchTimeout", func(t *testing.T) { t.Parallel(); testLaunchTimeout(t, e) })
		t.Run("Adopt", func(t *testing.T) { t.Parallel(); testAdopt(t, e) })
	})
}

// registrations records the calls of the registration hook: for each claim, whether its Node
// still carried the unregistered taint at each call.
type registrations struct {
	mu     sync.Mutex
	taints map[string][]bool
}

func (r *registrations) record(_ context.Context, claim *apisv1.NodeClaim, node *corev1.Node) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.taints[claim.Name] = append(r.taints[claim.Name], hasTaint(node, apisv1.UnregisteredTaintKey))
}

func (r *registrations) of(claim string) []bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.taints[claim])
}

func hasTaint(node *corev1.Node, key string) bool {
	return slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == key })
}

func testLifecycle(t *testing.T, e *ctrltest.Env, hooked *registrations) {
	ctx := context.Background()
	e.NodeClass(t, "lifecycle", ctrltest.FastSpec())
	claim := ctrltest.NewClaim("lifecycle-1", "default", "lifecycle",
		ctrltest.Req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large"),
		ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand))
	claim.Labels["team"] = "a"
	claim.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "a", Effect: corev1.TaintEffectNoSchedule}}
	claim.Spec.StartupTaints = []corev1.Taint{{Key: "example.com/startup", Effect: corev1.TaintEffectNoSchedule}}
	e.Create(t, claim)

	launched := e.WaitCondition(t, claim.Name, apisv1.ConditionTypeLaunched)
	cpu := launched.Status.Capacity[corev1.ResourceCPU]
	if !strings.HasPrefix(launched.Status.ProviderID, "sim://us-east-1/") || launched.Status.ImageID == "" || cpu.Value() != 2 {
		t.Errorf("launched status %+v", launched.Status)
	}
	for k, v := range map[string]string{apisv1.LabelInstanceType: "m5.large", apisv1.CapacityTypeLabelKey: apisv1.CapacityTypeOnDemand, "team": "a"} {
		if launched.Labels[k] != v {
			t.Errorf("claim label %s = %q, want %q", k, launched.Labels[k], v)
		}
	}
	if launched.Labels[apisv1.LabelZone] == "" || !slices.Contains(launched.Finalizers, apisv1.TerminationFinalizer) {
		t.Errorf("claim labels %v finalizers %v", launched.Labels, launched.Finalizers)
	}

	registered := e.WaitCondition(t, claim.Name, apisv1.ConditionTypeRegistered)
	node := e.Node(t, registered.Status.NodeName)
	if node == nil || node.Spec.ProviderID != launched.Status.ProviderID {
		t.Fatalf("claim registered with Node %q: %+v", registered.Status.NodeName, node)
	}
	for k, v := range map[string]string{apisv1.NodeRegisteredLabelKey: "true", "team": "a", apisv1.LabelInstanceType: "m5.large", apisv1.NodePoolLabelKey: "default"} {
		if node.Labels[k] != v {
			t.Errorf("node label %s = %q, want %q", k, node.Labels[k], v)
		}
	}
	if !slices.Contains(node.Finalizers, apisv1.TerminationFinalizer) || hasTaint(node, apisv1.UnregisteredTaintKey) || !hasTaint(node, "dedicated") {
		t.Errorf("node finalizers %v taints %v", node.Finalizers, node.Spec.Taints)
	}
	// The registration hook ran while the Node was still tainted unregistered, and only then
	// (the provisioner nominates pods there before anything can schedule onto the Node).
	if calls := hooked.of(claim.Name); len(calls) == 0 || slices.Contains(calls, false) {
		t.Errorf("registration hook calls (node tainted unregistered at each) %v; want at least one, all tainted", calls)
	}

	// The startup taint holds initialization back until something on the node removes it.
	ctrltest.Eventually(t, "the claim waits for its startup taint", func() (bool, string) {
		c := e.Claim(t, claim.Name)
		cond := c.GetCondition(apisv1.ConditionTypeInitialized)
		return cond != nil && cond.Reason == lifecycle.ReasonStartupTaintsExist, fmt.Sprintf("%+v", cond)
	})
	ctrltest.Eventually(t, "the startup taint is removed", func() (bool, string) {
		n := e.Node(t, node.Name)
		orig := n.DeepCopy()
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == "example.com/startup" })
		err := e.Client.Patch(ctx, n, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
		return err == nil, fmt.Sprint(err)
	})
	initialized := e.WaitCondition(t, claim.Name, apisv1.ConditionTypeInitialized)
	if !initialized.IsTrue(apisv1.ConditionTypeReady) {
		t.Errorf("initialized claim not Ready: %+v", initialized.Status.Conditions)
	}
	node = e.Node(t, node.Name)
	if node.Labels[apisv1.NodeInitializedLabelKey] != "true" || hasTaint(node, "example.com/startup") {
		t.Errorf("initialized node labels %v taints %v", node.Labels, node.Spec.Taints)
	}

	e.Namespace(t, "lifecycle")
	e.Create(t, ctrltest.NewPod("lifecycle", "pinned", node.Name, "dedicated"))
	e.PodRunning(t, "lifecycle", "pinned", node.Name)
	if n := e.Node(t, node.Name); hasTaint(n, "example.com/startup") {
		t.Error("the startup taint came back")
	}
	for _, reason := range []string{lifecycle.ReasonLaunched, lifecycle.ReasonRegistered, lifecycle.ReasonInitialized} {
		e.WaitEvent(t, claim.Name, reason)
	}

	if err := e.Client.Delete(ctx, initialized); err != nil {
		t.Fatal(err)
	}
	e.WaitGone(t, "", claim.Name, &apisv1.NodeClaim{})
	e.WaitGone(t, "", node.Name, &corev1.Node{})
}

func testGPU(t *testing.T, e *ctrltest.Env) {
	spec := ctrltest.FastSpec()
	spec.DevicePluginDelay = ctrltest.Dur("2s")
	e.NodeClass(t, "gpu", spec)
	claim := ctrltest.NewClaim("gpu-1", "default", "gpu",
		ctrltest.Req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "g4dn.xlarge"),
		ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand))
	e.Create(t, claim)
	gpu := corev1.ResourceName("nvidia.com/gpu")
	waitedForGPU := false
	ctrltest.Eventually(t, "the GPU claim is initialized", func() (bool, string) {
		c := e.Claim(t, claim.Name)
		if c == nil || c.Status.NodeName == "" {
			return false, "not registered"
		}
		n := e.Node(t, c.Status.NodeName)
		q, ok := n.Status.Allocatable[gpu]
		hasGPU := ok && !q.IsZero()
		cond := c.GetCondition(apisv1.ConditionTypeInitialized)
		if cond != nil && cond.Reason == lifecycle.ReasonResourcesNotRegistered {
			waitedForGPU = true
		}
		if c.IsTrue(apisv1.ConditionTypeInitialized) && !hasGPU {
			// The claim is read before the Node: the GPU can only have appeared since.
			t.Fatalf("the claim is Initialized while its Node has no %s", gpu)
		}
		return c.IsTrue(apisv1.ConditionTypeInitialized), fmt.Sprintf("%+v", cond)
	})
	if !waitedForGPU {
		t.Error("never saw the claim wait for the device plugin (reason ResourcesNotRegistered)")
	}
	c := e.Claim(t, claim.Name)
	if q := e.Node(t, c.Status.NodeName).Status.Allocatable[gpu]; q.Value() != 1 {
		t.Errorf("node allocatable %s = %v", gpu, q)
	}
	if err := e.Client.Delete(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	e.WaitGone(t, "", c.Name, &apisv1.NodeClaim{})
}

func testInsufficientCapacity(t *testing.T, e *ctrltest.Env, m *ctrltest.Manager) {
	spec := ctrltest.FastSpec()
	spec.Zones = []string{"us-east-1a"}
	spec.CapacityPools = []simv1alpha1.CapacityPool{{InstanceType: "m5.large", CapacityType: "on-demand", Capacity: 0}}
	e.NodeClass(t, "ice", spec)
	claim := ctrltest.NewClaim("ice-1", "default", "ice",
		ctrltest.Req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large"),
		ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand))
	e.Create(t, claim)
	e.WaitEvent(t, claim.Name, lifecycle.ReasonInsufficientCapacity)
	e.WaitGone(t, "", claim.Name, &apisv1.NodeClaim{})
	if !m.Unavailable.IsUnavailable("m5.large", "us-east-1a", apisv1.CapacityTypeOnDemand) {
		t.Error("the exhausted offering is not marked unavailable")
	}
	if m.Unavailable.IsUnavailable("m5.large", "us-east-1a", apisv1.CapacityTypeSpot) {
		t.Error("the spot offering, which was not tried, is marked unavailable")
	}
	np := &apisv1.NodePool{Spec: apisv1.NodePoolSpec{Template: apisv1.NodeClaimTemplate{Spec: apisv1.NodeClaimTemplateSpec{NodeClassRef: ctrltest.NodeClassRef("ice")}}}}
	types, err := m.Provider.GetInstanceTypes(context.Background(), np)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range m.Unavailable.Apply(types) {
		if it.Name != "m5.large" {
			continue
		}
		for _, o := range it.Offerings {
			if o.CapacityType == apisv1.CapacityTypeOnDemand && o.Available {
				t.Errorf("Apply leaves %s %s available", o.Zone, o.CapacityType)
			}
		}
	}
}

func testRegistrationTimeout(t *testing.T, e *ctrltest.Env, m *ctrltest.Manager) {
	spec := ctrltest.FastSpec()
	spec.RegistrationDelay = ctrltest.Dur("1h")
	e.NodeClass(t, "unregistered", spec)
	claim := ctrltest.NewClaim("unregistered-1", "default", "unregistered",
		ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand))
	e.Create(t, claim)
	launched := e.WaitCondition(t, claim.Name, apisv1.ConditionTypeLaunched)
	if cond := launched.GetCondition(apisv1.ConditionTypeRegistered); cond != nil && cond.Status == metav1.ConditionTrue {
		t.Fatalf("registered without a Node: %+v", cond)
	}
	e.WaitEvent(t, claim.Name, lifecycle.ReasonRegistrationTimeout)
	e.WaitGone(t, "", claim.Name, &apisv1.NodeClaim{})
	if age := time.Since(launched.CreationTimestamp.Time); age < 5*time.Second {
		t.Errorf("deleted %v after creation, before the 6s registration timeout", age)
	}
	if _, err := m.Provider.Get(context.Background(), launched.Status.ProviderID); !cloudprovider.IsNodeClaimNotFound(err) {
		t.Errorf("the instance of the deleted claim: %v", err)
	}
}

func testLaunchTimeout(t *testing.T, e *ctrltest.Env) {
	claim := ctrltest.NewClaim("nonodeclass-1", "default", "absent", ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand))
	e.Create(t, claim)
	ctrltest.Eventually(t, "Launched=False for the missing SimNodeClass", func() (bool, string) {
		c := e.Claim(t, claim.Name)
		if c == nil {
			return false, "deleted already"
		}
		cond := c.GetCondition(apisv1.ConditionTypeLaunched)
		return cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason == lifecycle.ReasonNodeClassNotReady, fmt.Sprintf("%+v", cond)
	})
	e.WaitEvent(t, claim.Name, lifecycle.ReasonLaunchTimeout)
	e.WaitGone(t, "", claim.Name, &apisv1.NodeClaim{})
}

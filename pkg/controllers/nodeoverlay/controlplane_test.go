package nodeoverlay_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/apis/v1alpha1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/ctrltest"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeoverlay"
	"github.com/tenon-sh/tenon/pkg/controllers/provisioning"
	"github.com/tenon-sh/tenon/pkg/events"
	"github.com/tenon-sh/tenon/pkg/state"
)

// prices records what the provisioner planned each pod's claim at, and every new claim's price.
type prices struct {
	mu     sync.Mutex
	pod    map[string]float64
	claims []float64
}

func (p *prices) record(res *provisioning.Result, _, _ time.Time) {
	if res.Plan == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range res.Plan.Claims {
		p.claims = append(p.claims, c.Price)
		for _, pod := range c.Pods {
			p.pod[pod.Name] = c.Price
		}
	}
}

func (p *prices) of(name string) (float64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.pod[name]
	return v, ok
}

// since returns the prices of the claims planned after the first n.
func (p *prices) since(n int) []float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.claims[n:])
}

func (p *prices) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.claims)
}

// TestOnControlPlane runs the overlay controller and a provisioner planning through Decorate
// against a real control plane with the simulated cloud.
func TestOnControlPlane(t *testing.T) {
	e := ctrltest.Start(t)
	e.Namespace(t, "overlays")
	planned := &prices{pod: map[string]float64{}}
	store := nodeoverlay.NewStore(true)
	cluster := state.NewCluster(clock.RealClock{})
	mopts := ctrltest.FastOptions()
	mopts.Setup = func(mgr manager.Manager, m *ctrltest.Manager) error {
		if err := cluster.Register(context.Background(), mgr.GetCache()); err != nil {
			return err
		}
		if _, err := nodeoverlay.Register(mgr, nodeoverlay.Deps{Cloud: m.Provider, Store: store}, nodeoverlay.Options{Enabled: true, Resync: 2 * time.Second}); err != nil {
			return err
		}
		rec := events.New(mgr.GetEventRecorderFor("tenon"), events.Options{}) //nolint:staticcheck // as the operator records
		p := provisioning.New(provisioning.Deps{Client: mgr.GetClient(), Cluster: cluster, Cloud: nodeoverlay.Decorate(m.Provider, store),
			Filter: m.Unavailable, Recorder: rec, Log: mgr.GetLogger().WithName("provisioner")},
			provisioning.Options{BatchIdle: 100 * time.Millisecond, BatchMax: time.Second, OnBatch: planned.record})
		store.OnChange(p.Trigger)
		if err := p.Register(context.Background(), mgr.GetCache()); err != nil {
			return err
		}
		return mgr.Add(p)
	}
	mopts.Launcher = func(p cloudprovider.CloudProvider) cloudprovider.CloudProvider { return nodeoverlay.Decorate(p, store) }
	e.StartManager(t, mopts)
	t.Run("parallel", func(t *testing.T) {
		t.Run("TheLaunchFollowsTheOverlaidPrices", func(t *testing.T) { t.Parallel(); testLaunch(t, e) })
		t.Run("PriceIsWhatTheProvisionerPlansWith", func(t *testing.T) { t.Parallel(); testPrice(t, e, planned) })
		t.Run("CapacityMakesAPodSchedulable", func(t *testing.T) { t.Parallel(); testCapacity(t, e) })
		t.Run("ConflictAndRuntimeValidationAreReported", func(t *testing.T) { t.Parallel(); testStatus(t, e) })
		t.Run("TheAPIServerRefusesWhatTheSchemaForbids", func(t *testing.T) { t.Parallel(); testSchema(t, e) })
	})
	t.Run("GateOff", func(t *testing.T) { testGateOff(t, e) })
}

func newPool(t *testing.T, e *ctrltest.Env, name string, types ...string) {
	t.Helper()
	e.NodeClass(t, name, ctrltest.FastSpec())
	np := &apisv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
	np.Spec.Template.Spec.NodeClassRef = ctrltest.NodeClassRef(name)
	np.Spec.Template.Spec.Requirements = []apisv1.NodeSelectorRequirementWithMinValues{
		ctrltest.Req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, types...),
		ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand),
	}
	e.Create(t, np)
}

func pendingPod(name, pool string, requests corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "overlays", Name: name},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{apisv1.NodePoolLabelKey: pool},
			Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: requests, Limits: limitsOf(requests)}}},
		},
	}
}

// limitsOf returns the extended resources of requests (which need equal limits).
func limitsOf(requests corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for n, q := range requests {
		if strings.Contains(string(n), "/") {
			out[n] = q
		}
	}
	return out
}

func newOverlay(name string, weight int32, reqs []v1alpha1.NodeSelectorRequirement) *v1alpha1.NodeOverlay {
	o := &v1alpha1.NodeOverlay{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if weight > 0 {
		o.Spec.Weight = &weight
	}
	o.Spec.Requirements = reqs
	return o
}

// typeIs selects instance types of one NodePool (the subtests run side by side).
func typeIs(pool string, names ...string) []v1alpha1.NodeSelectorRequirement {
	return []v1alpha1.NodeSelectorRequirement{
		{Key: apisv1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: names},
		{Key: apisv1.NodePoolLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{pool}},
	}
}

func waitCondition(t *testing.T, e *ctrltest.Env, name string, status metav1.ConditionStatus, reason string) *v1alpha1.NodeOverlay {
	t.Helper()
	var o *v1alpha1.NodeOverlay
	ctrltest.Eventually(t, "nodeoverlay "+name+" ValidationSucceeded="+string(status)+" "+reason, func() (bool, string) {
		o = &v1alpha1.NodeOverlay{}
		if !e.Get(t, "", name, o) {
			return false, "not found"
		}
		c, r := o.GetCondition(v1alpha1.ConditionTypeValidationSucceeded), o.GetCondition(apisv1.ConditionTypeReady)
		if c == nil || r == nil {
			return false, "no condition"
		}
		return c.Status == status && c.Reason == reason && r.Status == status, string(c.Status) + " " + c.Reason + ": " + c.Message
	})
	return o
}

// An overlay's fixed price is the price the provisioner plans a claim at: m5.large's on-demand
// price before, the overlay's after.
func testPrice(t *testing.T, e *ctrltest.Env, planned *prices) {
	newPool(t, e, "ovl-price", "m5.large")
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	e.Create(t, pendingPod("before", "ovl-price", cpu))
	var before float64
	ctrltest.Eventually(t, "a claim is planned for the first pod", func() (bool, string) {
		var ok bool
		before, ok = planned.of("before")
		return ok, ""
	})
	if before < 0.05 || before > 0.2 {
		t.Fatalf("m5.large planned at $%g/h without an overlay; want its on-demand price", before)
	}
	o := newOverlay("ovl-price", 0, typeIs("ovl-price", "m5.large"))
	o.Spec.Price = new("0.5")
	e.Create(t, o)
	waitCondition(t, e, "ovl-price", metav1.ConditionTrue, v1alpha1.ConditionTypeValidationSucceeded)
	// The second pod does not fit beside the first: a second m5.large is planned (the solver
	// may put either pod on it).
	n := planned.count()
	e.Create(t, pendingPod("after", "ovl-price", corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}))
	ctrltest.Eventually(t, "the next claim is planned at the overlay's price", func() (bool, string) {
		got := planned.since(n)
		return len(got) > 0 && got[0] == 0.5, fmt.Sprint(got)
	})
}

// A pod asking for an extended resource no instance type reports cannot be planned for; an
// overlay adding it to one type gets that type bought.
func testCapacity(t *testing.T, e *ctrltest.Env) {
	newPool(t, e, "ovl-cap", "m5.large", "m5.xlarge", "c5.xlarge")
	dongle := corev1.ResourceName("example.com/dongle")
	e.Create(t, pendingPod("dongle", "ovl-cap", corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), dongle: resource.MustParse("1")}))
	e.WaitEvent(t, "dongle", provisioning.EventFailedScheduling)
	o := newOverlay("ovl-cap", 0, typeIs("ovl-cap", "m5.xlarge"))
	o.Spec.Capacity = corev1.ResourceList{dongle: resource.MustParse("2")}
	e.Create(t, o)
	ctrltest.Eventually(t, "a claim of m5.xlarge alone is created for the pod", func() (bool, string) {
		list := &apisv1.NodeClaimList{}
		if err := e.Client.List(context.Background(), list, client.MatchingLabels{apisv1.NodePoolLabelKey: "ovl-cap"}); err != nil {
			t.Fatal(err)
		}
		for _, nc := range list.Items {
			for _, r := range nc.Spec.Requirements {
				if r.Key == apisv1.LabelInstanceType {
					return len(r.Values) == 1 && r.Values[0] == "m5.xlarge", strings.Join(r.Values, ",")
				}
			}
		}
		return false, "no claim"
	})
}

// Two overlays of one weight pricing the same type conflict: the later name is applied, the
// other reports Conflict. A negative capacity passes the schema but not runtime validation.
func testStatus(t *testing.T, e *ctrltest.Env) {
	newPool(t, e, "ovl-status", "c5.large")
	a := newOverlay("ovl-conflict-a", 7, typeIs("ovl-status", "c5.large"))
	a.Spec.PriceAdjustment = new("+10%")
	b := newOverlay("ovl-conflict-b", 7, typeIs("ovl-status", "c5.large"))
	b.Spec.PriceAdjustment = new("-10%")
	e.Create(t, a)
	e.Create(t, b)
	got := waitCondition(t, e, "ovl-conflict-a", metav1.ConditionFalse, v1alpha1.ReasonConflict)
	if msg := got.GetCondition(v1alpha1.ConditionTypeValidationSucceeded).Message; !strings.Contains(msg, "ovl-conflict-b") {
		t.Errorf("the conflict does not name the other overlay: %q", msg)
	}
	waitCondition(t, e, "ovl-conflict-b", metav1.ConditionTrue, v1alpha1.ConditionTypeValidationSucceeded)

	neg := newOverlay("ovl-negative", 0, typeIs("ovl-status", "c5.large"))
	neg.Spec.Capacity = corev1.ResourceList{"example.com/widget": resource.MustParse("-1")}
	e.Create(t, neg)
	got = waitCondition(t, e, "ovl-negative", metav1.ConditionFalse, v1alpha1.ReasonRuntimeValidation)
	if msg := got.GetCondition(v1alpha1.ConditionTypeValidationSucceeded).Message; !strings.Contains(msg, "example.com/widget") {
		t.Errorf("the validation failure does not name the resource: %q", msg)
	}
}

func testSchema(t *testing.T, e *ctrltest.Env) {
	for name, mutate := range map[string]func(*v1alpha1.NodeOverlay){
		"both": func(o *v1alpha1.NodeOverlay) { o.Spec.Price, o.Spec.PriceAdjustment = new("1"), new("+1") },
		"word": func(o *v1alpha1.NodeOverlay) { o.Spec.Price = new("cheap") },
		"pct":  func(o *v1alpha1.NodeOverlay) { o.Spec.PriceAdjustment = new("-150%") },
		"cpu": func(o *v1alpha1.NodeOverlay) {
			o.Spec.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		},
		"weight": func(o *v1alpha1.NodeOverlay) { o.Spec.Weight = new(int32(0)) },
		"notin": func(o *v1alpha1.NodeOverlay) {
			o.Spec.Requirements = []v1alpha1.NodeSelectorRequirement{{Key: "a", Operator: corev1.NodeSelectorOpNotIn}}
		},
	} {
		o := newOverlay("ovl-schema-"+name, 0, nil)
		mutate(o)
		if err := e.Client.Create(context.Background(), o); err == nil {
			t.Errorf("%s: the API server accepted %+v", name, o.Spec)
		}
	}
}

// With the gate off, an overlay is not applied and says so once, in a warning event.
func testGateOff(t *testing.T, e *ctrltest.Env) {
	rec := record.NewFakeRecorder(10)
	if _, err := nodeoverlay.New(nodeoverlay.Deps{Client: e.Client, Store: nodeoverlay.NewStore(true), Recorder: rec}, nodeoverlay.Options{Enabled: true}); err == nil {
		t.Fatal("New accepted no Cloud with the gate on")
	}
	store := nodeoverlay.NewStore(false)
	c, err := nodeoverlay.New(nodeoverlay.Deps{Client: e.Client, Store: store, Recorder: rec}, nodeoverlay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := c.Reconcile(context.Background(), reconcile.Request{}); err != nil {
			t.Fatal(err)
		}
	}
	var warned []string
	for len(rec.Events) > 0 {
		ev := <-rec.Events
		if !strings.Contains(ev, nodeoverlay.EventDisabled) || !strings.Contains(ev, "NodeOverlay=true") {
			t.Errorf("event %q does not say the gate is off", ev)
		}
		warned = append(warned, ev)
	}
	list := &v1alpha1.NodeOverlayList{}
	if err := e.Client.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	if len(warned) != len(list.Items) || len(warned) == 0 {
		t.Errorf("%d warnings for %d overlays over two reconciles; want one each", len(warned), len(list.Items))
	}
	if store.Evaluation() != nil {
		t.Error("the gate is off, yet the overlays were evaluated")
	}
}

// c5.large is cheaper than m5.large, both hold the pod, and the claim offers both; an overlay
// making c5.large dearer makes the launch take m5.large, as the plan does (the cloud's own
// prices would take c5.large).
func testLaunch(t *testing.T, e *ctrltest.Env) {
	newPool(t, e, "ovl-launch", "m5.large", "c5.large")
	o := newOverlay("ovl-launch", 0, typeIs("ovl-launch", "c5.large"))
	o.Spec.PriceAdjustment = new("+1")
	e.Create(t, o)
	waitCondition(t, e, "ovl-launch", metav1.ConditionTrue, v1alpha1.ConditionTypeValidationSucceeded)
	e.Create(t, pendingPod("launch", "ovl-launch", corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}))
	ctrltest.Eventually(t, "the pool's node launches as m5.large", func() (bool, string) {
		list := &corev1.NodeList{}
		if err := e.Client.List(context.Background(), list, client.MatchingLabels{apisv1.NodePoolLabelKey: "ovl-launch"}); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) == 0 {
			return false, "no node"
		}
		typ := list.Items[0].Labels[corev1.LabelInstanceTypeStable]
		return typ == "m5.large", typ
	})
}

package provisioning_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/tenon-sh/tenon/internal/recovery"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	disruptionctrl "github.com/tenon-sh/tenon/pkg/controllers/disruption"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/ctrltest"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/lifecycle"
	"github.com/tenon-sh/tenon/pkg/controllers/provisioning"
	"github.com/tenon-sh/tenon/pkg/events"
	"github.com/tenon-sh/tenon/pkg/state"
)

// injector panics in the next n work items of a controller, through recovery's test hook.
type injector struct {
	mu    sync.Mutex
	armed map[string]int
}

func (in *injector) arm(controller string, n int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.armed[controller] += n
}

func (in *injector) hook(controller string) {
	in.mu.Lock()
	fire := in.armed[controller] > 0
	if fire {
		in.armed[controller]--
	}
	in.mu.Unlock()
	if fire {
		panic("injected by the test in " + controller)
	}
}

// TestControllersSurvivePanics injects a panic into a provisioning batch, a disruption pass
// and a NodeClaim reconcile of a controller running on a real control plane, and shows that
// each is counted, recorded as a ControllerPanic event, skipped, and that the controller goes
// on working.
func TestControllersSurvivePanics(t *testing.T) {
	e := ctrltest.Start(t)
	in := &injector{armed: map[string]int{}}
	t.Cleanup(recovery.SetTestHook(in.hook))

	e.NodeClass(t, "panics", ctrltest.FastSpec())
	np := &apisv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "panics"}}
	np.Spec.Template.Spec.NodeClassRef = ctrltest.NodeClassRef("panics")
	np.Spec.Template.Spec.Requirements = []apisv1.NodeSelectorRequirementWithMinValues{
		ctrltest.Req(apisv1.LabelInstanceFamily, corev1.NodeSelectorOpIn, "m5"),
		ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand),
	}
	np.Spec.Disruption.ConsolidateAfter = apisv1.NillableDuration{} // Never: passes decide nothing
	e.Create(t, np)
	e.Namespace(t, "panics")

	var passes atomic.Int64
	cluster := state.NewCluster(clock.RealClock{})
	mopts := ctrltest.FastOptions()
	mopts.Setup = func(mgr manager.Manager, m *ctrltest.Manager) error {
		if err := cluster.Register(context.Background(), mgr.GetCache()); err != nil {
			return err
		}
		rec := events.New(mgr.GetEventRecorderFor("tenon"), events.Options{}) //nolint:staticcheck // as the operator records
		p := provisioning.New(provisioning.Deps{Client: mgr.GetClient(), Cluster: cluster, Cloud: m.Provider, Filter: m.Unavailable,
			Recorder: rec, Log: mgr.GetLogger().WithName("provisioner")},
			provisioning.Options{BatchIdle: 100 * time.Millisecond, BatchMax: time.Second})
		if err := p.Register(context.Background(), mgr.GetCache()); err != nil {
			return err
		}
		if err := mgr.Add(p); err != nil {
			return err
		}
		_, err := disruptionctrl.Register(mgr, disruptionctrl.Deps{Cluster: cluster, Cloud: m.Provider, Filter: m.Unavailable, Recorder: rec},
			disruptionctrl.Options{PassInterval: 200 * time.Millisecond, OnPass: func(disruptionctrl.PassResult) { passes.Add(1) }})
		return err
	}
	e.StartManager(t, mopts)

	t.Run("ProvisioningBatch", func(t *testing.T) {
		before := testutil.ToFloat64(recovery.Panics.WithLabelValues(provisioning.ControllerName))
		in.arm(provisioning.ControllerName, 1)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "panics", Name: "web"},
			Spec: corev1.PodSpec{
				NodeSelector: map[string]string{apisv1.NodePoolLabelKey: "panics"},
				Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}},
			},
		}
		e.Create(t, pod)
		ev := e.WaitEvent(t, "panics", recovery.EventPanic)
		if ev.InvolvedObject.Kind != "NodePool" || !strings.Contains(ev.Message, "injected by the test in provisioning") {
			t.Errorf("the panic event must be on the NodePool and name the panic: %+v %q", ev.InvolvedObject, ev.Message)
		}
		if got := testutil.ToFloat64(recovery.Panics.WithLabelValues(provisioning.ControllerName)); got != before+1 {
			t.Errorf("tenon_controller_panics_total{controller=provisioning} went from %v to %v, want one more", before, got)
		}
		// The loop went on: the batch after the one that panicked plans the pod.
		ctrltest.Eventually(t, "the pod runs on a node tenon bought after the panic", func() (bool, string) {
			got := &corev1.Pod{}
			e.Get(t, "panics", "web", got)
			return got.Status.Phase == corev1.PodRunning, string(got.Status.Phase)
		})
	})

	t.Run("DisruptionPass", func(t *testing.T) {
		before := testutil.ToFloat64(recovery.Panics.WithLabelValues(disruptionctrl.ControllerName))
		in.arm(disruptionctrl.ControllerName, 1)
		ctrltest.Eventually(t, "a disruption pass panics", func() (bool, string) {
			return testutil.ToFloat64(recovery.Panics.WithLabelValues(disruptionctrl.ControllerName)) == before+1, ""
		})
		after := passes.Load()
		ctrltest.Eventually(t, "disruption passes go on after the panic", func() (bool, string) {
			return passes.Load() >= after+2, ""
		})
		found := false
		for _, ev := range e.Events(t, "panics", recovery.EventPanic) {
			found = found || strings.Contains(ev.Message, "injected by the test in disruption")
		}
		if !found {
			t.Error("no ControllerPanic event about the disruption pass on the NodePool")
		}
	})

	t.Run("NodeClaimReconcile", func(t *testing.T) {
		before := testutil.ToFloat64(recovery.Panics.WithLabelValues(lifecycle.ControllerName))
		in.arm(lifecycle.ControllerName, 1)
		nc := ctrltest.NewClaim("panics-claim", "panics", "panics",
			ctrltest.Req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large"),
			ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand))
		e.Create(t, nc)
		ev := e.WaitEvent(t, "panics-claim", recovery.EventPanic)
		if ev.InvolvedObject.Kind != "NodeClaim" {
			t.Errorf("the panic event must be on the NodeClaim reconciled: %+v", ev.InvolvedObject)
		}
		if got := testutil.ToFloat64(recovery.Panics.WithLabelValues(lifecycle.ControllerName)); got != before+1 {
			t.Errorf("tenon_controller_panics_total{controller=%s} went from %v to %v, want one more", lifecycle.ControllerName, before, got)
		}
		// The reconcile is retried, and the claim goes through its lifecycle.
		e.WaitCondition(t, "panics-claim", apisv1.ConditionTypeInitialized)
	})
}

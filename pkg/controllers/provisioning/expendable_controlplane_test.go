package provisioning_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	disruptionctrl "github.com/tenon-sh/tenon/pkg/controllers/disruption"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/ctrltest"
	"github.com/tenon-sh/tenon/pkg/controllers/provisioning"
	"github.com/tenon-sh/tenon/pkg/events"
	"github.com/tenon-sh/tenon/pkg/snapshot"
	"github.com/tenon-sh/tenon/pkg/state"
)

// Expendable pods (priority below -10, Cluster Autoscaler's cutoff) on a real control plane:
// one pending alone gets no NodeClaim and an Expendable event; one that kube-scheduler puts in
// the room a node has left runs there; and once the node's other pod is gone, the node is
// empty and removed, the expendable pod with it.
func TestExpendablePods(t *testing.T) {
	e := ctrltest.Start(t)
	e.NodeClass(t, "expendable", ctrltest.FastSpec())
	np := &apisv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "expendable"}}
	np.Spec.Template.Spec.NodeClassRef = ctrltest.NodeClassRef("expendable")
	np.Spec.Template.Spec.Requirements = []apisv1.NodeSelectorRequirementWithMinValues{
		ctrltest.Req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large"),
		ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand),
	}
	np.Spec.Disruption.ConsolidateAfter = apisv1.NewNillableDuration(0)
	e.Create(t, np)
	e.Namespace(t, "expendable")
	e.Create(t, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "filler"}, Value: -20})

	popts, dopts := fastLoops()
	startLoops(t, e, popts, dopts)

	newPod := func(name, cpu, class string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "expendable", Name: name},
			Spec: corev1.PodSpec{
				NodeSelector: map[string]string{apisv1.NodePoolLabelKey: "expendable"}, PriorityClassName: class,
				TerminationGracePeriodSeconds: new(int64(1)),
				Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
			},
		}
	}
	claims := func() []apisv1.NodeClaim {
		list := &apisv1.NodeClaimList{}
		if err := e.Client.List(context.Background(), list, client.MatchingLabels{apisv1.NodePoolLabelKey: "expendable"}); err != nil {
			t.Fatal(err)
		}
		return list.Items
	}

	// Alone, an expendable pod buys nothing.
	e.Create(t, newPod("lonely", "1", "filler"))
	e.WaitEvent(t, "lonely", provisioning.EventExpendable)
	time.Sleep(2 * time.Second) // several batches
	if n := len(claims()); n != 0 {
		t.Fatalf("%d NodeClaims for an expendable pod alone; want none", n)
	}

	// A pod that counts buys a node; the expendable one then runs in the room it leaves.
	e.Create(t, newPod("web", "500m", ""))
	ctrltest.Eventually(t, "both pods run", func() (bool, string) {
		for _, name := range []string{"web", "lonely"} {
			p := &corev1.Pod{}
			if !e.Get(t, "expendable", name, p) || p.Status.Phase != corev1.PodRunning {
				return false, name + " " + string(p.Status.Phase)
			}
		}
		return true, ""
	})
	if n := len(claims()); n != 1 {
		t.Fatalf("%d NodeClaims; want the one web needed", n)
	}

	// Without web, the node holds an expendable pod only: it is empty, and removed.
	web := &corev1.Pod{}
	e.Get(t, "expendable", "web", web)
	if err := e.Client.Delete(context.Background(), web, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	ctrltest.Eventually(t, "the node of the expendable pod alone is removed", func() (bool, string) {
		live := 0
		for _, nc := range claims() {
			if nc.DeletionTimestamp == nil {
				live++
			}
		}
		return live == 0, ""
	})
}

// startLoops starts a manager with a provisioner (popts) and, when dopts is set, a disruption
// loop; the cluster mirror follows PodGroups too (the test control plane serves them), as the
// operator's does where they are served.
func startLoops(t *testing.T, e *ctrltest.Env, popts provisioning.Options, dopts *disruptionctrl.Options) {
	t.Helper()
	cluster := state.NewCluster(clock.RealClock{})
	mopts := ctrltest.FastOptions()
	mopts.Setup = func(mgr manager.Manager, m *ctrltest.Manager) error {
		if err := cluster.Register(context.Background(), mgr.GetCache()); err != nil {
			return err
		}
		if err := cluster.RegisterPodGroups(context.Background(), mgr.GetCache()); err != nil {
			return err
		}
		rec := events.New(mgr.GetEventRecorderFor("tenon"), events.Options{}) //nolint:staticcheck // as the operator records
		p := provisioning.New(provisioning.Deps{Client: mgr.GetClient(), Cluster: cluster, Cloud: m.Provider, Filter: m.Unavailable,
			Recorder: rec, Log: mgr.GetLogger().WithName("provisioner")}, popts)
		if err := p.Register(context.Background(), mgr.GetCache()); err != nil {
			return err
		}
		m.BeforeRegister = p.BeforeRegister
		if err := mgr.Add(p); err != nil {
			return err
		}
		if dopts == nil {
			return nil
		}
		_, err := disruptionctrl.Register(mgr, disruptionctrl.Deps{Cluster: cluster, Cloud: m.Provider, Filter: m.Unavailable, Recorder: rec}, *dopts)
		return err
	}
	e.StartManager(t, mopts)
}

// fastLoops are the provisioner's and the disruption loop's options on short timers.
func fastLoops() (provisioning.Options, *disruptionctrl.Options) {
	return provisioning.Options{BatchIdle: 100 * time.Millisecond, BatchMax: time.Second},
		&disruptionctrl.Options{PassInterval: 200 * time.Millisecond, ValidationDelay: 200 * time.Millisecond}
}

// A NodePool annotated tenon.sh/zone-balance-max-skew=1 spreads the nodes of pods that do not
// spread themselves over its three zones; without it they all go to one zone.
func TestZoneBalancedNodePool(t *testing.T) {
	e := ctrltest.Start(t)
	spec := ctrltest.FastSpec()
	spec.Zones = []string{"us-east-1a", "us-east-1b", "us-east-1c"}
	e.NodeClass(t, "balanced", spec)
	for _, name := range []string{"balanced", "unbalanced"} {
		np := &apisv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if name == "balanced" {
			np.Annotations = map[string]string{snapshot.AnnotationZoneBalanceMaxSkew: "1"}
		}
		np.Spec.Template.Spec.NodeClassRef = ctrltest.NodeClassRef("balanced")
		np.Spec.Template.Spec.Requirements = []apisv1.NodeSelectorRequirementWithMinValues{
			ctrltest.Req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large"),
			ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand),
		}
		e.Create(t, np)
	}
	e.Namespace(t, "balanced")
	popts, dopts := fastLoops()
	startLoops(t, e, popts, dopts)
	for i := range 12 {
		pool := []string{"balanced", "unbalanced"}[i%2]
		e.Create(t, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "balanced", Name: fmt.Sprintf("%s-%d", pool, i/2)},
			Spec: corev1.PodSpec{
				NodeSelector: map[string]string{apisv1.NodePoolLabelKey: pool},
				Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}}}},
			},
		})
	}
	zones := func(pool string) map[string]int {
		list := &corev1.NodeList{}
		if err := e.Client.List(context.Background(), list, client.MatchingLabels{apisv1.NodePoolLabelKey: pool}); err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, n := range list.Items {
			out[n.Labels[apisv1.LabelZone]]++
		}
		return out
	}
	ctrltest.Eventually(t, "six nodes in each pool", func() (bool, string) {
		b, u := zones("balanced"), zones("unbalanced")
		total := func(m map[string]int) int {
			n := 0
			for _, v := range m {
				n += v
			}
			return n
		}
		return total(b) == 6 && total(u) == 6, fmt.Sprint(b, u)
	})
	if b := zones("balanced"); b["us-east-1a"] != 2 || b["us-east-1b"] != 2 || b["us-east-1c"] != 2 {
		t.Errorf("balanced pool's nodes by zone: %v; want two in each", b)
	}
	if u := zones("unbalanced"); len(u) != 1 {
		t.Logf("the unbalanced pool's nodes by zone: %v (one zone expected: every zone has the same price)", u)
	}
}

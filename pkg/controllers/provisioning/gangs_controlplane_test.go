package provisioning_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/ctrltest"
	"github.com/tenon-sh/tenon/pkg/controllers/provisioning"
	"github.com/tenon-sh/tenon/pkg/state"
)

// Gangs on a real control plane (kube-apiserver serving PodGroups, kube-scheduler gang
// scheduling them): a PodGroup of four pods with a gang policy and a zone constraint gets four
// NodeClaims, all in one zone, and all four pods bind; a second group that the NodePool's limit
// can hold only part of gets no NodeClaim, and its pods say why.
func TestGangsOnControlPlane(t *testing.T) {
	e := ctrltest.Start(t)
	if served, err := state.PodGroupsServed(discovery.NewDiscoveryClientForConfigOrDie(e.CP.RESTConfig())); err != nil || !served {
		t.Fatalf("the control plane does not serve PodGroups (%v): it runs with %s", err, "GenericWorkload")
	}
	e.NodeClass(t, "gangs", ctrltest.FastSpec())
	pool := func(name, cpuLimit string) {
		np := &apisv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
		np.Spec.Template.Spec.NodeClassRef = ctrltest.NodeClassRef("gangs")
		np.Spec.Template.Spec.Requirements = []apisv1.NodeSelectorRequirementWithMinValues{
			ctrltest.Req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.xlarge"),
			ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand),
		}
		if cpuLimit != "" {
			np.Spec.Limits = apisv1.Limits{corev1.ResourceCPU: resource.MustParse(cpuLimit)}
		}
		e.Create(t, np)
	}
	pool("gangs", "")
	pool("small", "8") // two m5.xlarge
	// Eight-GPU machines, three zones: a training job of four 8-GPU workers.
	gpu8 := &apisv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "gpu8"}}
	gpu8.Spec.Template.Spec.NodeClassRef = ctrltest.NodeClassRef("gangs-gpu")
	gpu8.Spec.Template.Spec.Requirements = []apisv1.NodeSelectorRequirementWithMinValues{
		ctrltest.Req(apisv1.LabelInstanceFamily, corev1.NodeSelectorOpIn, "g6", "g5", "p4d"),
		ctrltest.Req(apisv1.LabelInstanceGPUCount, corev1.NodeSelectorOpIn, "8"),
		ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand),
	}
	gpuSpec := ctrltest.FastSpec()
	gpuSpec.Zones = []string{"us-east-1a", "us-east-1b", "us-east-1c"}
	e.NodeClass(t, "gangs-gpu", gpuSpec)
	e.Create(t, gpu8)
	e.Namespace(t, "gangs")

	popts, _ := fastLoops()
	startLoops(t, e, popts, nil)

	group := func(name string, minCount int32, key string) {
		pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "gangs", Name: name}}
		pg.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount}
		if key != "" {
			pg.Spec.SchedulingConstraints = &schedulingv1beta1.PodGroupSchedulingConstraints{Topology: []schedulingv1beta1.TopologyConstraint{{Key: key}}}
		}
		e.Create(t, pg)
	}
	threeCPUs := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}}
	members := func(group, pool string, n int) { gangMembers(t, e, group, pool, n, threeCPUs) }
	claims := func(pool string) []apisv1.NodeClaim {
		list := &apisv1.NodeClaimList{}
		if err := e.Client.List(context.Background(), list, client.MatchingLabels{apisv1.NodePoolLabelKey: pool}); err != nil {
			t.Fatal(err)
		}
		return list.Items
	}

	// Four pods of three CPUs each: one m5.xlarge apiece, all in one zone.
	group("train", 4, corev1.LabelTopologyZone)
	members("train", "gangs", 4)
	ctrltest.Eventually(t, "the gang's four pods run", func() (bool, string) {
		running := 0
		for i := range 4 {
			p := &corev1.Pod{}
			if e.Get(t, "gangs", fmt.Sprintf("train-%d", i), p) && p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == 4, fmt.Sprintf("%d of 4 running", running)
	})
	zones := map[string]bool{}
	for _, nc := range claims("gangs") {
		for _, r := range nc.Spec.Requirements {
			if r.Key == corev1.LabelTopologyZone {
				if len(r.Values) != 1 || r.Operator != corev1.NodeSelectorOpIn {
					t.Fatalf("NodeClaim %s is not pinned to one zone: %v", nc.Name, r)
				}
				zones[r.Values[0]] = true
			}
		}
	}
	if n := len(claims("gangs")); n != 4 || len(zones) != 1 {
		t.Fatalf("%d NodeClaims in zones %v: want four in one zone", n, zones)
	}

	// Four workers of eight GPUs each: four 8-GPU nodes, all in one zone, and all four bind
	// once the nodes' GPUs are published.
	group("llm", 4, corev1.LabelTopologyZone)
	gangMembers(t, e, "llm", "gpu8", 4, corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")},
		Limits:   corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")}})
	ctrltest.Eventually(t, "the four 8-GPU workers run", func() (bool, string) {
		running := 0
		for i := range 4 {
			p := &corev1.Pod{}
			if e.Get(t, "gangs", fmt.Sprintf("llm-%d", i), p) && p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == 4, fmt.Sprintf("%d of 4 running", running)
	})
	gpuZones := map[string]bool{}
	for i := range 4 {
		p := &corev1.Pod{}
		e.Get(t, "gangs", fmt.Sprintf("llm-%d", i), p)
		n := e.Node(t, p.Spec.NodeName)
		if n == nil {
			t.Fatalf("pod llm-%d runs on node %q, which is gone", i, p.Spec.NodeName)
		}
		gpus := n.Status.Allocatable["nvidia.com/gpu"]
		if gpus.Value() != 8 {
			t.Errorf("pod llm-%d runs on %s with %s GPUs", i, n.Name, gpus.String())
		}
		gpuZones[n.Labels[corev1.LabelTopologyZone]] = true
	}
	if n := len(claims("gpu8")); n != 4 || len(gpuZones) != 1 {
		t.Fatalf("%d NodeClaims for the 8-GPU gang, its pods in zones %v: want four nodes in one zone", n, gpuZones)
	}

	// Three pods of three CPUs where the limit leaves room for two nodes: nothing is bought.
	group("tune", 3, "")
	members("tune", "small", 3)
	// kube-scheduler records FailedScheduling too; tenon's names the gang.
	ctrltest.Eventually(t, "tenon's FailedScheduling event naming the gang", func() (bool, string) {
		var seen []string
		for _, ev := range e.Events(t, "tune-0", provisioning.EventFailedScheduling) {
			if strings.Contains(ev.Message, "podgroup gangs/tune needs 3 pods at once") {
				return true, ""
			}
			seen = append(seen, ev.Message)
		}
		return false, strings.Join(seen, " | ")
	})
	time.Sleep(2 * time.Second) // several batches
	if n := len(claims("small")); n != 0 {
		t.Fatalf("%d NodeClaims for a gang the limit cannot hold; want none", n)
	}
}

// A gang whose fourth member cannot launch (its zone holds three of the only instance type
// its NodePool allows) is never left partial: once the gang deadline passes, its three
// NodeClaims are released, the PodGroup says so, their offering is not bought again, and no pod
// of the gang ever binds.
func TestGangReleasedAfterTheDeadline(t *testing.T) {
	e := ctrltest.Start(t)
	spec := ctrltest.FastSpec()
	spec.Zones = []string{"us-east-1a"}
	spec.CapacityPools = []simv1alpha1.CapacityPool{{InstanceType: "m5.xlarge", CapacityType: apisv1.CapacityTypeOnDemand, Capacity: 3}}
	e.NodeClass(t, "scarce", spec)
	np := &apisv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "scarce"}}
	np.Spec.Template.Spec.NodeClassRef = ctrltest.NodeClassRef("scarce")
	np.Spec.Template.Spec.Requirements = []apisv1.NodeSelectorRequirementWithMinValues{
		ctrltest.Req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.xlarge"),
		ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand),
	}
	e.Create(t, np)
	e.Namespace(t, "gangs")
	popts, _ := fastLoops()
	popts.GangDeadline, popts.GangReleaseTTL = 15*time.Second, time.Hour
	startLoops(t, e, popts, nil)

	group := "train"
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "gangs", Name: group}}
	pg.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: 4}
	pg.Spec.SchedulingConstraints = &schedulingv1beta1.PodGroupSchedulingConstraints{Topology: []schedulingv1beta1.TopologyConstraint{{Key: corev1.LabelTopologyZone}}}
	e.Create(t, pg)
	gangMembers(t, e, group, np.Name, 4, corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}})
	live := func() (names []string, launched int) {
		list := &apisv1.NodeClaimList{}
		if err := e.Client.List(context.Background(), list, client.MatchingLabels{apisv1.NodePoolLabelKey: np.Name}); err != nil {
			t.Fatal(err)
		}
		for _, nc := range list.Items {
			if nc.DeletionTimestamp.IsZero() {
				names = append(names, nc.Name)
				if nc.IsTrue(apisv1.ConditionTypeLaunched) {
					launched++
				}
			}
		}
		return names, launched
	}
	bound := func() int {
		n := 0
		for i := range 4 {
			p := &corev1.Pod{}
			if e.Get(t, "gangs", fmt.Sprintf("%s-%d", group, i), p) && p.Spec.NodeName != "" {
				n++
			}
		}
		return n
	}
	ctrltest.Eventually(t, "three of the gang's NodeClaims launch", func() (bool, string) {
		names, launched := live()
		if b := bound(); b > 0 {
			t.Fatalf("%d pods of a gang of 4 bound with capacity for 3", b)
		}
		return launched == 3, fmt.Sprintf("%v, %d launched", names, launched)
	})
	ev := e.WaitEvent(t, group, provisioning.EventGangReleased)
	if !strings.Contains(ev.Message, "0 of its minCount 4 pods were bound") || !strings.Contains(ev.Message, "m5.xlarge/us-east-1a/on-demand") {
		t.Errorf("the PodGroup's event says %q", ev.Message)
	}
	ctrltest.Eventually(t, "the gang's capacity is released", func() (bool, string) {
		names, _ := live()
		return len(names) == 0, fmt.Sprint(names)
	})
	time.Sleep(3 * time.Second) // several batches: nothing is bought again while the offering is marked
	if names, _ := live(); len(names) != 0 || bound() != 0 {
		t.Fatalf("after the release: NodeClaims %v, %d pods bound; want none", names, bound())
	}
}

// gangMembers creates n pods named group-0 … in namespace gangs that name PodGroup group and
// select NodePool pool, each requesting res.
func gangMembers(t *testing.T, e *ctrltest.Env, group, pool string, n int, res corev1.ResourceRequirements) {
	t.Helper()
	for i := range n {
		e.Create(t, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "gangs", Name: fmt.Sprintf("%s-%d", group, i)},
			Spec: corev1.PodSpec{
				SchedulingGroup:               &corev1.PodSchedulingGroup{PodGroupName: &group},
				NodeSelector:                  map[string]string{apisv1.NodePoolLabelKey: pool},
				TerminationGracePeriodSeconds: new(int64(1)),
				Containers:                    []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10", Resources: res}},
			},
		})
	}
}

package e2e

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/controllers/provisioning"
	"github.com/tenon-sh/tenon/pkg/operator"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A Deployment no node can hold becomes NodeClaims, the claims become Nodes, and kube-scheduler
// runs every pod on them.
func TestDeploymentBecomesRunningPods(t *testing.T) {
	e := start(t, operator.Options{})
	e.create(nodeClass("default"), nodePool("general", "default", []string{"m5", "c5"}), deployment("web", 20, "500m", "1Gi"))
	pods := e.podsRunning("web", 20, 90*time.Second)
	claims := e.nodeClaims()
	if len(claims) == 0 {
		t.Fatal("no NodeClaims")
	}
	for i := range claims {
		if !meta.IsStatusConditionTrue(claims[i].Status.Conditions, apisv1.ConditionTypeInitialized) {
			t.Errorf("claim %s not initialized", claimState(&claims[i]))
		}
	}
	onClaim := map[string]bool{}
	for _, n := range e.nodes() {
		onClaim[n.Name] = n.Labels[apisv1.NodePoolLabelKey] == "general"
	}
	for _, p := range pods {
		if !onClaim[p.Spec.NodeName] {
			t.Errorf("pod %s runs on %s, not a node tenon launched", p.Name, p.Spec.NodeName)
		}
	}
	if n := len(e.events(provisioning.EventNominated)); n == 0 {
		t.Error("no Nominated events")
	}
}

// A GPU pod gets a GPU instance, and runs only once the device plugin has added nvidia.com/gpu.
func TestGPUPodWaitsForDevicePlugin(t *testing.T) {
	e := start(t, operator.Options{})
	e.create(nodeClass("gpu", func(nc *simv1alpha1.SimNodeClass) {
		nc.Spec.DevicePluginDelay = &metav1.Duration{Duration: 3 * time.Second}
	}),
		nodePool("gpu", "gpu", []string{"g5", "g6"}),
		deployment("train", 1, "2", "8Gi", func(s *corev1.PodSpec) {
			s.Containers[0].Resources.Limits = corev1.ResourceList{scheduling.ResourceNvidiaGPU: resource.MustParse("1")}
		}))
	pods := e.podsRunning("train", 1, 90*time.Second)
	var node corev1.Node
	if err := e.kube.Get(e.ctx, clientKey(pods[0].Spec.NodeName), &node); err != nil {
		t.Fatal(err)
	}
	if gpu := node.Status.Allocatable[scheduling.ResourceNvidiaGPU]; gpu.Value() < 1 {
		t.Errorf("node %s has no nvidia.com/gpu", node.Name)
	}
	if f := node.Labels[apisv1.LabelInstanceFamily]; f != "g5" && f != "g6" {
		t.Errorf("GPU pod runs on a %s instance", f)
	}
}

// When the cheapest offering's capacity runs out at launch, the claim fails with insufficient
// capacity, the offering is marked unavailable, and the pods are planned again elsewhere.
func TestExhaustedOfferingFallsBack(t *testing.T) {
	e := start(t, operator.Options{})
	class := nodeClass("tight", func(nc *simv1alpha1.SimNodeClass) {
		nc.Spec.Zones = []string{"us-east-1a"}
		nc.Spec.CapacityPools = []simv1alpha1.CapacityPool{{InstanceType: "m5.large", Capacity: 1}}
	})
	// Two pods that may not share a node: the plan asks for two m5.large, and only one exists.
	// The heavier pool may only launch m5.large, so its second claim has nowhere else to go.
	only := func(t string, weight int32) func(*apisv1.NodePool) {
		return func(np *apisv1.NodePool) {
			np.Spec.Weight = &weight
			np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements,
				apisv1.NodeSelectorRequirementWithMinValues{Key: apisv1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{t}})
		}
	}
	e.create(class, nodePool("large", "tight", []string{"m5"}, only("m5.large", 50)), nodePool("xlarge", "tight", []string{"m5"}, only("m5.xlarge", 10)),
		deployment("api", 2, "1", "1Gi", func(s *corev1.PodSpec) {
			s.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
				{TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}}},
			}}}
		}))
	pods := e.podsRunning("api", 2, 90*time.Second)
	types := map[string]int{}
	for _, p := range pods {
		var node corev1.Node
		if err := e.kube.Get(e.ctx, clientKey(p.Spec.NodeName), &node); err != nil {
			t.Fatal(err)
		}
		types[node.Labels[apisv1.LabelInstanceType]]++
	}
	if types["m5.large"] != 1 || len(types) != 2 {
		t.Errorf("want one pod on the single m5.large and one elsewhere, got %v", types)
	}
	if !e.op.Unavailable.IsUnavailable("m5.large", "us-east-1a", apisv1.CapacityTypeOnDemand) {
		t.Error("the exhausted offering is not marked unavailable")
	}
}

// A claim whose instance never registers is deleted by liveness, and its pods are planned again.
func TestLivenessDeletesClaimThatNeverRegisters(t *testing.T) {
	opts := operator.Options{}
	opts.Lifecycle.RegistrationTimeout = 4 * time.Second
	e := start(t, opts)
	e.create(nodeClass("slow", func(nc *simv1alpha1.SimNodeClass) { nc.Spec.RegistrationDelay = &metav1.Duration{Duration: time.Hour} }),
		nodePool("general", "slow", []string{"m5"}), deployment("web", 1, "1", "1Gi"))
	var first string
	e.eventually(30*time.Second, "a NodeClaim", func() (bool, string) {
		cs := e.nodeClaims()
		if len(cs) > 0 {
			first = cs[0].Name
		}
		return len(cs) > 0, ""
	})
	e.eventually(60*time.Second, "the unregistered claim deleted and a new one created", func() (bool, string) {
		names := []string{}
		gone := true
		for _, c := range e.nodeClaims() {
			names = append(names, claimState(&c))
			if c.Name == first {
				gone = false
			}
		}
		return gone && len(names) > 0, strings.Join(names, " ")
	})
}

// NodePool limits stop provisioning, and the pods left over get an event saying so.
func TestLimitsStopProvisioning(t *testing.T) {
	e := start(t, operator.Options{})
	e.create(nodeClass("default"), nodePool("small", "default", []string{"m5"}, func(np *apisv1.NodePool) {
		np.Spec.Limits = apisv1.Limits{corev1.ResourceCPU: resource.MustParse("4")}
	}), deployment("web", 6, "1500m", "1Gi"))
	e.eventually(60*time.Second, "a FailedScheduling event naming the limits", func() (bool, string) {
		for _, ev := range e.events(provisioning.EventFailedScheduling) {
			if strings.Contains(ev.Message, "limits of nodepool small") {
				return true, ""
			}
		}
		return false, "no such event yet"
	})
	var cpu int64
	for _, c := range e.nodeClaims() {
		q := c.Status.Capacity[corev1.ResourceCPU]
		cpu += q.MilliValue()
	}
	if cpu > 4000 {
		t.Errorf("claims hold %dm cpu, the limit is 4", cpu)
	}
}

// DaemonSet overhead is reserved on new claims: a 1-cpu pod with a 1.5-cpu DaemonSet does not
// get an m5.large (1930m allocatable).
func TestDaemonSetOverheadReserved(t *testing.T) {
	e := start(t, operator.Options{})
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "default"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "c", Image: "example.com/agent", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("256Mi")}}}},
			}},
		},
	}
	e.create(ds, nodeClass("default"), nodePool("general", "default", []string{"m5"}), deployment("app", 1, "1", "1Gi"))
	pods := e.podsRunning("app", 1, 90*time.Second)
	var node corev1.Node
	if err := e.kube.Get(e.ctx, clientKey(pods[0].Spec.NodeName), &node); err != nil {
		t.Fatal(err)
	}
	if it := node.Labels[apisv1.LabelInstanceType]; it == "m5.large" {
		t.Errorf("m5.large cannot hold the pod and the DaemonSet")
	}
	e.podsRunning("agent", 1, 30*time.Second)
}

// A pod that fits on a claim in flight is nominated there; no new claim is bought.
func TestPodNominatedToClaimInFlight(t *testing.T) {
	e := start(t, operator.Options{})
	e.create(nodeClass("slow", func(nc *simv1alpha1.SimNodeClass) { nc.Spec.BootDelay = &metav1.Duration{Duration: 6 * time.Second} }),
		nodePool("general", "slow", []string{"m5"}), deployment("big", 1, "3", "2Gi"))
	e.eventually(30*time.Second, "a NodeClaim", func() (bool, string) { return len(e.nodeClaims()) == 1, "" })
	// The claim is booting; a small pod arrives that fits in the room it will have.
	e.create(deployment("small", 1, "200m", "128Mi"))
	e.podsRunning("small", 1, 90*time.Second)
	e.podsRunning("big", 1, 30*time.Second)
	if n := len(e.nodeClaims()); n != 1 {
		t.Errorf("a pod that fits the claim in flight made tenon buy %d claims in all", n)
	}
	nominated := false
	for _, ev := range e.events(provisioning.EventNominated) {
		nominated = nominated || (ev.InvolvedObject.Name != "" && strings.HasPrefix(ev.InvolvedObject.Name, "small-") && strings.Contains(ev.Message, "nodeclaim/"))
	}
	if !nominated {
		t.Error("the small pod was not nominated to the claim in flight")
	}
}

func clientKey(name string) client.ObjectKey { return client.ObjectKey{Name: name} }

package metrics

import (
	"sort"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/state"
)

type classes []schema.GroupKind

func (c classes) NodeClasses() []schema.GroupKind { return c }

var ours = classes{{Group: "sim.tenon.sh", Kind: "SimNodeClass"}}

func node(name, pool string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			apisv1.NodePoolLabelKey: pool, apisv1.LabelZone: "us-east-1a", apisv1.LabelArch: "amd64",
			apisv1.CapacityTypeLabelKey: "spot", apisv1.LabelInstanceType: "m5.large", apisv1.LabelInstanceFamily: "m5",
		}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("1930m"), corev1.ResourceMemory: resource.MustParse("7Gi"),
			corev1.ResourceEphemeralStorage: resource.MustParse("20Gi"),
		}},
	}
}

func pod(name, nodeName string, phase corev1.PodPhase, ready bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(time.Unix(1000, 0)),
			OwnerReferences:   []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1"}}},
		Spec:   corev1.PodSpec{NodeName: nodeName},
		Status: corev1.PodStatus{Phase: phase},
	}
	if ready {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(time.Unix(1042, 0))}}
	}
	return p
}

// series returns the label sets of a metric's series whose labels include match.
func series(t *testing.T, c prometheus.Collector, match map[string]string) []map[string]string {
	t.Helper()
	ch := make(chan prometheus.Metric, 1000)
	c.Collect(ch)
	close(ch)
	var out []map[string]string
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		l := map[string]string{}
		for _, lp := range pb.GetLabel() {
			l[lp.GetName()] = lp.GetValue()
		}
		ok := true
		for k, v := range match {
			ok = ok && l[k] == v
		}
		if ok {
			out = append(out, l)
		}
	}
	return out
}

func TestPublishSetsNodePodAndNodePoolGauges(t *testing.T) {
	cl := state.NewCluster(clock.RealClock{})
	cl.UpdateNode(node("pub-n1", "pub-pool"))
	cl.UpdatePod(pod("pub-web", "pub-n1", corev1.PodRunning, true))
	cl.UpdatePod(pod("pub-pending", "", corev1.PodPending, false))
	np := &apisv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "pub-pool"}}
	np.Spec.Template.Spec.NodeClassRef = &apisv1.NodeClassReference{Group: "sim.tenon.sh", Kind: "SimNodeClass", Name: "default"}
	np.Spec.Limits = apisv1.Limits{corev1.ResourceCPU: resource.MustParse("100")}
	np.Status.Resources = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi")}
	foreign := np.DeepCopy()
	foreign.Name = "pub-foreign"
	foreign.Spec.Template.Spec.NodeClassRef = &apisv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	cl.UpdateNodePool(np)
	cl.UpdateNodePool(foreign)
	c, err := New(Deps{Cluster: cl, Cloud: ours}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c.Publish(true)

	if got := testutil.ToFloat64(ClusterStateSynced); got != 1 {
		t.Errorf("karpenter_cluster_state_synced = %v, want 1", got)
	}
	if got := testutil.ToFloat64(ClusterStateNodeCount); got != 1 {
		t.Errorf("karpenter_cluster_state_node_count = %v, want 1", got)
	}
	cpu := series(t, NodesAllocatable, map[string]string{"node_name": "pub-n1", "resource_type": "cpu"})
	if len(cpu) != 1 {
		t.Fatalf("karpenter_nodes_allocatable{node_name=pub-n1,resource_type=cpu}: %d series", len(cpu))
	}
	for k, v := range map[string]string{"nodepool": "pub-pool", "zone": "us-east-1a", "arch": "amd64", "capacity_type": "spot",
		"instance_type": "m5.large", "instance_family": "m5", "managed": "true", "phase": "", "os": ""} {
		if got, ok := cpu[0][k]; !ok || got != v {
			t.Errorf("karpenter_nodes_allocatable label %s = %q (present %v), want %q", k, got, ok, v)
		}
	}
	if got := testutil.ToFloat64(NodesAllocatable.With(cpu[0])); got != 1.93 {
		t.Errorf("allocatable cpu = %v, want 1.93 cores", got)
	}
	if n := len(series(t, NodesAllocatable, map[string]string{"node_name": "pub-n1", "resource_type": "ephemeral_storage"})); n != 1 {
		t.Errorf("ephemeral-storage is not reported as resource_type=ephemeral_storage (%d series)", n)
	}

	web := series(t, PodsState, map[string]string{"name": "pub-web"})
	if len(web) != 1 {
		t.Fatalf("karpenter_pods_state{name=pub-web}: %d series", len(web))
	}
	want := map[string]string{"name": "pub-web", "namespace": "default", "owner": "/apis/apps/v1/namespaces/default/replicasets/web-1",
		"node": "pub-n1", "scheduled": "true", "nodepool": "pub-pool", "zone": "us-east-1a", "arch": "amd64", "capacity_type": "spot",
		"instance_type": "m5.large", "phase": "Running", "ready": "true", "managed": "true"}
	if len(web[0]) != len(want) {
		t.Errorf("karpenter_pods_state has labels %v, want exactly %v", keys(web[0]), keys(want))
	}
	for k, v := range want {
		if web[0][k] != v {
			t.Errorf("karpenter_pods_state label %s = %q, want %q", k, web[0][k], v)
		}
	}
	if p := series(t, PodsState, map[string]string{"name": "pub-pending"}); len(p) != 1 || p[0]["scheduled"] != "false" || p[0]["managed"] != "false" || p[0]["phase"] != "Pending" {
		t.Errorf("pending pod series: %v", p)
	}

	if got := testutil.ToFloat64(NodePoolsUsage.WithLabelValues("cpu", "pub-pool")); got != 2 {
		t.Errorf("karpenter_nodepools_usage{cpu,pub-pool} = %v, want 2", got)
	}
	if got := testutil.ToFloat64(NodePoolsUsage.WithLabelValues("memory", "pub-pool")); got != 8*(1<<30) {
		t.Errorf("karpenter_nodepools_usage{memory,pub-pool} = %v, want 8Gi in bytes", got)
	}
	if got := testutil.ToFloat64(NodePoolsLimit.WithLabelValues("cpu", "pub-pool")); got != 100 {
		t.Errorf("karpenter_nodepools_limit{cpu,pub-pool} = %v, want 100", got)
	}
	if n := len(series(t, NodePoolsUsage, map[string]string{"nodepool": "pub-foreign"})); n != 0 {
		t.Errorf("a NodePool of another provider's NodeClass got %d usage series", n)
	}

	// What goes away leaves no series behind; a pod's changed labels replace its old series.
	cl.DeleteNode("pub-n1")
	cl.DeletePod("default", "pub-pending")
	cl.UpdatePod(pod("pub-web", "", corev1.PodPending, false))
	np = np.DeepCopy()
	np.Spec.Limits = nil
	cl.UpdateNodePool(np)
	c.Publish(false)
	if got := testutil.ToFloat64(ClusterStateSynced); got != 0 {
		t.Errorf("karpenter_cluster_state_synced = %v before the informers synced, want 0", got)
	}
	if n := len(series(t, NodesAllocatable, map[string]string{"node_name": "pub-n1"})); n != 0 {
		t.Errorf("a deleted node kept %d allocatable series", n)
	}
	if n := len(series(t, PodsState, map[string]string{"name": "pub-pending"})); n != 0 {
		t.Errorf("a deleted pod kept %d state series", n)
	}
	if p := series(t, PodsState, map[string]string{"name": "pub-web"}); len(p) != 1 || p[0]["phase"] != "Pending" {
		t.Errorf("a pod whose state changed has series %v, want one, Pending", p)
	}
	if n := len(series(t, NodePoolsLimit, map[string]string{"nodepool": "pub-pool"})); n != 0 {
		t.Errorf("a removed limit kept %d series", n)
	}
}

func TestStartupDurationObservedOncePerPodSeenPending(t *testing.T) {
	c, err := New(Deps{Cluster: state.NewCluster(clock.RealClock{}), Cloud: ours}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	count := func() uint64 {
		var pb dto.Metric
		if err := PodsStartupDuration.Write(&pb); err != nil {
			t.Fatal(err)
		}
		return pb.GetSummary().GetSampleCount()
	}
	before := count()
	c.PodChanged(pod("s-already", "n", corev1.PodRunning, true)) // never seen pending: not counted
	c.PodChanged(pod("s-web", "", corev1.PodPending, false))
	c.PodChanged(pod("s-web", "n", corev1.PodRunning, false))
	if got := count(); got != before {
		t.Fatalf("observed before the pod was ready: %d → %d", before, got)
	}
	c.PodChanged(pod("s-web", "n", corev1.PodRunning, true))
	c.PodChanged(pod("s-web", "n", corev1.PodRunning, true)) // a later update is not a second start
	if got := count(); got != before+1 {
		t.Fatalf("karpenter_pods_startup_duration_seconds count went %d → %d, want one more", before, got)
	}
	var pb dto.Metric
	_ = PodsStartupDuration.Write(&pb)
	if max := pb.GetSummary().GetQuantile()[len(pb.GetSummary().GetQuantile())-1]; max.GetQuantile() != 1 || max.GetValue() < 42 {
		t.Errorf("the largest startup observed is %v, want at least the pod's 42 s", max.GetValue())
	}
	c.PodChanged(pod("s-failed", "", corev1.PodPending, false))
	c.PodChanged(pod("s-failed", "n", corev1.PodFailed, false))
	c.PodChanged(pod("s-failed", "n", corev1.PodRunning, true))
	if got := count(); got != before+1 {
		t.Errorf("a pod that failed before it was ready was observed")
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

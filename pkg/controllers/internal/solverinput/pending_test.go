package solverinput

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/state"
)

func unschedulable(name string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func TestIsProvisionable(t *testing.T) {
	for _, c := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"unschedulable", unschedulable("a"), true},
		{"bound", unschedulable("b", func(p *corev1.Pod) { p.Spec.NodeName = "n" }), false},
		{"not yet tried", unschedulable("c", func(p *corev1.Pod) { p.Status.Conditions = nil }), false},
		{"deleting", unschedulable("d", func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: time.Now()} }), false},
		{"preempting", unschedulable("e", func(p *corev1.Pod) { p.Status.NominatedNodeName = "n" }), false},
		{"daemonset", unschedulable("f", func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet"}} }), false},
		{"other scheduler", unschedulable("g", func(p *corev1.Pod) { p.Spec.SchedulerName = "volcano" }), false},
	} {
		if got := IsProvisionable(c.pod, []string{corev1.DefaultSchedulerName}); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestPendingValidatesAndAddsVolumeTopology(t *testing.T) {
	zonal := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-a"},
		Spec: corev1.PersistentVolumeSpec{NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.ebs.csi.aws.com/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"us-east-1a"}}},
		}}}}},
	}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "data"}, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-a"}}
	reader := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(zonal, claim).Build()
	cluster := state.NewCluster(clocktesting.NewFakeClock(time.Now()))
	withVolume := func(name string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name}}}}
		}
	}
	cluster.UpdatePod(unschedulable("plain"))
	cluster.UpdatePod(unschedulable("zonal", withVolume("data")))
	cluster.UpdatePod(unschedulable("lost", withVolume("missing")))
	cluster.UpdatePod(unschedulable("elsewhere", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{apisv1.NodePoolLabelKey: "gone"} }))
	// A pod on a node marked for deletion is planned again.
	cluster.UpdatePod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "moving"}, Spec: corev1.PodSpec{NodeName: "n1"}})
	cluster.UpdateNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	cluster.MarkForDeletion("n1")

	src := &Source{Cluster: cluster, Reader: reader, Schedulers: []string{corev1.DefaultSchedulerName}}
	valid, rejected, _ := src.Pending(context.Background(), map[string]*apisv1.NodePool{"general": {}})
	got := map[string]*corev1.Pod{}
	for _, p := range valid {
		got[p.Name] = p
	}
	if len(got) != 3 || got["plain"] == nil || got["zonal"] == nil || got["moving"] == nil {
		t.Fatalf("valid pods %v", got)
	}
	aff := got["zonal"].Spec.Affinity
	if aff == nil || aff.NodeAffinity == nil || aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil ||
		aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Key != apisv1.LabelZone {
		t.Errorf("the zonal volume's topology must become required node affinity on the zone label: %+v", aff)
	}
	reasons := map[string]string{}
	for _, r := range rejected {
		reasons[r.Pod.Name] = r.Err.Error()
	}
	if !strings.Contains(reasons["lost"], "persistentvolumeclaim default/missing not found") || !strings.Contains(reasons["elsewhere"], `nodepool "gone"`) || len(reasons) != 2 {
		t.Errorf("rejected %v", reasons)
	}
}

// Pods of a priority below the cutoff come back apart, the default cutoff being Cluster
// Autoscaler's -10; the pods of a node marked for deletion are sorted the same way.
func TestPendingSetsExpendablePodsApart(t *testing.T) {
	reader := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).Build()
	withPriority := func(p int32) func(*corev1.Pod) { return func(pod *corev1.Pod) { pod.Spec.Priority = &p } }
	for _, c := range []struct {
		name       string
		cutoff     *int32
		expendable []string
	}{
		{"default cutoff", nil, []string{"low", "moving-low"}},
		{"cutoff 0", new(int32(0)), []string{"cutoff", "low", "minus-five", "moving-low"}},
		{"lowest cutoff", new(int32(-2147483648)), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			cluster := state.NewCluster(clocktesting.NewFakeClock(time.Now()))
			cluster.UpdatePod(unschedulable("none"))
			cluster.UpdatePod(unschedulable("minus-five", withPriority(-5)))
			cluster.UpdatePod(unschedulable("cutoff", withPriority(-10)))
			cluster.UpdatePod(unschedulable("low", withPriority(-11)))
			low := int32(-100)
			cluster.UpdatePod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "moving-low"}, Spec: corev1.PodSpec{NodeName: "n1", Priority: &low}})
			cluster.UpdateNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
			cluster.MarkForDeletion("n1")
			src := &Source{Cluster: cluster, Reader: reader, Schedulers: []string{corev1.DefaultSchedulerName}, ExpendablePriorityCutoff: c.cutoff}
			valid, rejected, expendable := src.Pending(context.Background(), map[string]*apisv1.NodePool{})
			var names []string
			for _, p := range expendable {
				names = append(names, p.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, c.expendable) || len(rejected) != 0 || len(valid)+len(expendable) != 5 {
				t.Errorf("expendable %v (want %v), %d valid, rejected %v", names, c.expendable, len(valid), rejected)
			}
		})
	}
}

// A pod nominated to a node the cluster does not have (a nomination outlived by its node), or
// whose nomination by tenon went stale, is pending again; one nominated to a node that exists
// is left to kube-scheduler.
func TestPendingTakesPodsNominatedToNoNode(t *testing.T) {
	reader := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).Build()
	cluster := state.NewCluster(clocktesting.NewFakeClock(time.Now()))
	cluster.UpdateNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "here"}})
	cluster.UpdatePod(unschedulable("to-here", func(p *corev1.Pod) { p.Status.NominatedNodeName = "here" }))
	cluster.UpdatePod(unschedulable("to-gone", func(p *corev1.Pod) { p.Status.NominatedNodeName = "gone" }))
	cluster.UpdatePod(unschedulable("bound-to-gone", func(p *corev1.Pod) { p.Status.NominatedNodeName = "gone"; p.Spec.NodeName = "here" }))
	cluster.UpdatePod(unschedulable("stale", func(p *corev1.Pod) { p.Status.NominatedNodeName = "here" }))
	src := &Source{Cluster: cluster, Reader: reader, Schedulers: []string{corev1.DefaultSchedulerName},
		StaleNomination: func(p *corev1.Pod) bool { return p.Name == "stale" }}
	valid, _, _ := src.Pending(context.Background(), map[string]*apisv1.NodePool{})
	var names []string
	for _, p := range valid {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"stale", "to-gone"}) {
		t.Errorf("pending %v, want [stale to-gone]", names)
	}
}

// A pod promised to a NodeClaim in flight is not pending for another plan: the claim holds it.
func TestPendingLeavesPromisedPodsToTheirClaim(t *testing.T) {
	reader := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).Build()
	cluster := state.NewCluster(clocktesting.NewFakeClock(time.Now()))
	cluster.UpdateNodeClaim(&apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "in-flight"}})
	promised, free := unschedulable("promised"), unschedulable("free")
	cluster.UpdatePod(promised)
	cluster.UpdatePod(free)
	cluster.Promise("in-flight", []*corev1.Pod{promised})
	src := &Source{Cluster: cluster, Reader: reader, Schedulers: []string{corev1.DefaultSchedulerName}}
	valid, _, _ := src.Pending(context.Background(), map[string]*apisv1.NodePool{})
	if len(valid) != 1 || valid[0].Name != "free" {
		t.Errorf("pending %v, want only the pod promised to no claim", valid)
	}
	cluster.DeleteNodeClaim("in-flight")
	if valid, _, _ := src.Pending(context.Background(), map[string]*apisv1.NodePool{}); len(valid) != 2 {
		t.Errorf("once its claim is gone the promised pod is pending again: %d pending, want 2", len(valid))
	}
}

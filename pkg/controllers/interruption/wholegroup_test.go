package interruption

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
)

// A spot interruption of a node running pods of a PodGroup disrupted only whole replaces that
// node alone (the cloud takes the instance whatever tenon decides), and its events say so,
// naming the group.
func TestSpotInterruptionOfAWholeGroupsNodeIsReported(t *testing.T) {
	c := newTestController(t, newQueue(nil), clocktesting.NewFakeClock(t0), Options{})
	rec := record.NewFakeRecorder(8)
	c.deps.Recorder = rec
	const id = "sim://r/z/i-gang"
	ctx := context.Background()
	claim := &apisv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-abc"},
		Spec:       apisv1.NodeClaimSpec{NodeClassRef: &apisv1.NodeClassReference{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind, Name: "default"}},
		Status:     apisv1.NodeClaimStatus{ProviderID: id, NodeName: "gpu-node"},
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-node"}, Spec: corev1.NodeSpec{ProviderID: id}}
	if err := c.deps.Client.Create(ctx, claim); err != nil {
		t.Fatal(err)
	}
	if err := c.deps.Client.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	group := "train"
	c.deps.Cluster.UpdatePod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "worker-0"},
		Spec: corev1.PodSpec{NodeName: node.Name, SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: &group}}})
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: group}}
	pg.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: 4}
	pg.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}
	c.deps.Cluster.UpdatePodGroup(pg)

	action, err := c.handle(ctx, msg("m", id, cloudprovider.SpotInterruption))
	if err != nil || action != ActionDrain {
		t.Fatalf("handle = %q, %v; want %q", action, err, ActionDrain)
	}
	close(rec.Events)
	n := 0
	for e := range rec.Events {
		n++
		if !strings.Contains(e, "podgroup ml/train, disrupted only whole") || !strings.Contains(e, "only it is replaced") {
			t.Errorf("event %q does not report the group", e)
		}
	}
	if n != 2 {
		t.Errorf("%d events, want one on the claim and one on the node", n)
	}
}

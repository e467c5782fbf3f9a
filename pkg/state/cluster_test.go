package state

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

func rl(cpu, mem string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem), corev1.ResourcePods: resource.MustParse("110")}
}

func TestSolverNodesJoinsClaimsAndNodes(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	c := NewCluster(clk)
	lbl := map[string]string{apisv1.NodePoolLabelKey: "default", apisv1.NodeInitializedLabelKey: "true"}
	c.UpdateNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: lbl}, Spec: corev1.NodeSpec{ProviderID: "sim://a/1"},
		Status: corev1.NodeStatus{Allocatable: rl("4", "8Gi"), Capacity: rl("4", "8Gi")}})
	c.UpdateNodeClaim(&apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "default-a", Labels: map[string]string{apisv1.NodePoolLabelKey: "default"}},
		Status: apisv1.NodeClaimStatus{ProviderID: "sim://a/1", Capacity: rl("4", "8Gi")}})
	c.UpdateNodeClaim(&apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "default-b", Labels: map[string]string{apisv1.NodePoolLabelKey: "default"}},
		Spec: apisv1.NodeClaimSpec{
			Requirements: []apisv1.NodeSelectorRequirementWithMinValues{{Key: apisv1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.large", "m5.xlarge"}}},
			Resources:    apisv1.ResourceRequirements{Requests: rl("1", "1Gi")},
		}})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: corev1.PodSpec{NodeName: "n1"}}
	c.UpdatePod(pod)
	cat, err := catalog.Load("us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := c.SolverNodes(func(_, name string) (*catalog.InstanceType, bool) { return cat.Get(name) })
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 {
		t.Fatalf("want the registered node and the claim in flight, got %d: %+v", len(nodes), nodes)
	}
	if nodes[0].Name != "n1" || !nodes[0].Initialized || len(nodes[0].Pods) != 1 {
		t.Errorf("registered node %+v", nodes[0])
	}
	m5, _ := cat.Get("m5.large")
	if nodes[1].Name != "default-b" || !nodes[1].InFlight || nodes[1].Allocatable != m5.Allocatable() {
		t.Errorf("in-flight claim must look like its cheapest option: %+v", nodes[1])
	}
	u := c.Usage("default")
	if u.Nodes != 2 || u.Capacity[scheduling.CPU] != 5000 {
		t.Errorf("usage %+v, want 2 machines and 5 cpu (node capacity + claim requests)", u)
	}

	c.MarkForDeletion("n1")
	if got := c.PodsToReschedule(); len(got) != 1 || got[0].Name != "p" {
		t.Errorf("pods of a node marked for deletion must be rescheduled: %v", got)
	}
	nodes, _ = c.SolverNodes(nil)
	if !nodes[0].MarkedForDeletion {
		t.Errorf("marked node must be reported as such")
	}
	c.Nominate("default-b")
	if !c.IsNominated("default-b") {
		t.Error("a nomination protects for a while")
	}
	clk.Step(NominationTTL + time.Second)
	if c.IsNominated("default-b") {
		t.Error("a nomination expires")
	}
	// A pod moving off a node, and a finished pod, no longer count on it.
	done := pod.DeepCopy()
	done.Status.Phase = corev1.PodSucceeded
	c.UpdatePod(done)
	if got := c.PodsOn("n1"); len(got) != 0 {
		t.Errorf("finished pods must not count on their node: %v", got)
	}
}

func TestByProviderID(t *testing.T) {
	c := NewCluster(clocktesting.NewFakeClock(time.Unix(1000, 0)))
	c.UpdateNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: corev1.NodeSpec{ProviderID: "sim://a/1"}})
	c.UpdateNodeClaim(&apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c1", CreationTimestamp: metav1.Unix(20, 0)}, Status: apisv1.NodeClaimStatus{ProviderID: "sim://a/1"}})
	c.UpdateNodeClaim(&apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c0", CreationTimestamp: metav1.Unix(10, 0)}, Status: apisv1.NodeClaimStatus{ProviderID: "sim://a/1"}})
	c.UpdateNodeClaim(&apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c2"}, Status: apisv1.NodeClaimStatus{ProviderID: "sim://a/2"}})
	c.UpdateNodeClaim(&apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "unlaunched"}})

	claim, node := c.ByProviderID("sim://a/1")
	if claim == nil || claim.Name != "c0" || node == nil || node.Name != "n1" {
		t.Errorf("sim://a/1: claim %v node %v, want the older claim c0 and node n1", claim, node)
	}
	if claim, node := c.ByProviderID("sim://a/2"); claim == nil || claim.Name != "c2" || node != nil {
		t.Errorf("sim://a/2: claim %v node %v, want c2 and no node", claim, node)
	}
	if claim, node := c.ByProviderID("sim://a/3"); claim != nil || node != nil {
		t.Errorf("unknown ID: claim %v node %v", claim, node)
	}
	if claim, node := c.ByProviderID(""); claim != nil || node != nil {
		t.Errorf("empty ID matched claim %v node %v", claim, node)
	}
}

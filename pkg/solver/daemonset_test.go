package solver

import (
	"math"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// TestTypesTheDaemonSetsOverfillAreNotOffered: a 2.5-cpu DaemonSet does not fit an m5.large
// (1930m allocatable); the pool offers its larger types only, and the solve, the bound and the
// verifier all take it in their stride.
func TestTypesTheDaemonSetsOverfillAreNotOffered(t *testing.T) {
	its := types(t, "m5.large", "m5.xlarge", "m5.2xlarge")
	snap := &Snapshot{
		NodePools:  []NodePool{nodePool("default", its, onDemand())},
		DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: "big", Pod: pod("2500m", "")}},
		Pods:       []*corev1.Pod{pod("1", "1Gi")},
	}
	plan := solveOK(t, snap)
	if len(plan.Claims) != 1 || len(plan.Unschedulable) != 0 {
		t.Fatalf("want one claim, got %s", describe(plan))
	}
	for _, n := range claimTypes(plan.Claims[0]) {
		if n == "m5.large" {
			t.Errorf("claim offers m5.large, which its daemonset overfills: %v", claimTypes(plan.Claims[0]))
		}
	}
	if plan.Claims[0].InstanceType.Name != "m5.xlarge" {
		t.Errorf("launches %s, want m5.xlarge", plan.Claims[0].InstanceType.Name)
	}
	if math.IsInf(plan.LowerBound, 0) || plan.LowerBound <= 0 || plan.Price < plan.LowerBound-1e-9 {
		t.Errorf("lower bound %v for price %v", plan.LowerBound, plan.Price)
	}
}

// TestDaemonSetsOverfillingEveryTypeMakeThePoolUnschedulable: when the DaemonSets fit on none
// of a pool's types, its pods are unschedulable with a reason that says so, and a pool the
// DaemonSets do not run on still takes them.
func TestDaemonSetsOverfillingEveryTypeMakeThePoolUnschedulable(t *testing.T) {
	its := types(t, "c6g.medium", "m5.large")
	huge := pod("1000", "", nodeSelector(apisv1.NodePoolLabelKey, "heavy"))
	snap := &Snapshot{
		NodePools:  []NodePool{nodePool("heavy", its, onDemand(), func(p *NodePool) { p.Weight = 10 })},
		DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: "huge", Pod: huge}},
		Pods:       []*corev1.Pod{pod("100m", "")},
	}
	plan := solveOK(t, snap)
	if len(plan.Unschedulable) != 1 {
		t.Fatalf("want the pod unschedulable, got %s", describe(plan))
	}
	r := plan.Unschedulable[0].Reasons
	if len(r) != 1 || r[0].Kind != ReasonDaemonSets || !strings.Contains(r[0].String(), "daemonsets of nodepool heavy request cpu=1k") {
		t.Fatalf("reasons %v", plan.Unschedulable[0].Message())
	}
	snap.NodePools = append(snap.NodePools, nodePool("light", its, onDemand()))
	plan = solveOK(t, snap)
	if len(plan.Claims) != 1 || plan.Claims[0].NodePool != "light" || len(plan.Unschedulable) != 0 {
		t.Fatalf("want one claim of nodepool light, got %s", describe(plan))
	}
}

// TestDaemonSetHostPortsAreTakenOnNewClaims: a DaemonSet binding host port 8080 runs on every
// new node of pool "proxied"; a pod asking for 8080 cannot go beside it, says so, and goes to
// a pool without that DaemonSet when there is one.
func TestDaemonSetHostPortsAreTakenOnNewClaims(t *testing.T) {
	its := types(t, "m5.large", "m5.xlarge")
	proxy := pod("100m", "", hostPort(8080), nodeSelector(apisv1.NodePoolLabelKey, "proxied"))
	snap := &Snapshot{
		NodePools:  []NodePool{nodePool("proxied", its, onDemand(), func(p *NodePool) { p.Weight = 10 })},
		DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: "proxy", Pod: proxy}},
		Pods:       []*corev1.Pod{pod("1", "", hostPort(8080))},
	}
	plan := solveOK(t, snap)
	if len(plan.Claims) != 0 || len(plan.Unschedulable) != 1 {
		t.Fatalf("want the pod unschedulable, got %s", describe(plan))
	}
	r := plan.Unschedulable[0].Reasons
	if len(r) != 1 || r[0].Kind != ReasonHostPort || !strings.Contains(r[0].Detail, "8080") || !strings.Contains(r[0].Detail, "kube-system/proxy") {
		t.Fatalf("reasons %v", plan.Unschedulable[0].Message())
	}
	// Another port is free there.
	snap.Pods = []*corev1.Pod{pod("1", "", hostPort(9090))}
	if plan = solveOK(t, snap); len(plan.Claims) != 1 || plan.Claims[0].NodePool != "proxied" {
		t.Fatalf("port 9090: want a claim of nodepool proxied, got %s", describe(plan))
	}
	// A pool the DaemonSet does not run on takes the 8080 pod.
	snap.NodePools = append(snap.NodePools, nodePool("plain", its, onDemand()))
	snap.Pods = []*corev1.Pod{pod("1", "", hostPort(8080)), pod("1", "")}
	plan = solveOK(t, snap)
	if len(plan.Unschedulable) != 0 {
		t.Fatalf("want every pod placed, got %s", describe(plan))
	}
	for _, c := range plan.Claims {
		for _, p := range c.Pods {
			if len(scheduling.PodHostPorts(p)) > 0 && c.NodePool != "plain" {
				t.Errorf("the 8080 pod is on a claim of nodepool %s, beside the proxy", c.NodePool)
			}
		}
	}
}

// TestDaemonSetHostPortsNarrowAClaimToTypesWithoutTheDaemonSet: a DaemonSet that runs only on
// arm64 nodes binds 8080; the pod asking for 8080 may still have a claim of the pool, on amd64.
func TestDaemonSetHostPortsNarrowAClaimToTypesWithoutTheDaemonSet(t *testing.T) {
	its := types(t, "m6g.large", "m5.large")
	armProxy := pod("100m", "", hostPort(8080), nodeSelector(corev1.LabelArchStable, "arm64"))
	snap := &Snapshot{
		NodePools:  []NodePool{nodePool("default", its, onDemand())},
		DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: "proxy", Pod: armProxy}},
		Pods:       []*corev1.Pod{pod("1", "", hostPort(8080))},
	}
	plan := solveOK(t, snap)
	if len(plan.Claims) != 1 || len(plan.Unschedulable) != 0 {
		t.Fatalf("want one claim, got %s", describe(plan))
	}
	if got := claimTypes(plan.Claims[0]); len(got) != 1 || got[0] != "m5.large" {
		t.Errorf("claim options %v, want only m5.large (the arm64 type runs the proxy)", got)
	}
}

// TestDaemonSetHostPortsAreTakenOnExistingNodes: on an existing node the DaemonSet's port is
// taken whether its pod is already bound there (a real pod) or not yet.
func TestDaemonSetHostPortsAreTakenOnExistingNodes(t *testing.T) {
	its := types(t, "m5.xlarge")
	proxy := pod("100m", "", hostPort(8080))
	bound := pod("100m", "", hostPort(8080))
	bound.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "proxy"}}
	for _, tc := range []struct {
		name string
		pods []*corev1.Pod
	}{{"bound", []*corev1.Pod{bound}}, {"not yet bound", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			node := Node{Name: "n1", Labels: map[string]string{apisv1.LabelZone: "us-east-1a", corev1.LabelInstanceTypeStable: "m5.xlarge"},
				Allocatable: its[0].Allocatable(), Pods: tc.pods, Initialized: true}
			snap := &Snapshot{
				Nodes:      []Node{node},
				DaemonSets: []DaemonSet{{Namespace: "default", Name: "proxy", Pod: proxy}},
				Pods:       []*corev1.Pod{pod("1", "", hostPort(8080))},
			}
			plan, err := Solve(snap, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Placements) != 0 || len(plan.Unschedulable) != 1 {
				t.Fatalf("want the pod kept off n1, got %s", describe(plan))
			}
		})
	}
}

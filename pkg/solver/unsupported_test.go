package solver

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func resourceClaim(name string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, corev1.PodResourceClaim{Name: name, ResourceClaimTemplateName: ptr.To("gpu-template")})
		p.Spec.Containers[0].Resources.Claims = append(p.Spec.Containers[0].Resources.Claims, corev1.ResourceClaim{Name: name})
	}
}

// TestPodWithUnresolvedResourceClaimsIsUnschedulable: a pod asking for a device through
// dynamic resource allocation whose claims the snapshot did not resolve (Snapshot.Devices) is
// never planned onto a node by its CPU and memory alone; it is unschedulable with its own
// reason, and a pod like it without the claim is still placed (the claim is part of what makes
// pods alike).
func TestPodWithUnresolvedResourceClaimsIsUnschedulable(t *testing.T) {
	its := types(t, "m5.large", "m5.xlarge")
	claimed := pod("1", "1Gi", named("claimed"), resourceClaim("gpu"))
	plain := pod("1", "1Gi", named("plain"))
	plan := solveOK(t, &Snapshot{
		NodePools: []NodePool{nodePool("default", its, onDemand())},
		Pods:      []*corev1.Pod{plain, claimed},
	})
	if len(plan.Unschedulable) != 1 || plan.Unschedulable[0].Pod != claimed {
		t.Fatalf("want only the pod with a resource claim unschedulable, got %s", describe(plan))
	}
	want := Reason{Kind: ReasonDevices, Detail: DynamicResourceClaimsDetail}
	if rs := plan.Unschedulable[0].Reasons; len(rs) != 1 || rs[0] != want {
		t.Errorf("reasons %+v, want [%+v]", rs, want)
	}
	if got := plan.Unschedulable[0].Message(); got != "dynamic resource claims: the claims were not resolved against the instance types' devices" {
		t.Errorf("message %q", got)
	}
	if len(plan.Claims) != 1 || len(plan.Claims[0].Pods) != 1 || plan.Claims[0].Pods[0] != plain {
		t.Errorf("the plain pod must get a claim of its own: %s", describe(plan))
	}
}

// TestVerifyRefusesAPlacedPodWithResourceClaims: the independent checker holds the rule too.
func TestVerifyRefusesAPlacedPodWithResourceClaims(t *testing.T) {
	its := types(t, "m5.large")
	claimed := pod("1", "1Gi", named("claimed"))
	snap := &Snapshot{NodePools: []NodePool{nodePool("default", its, onDemand())}, Pods: []*corev1.Pod{claimed}}
	plan := solveOK(t, snap)
	resourceClaim("gpu")(claimed) // as if the solver had placed it with its claim
	if err := Verify(snap, plan); err == nil || !strings.Contains(err.Error(), DynamicResourceClaimsDetail) {
		t.Errorf("Verify: %v; want the placed pod with a resource claim refused", err)
	}
}

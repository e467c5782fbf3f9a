package cloudprovider_test

import (
	"testing"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
)

func claimOf(group, kind string) *apisv1.NodeClaim {
	return &apisv1.NodeClaim{Spec: apisv1.NodeClaimSpec{NodeClassRef: &apisv1.NodeClassReference{Group: group, Kind: kind, Name: "default"}}}
}

// A provider manages exactly the claims whose nodeClassRef names one of its kinds: the group
// and the kind must both match, whichever provider runs.
func TestIsManagedByGroupAndKind(t *testing.T) {
	sim := cloudprovider.Serving{{Group: "sim.tenon.sh", Kind: "SimNodeClass"}}
	aws := cloudprovider.Serving{{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass"}}
	for _, c := range []struct {
		name   string
		server cloudprovider.NodeClassServer
		claim  *apisv1.NodeClaim
		want   bool
	}{
		{"simulated claim, simulated provider", sim, claimOf("sim.tenon.sh", "SimNodeClass"), true},
		{"Karpenter's claim, simulated provider", sim, claimOf("karpenter.k8s.aws", "EC2NodeClass"), false},
		{"EC2NodeClass claim, aws provider", aws, claimOf("karpenter.k8s.aws", "EC2NodeClass"), true},
		{"simulated claim, aws provider", aws, claimOf("sim.tenon.sh", "SimNodeClass"), false},
		{"right kind, other group", aws, claimOf("example.com", "EC2NodeClass"), false},
		{"right group, other kind", aws, claimOf("karpenter.k8s.aws", "OtherNodeClass"), false},
		{"no nodeClassRef", sim, &apisv1.NodeClaim{}, false},
		{"nil claim", sim, nil, false},
		{"provider serving nothing", cloudprovider.Serving(nil), claimOf("sim.tenon.sh", "SimNodeClass"), false},
	} {
		if got := cloudprovider.IsManaged(c.server, c.claim); got != c.want {
			t.Errorf("%s: IsManaged = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestIsManagedNodePool(t *testing.T) {
	sim := cloudprovider.Serving{{Group: "sim.tenon.sh", Kind: "SimNodeClass"}}
	pool := func(ref *apisv1.NodeClassReference) *apisv1.NodePool {
		np := &apisv1.NodePool{}
		np.Spec.Template.Spec.NodeClassRef = ref
		return np
	}
	if !cloudprovider.IsManagedNodePool(sim, pool(&apisv1.NodeClassReference{Group: "sim.tenon.sh", Kind: "SimNodeClass", Name: "a"})) {
		t.Error("a SimNodeClass NodePool is not managed by the simulated provider")
	}
	if cloudprovider.IsManagedNodePool(sim, pool(&apisv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "a"})) {
		t.Error("an EC2NodeClass NodePool is managed by the simulated provider")
	}
	if cloudprovider.IsManagedNodePool(sim, pool(nil)) || cloudprovider.IsManagedNodePool(sim, nil) {
		t.Error("a NodePool without a nodeClassRef is managed")
	}
}

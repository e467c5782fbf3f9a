package garbagecollection_test

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/index"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/garbagecollection"
)

// instances is a cloud provider holding instances by provider ID; only List, Get and Delete
// are used.
type instances struct {
	cloudprovider.CloudProvider
	byID    map[string]*apisv1.NodeClaim
	deleted []string
}

func (p *instances) List(context.Context) ([]*apisv1.NodeClaim, error) {
	var out []*apisv1.NodeClaim
	for _, c := range p.byID {
		out = append(out, c)
	}
	return out, nil
}

func (p *instances) Get(_ context.Context, id string) (*apisv1.NodeClaim, error) {
	if c, ok := p.byID[id]; ok {
		return c, nil
	}
	return nil, cloudprovider.NewNodeClaimNotFoundError(id, nil)
}

func (p *instances) Delete(_ context.Context, c *apisv1.NodeClaim) error {
	if _, ok := p.byID[c.Status.ProviderID]; !ok {
		return cloudprovider.NewNodeClaimNotFoundError(c.Status.ProviderID, nil)
	}
	delete(p.byID, c.Status.ProviderID)
	p.deleted = append(p.deleted, c.Status.ProviderID)
	return nil
}

func (p *instances) NodeClasses() []schema.GroupKind { return simulated.NodeClasses }

func (p *instances) GetInstanceTypes(context.Context, *apisv1.NodePool) ([]*catalog.InstanceType, error) {
	return nil, nil
}

func instance(id string, launched time.Time) *apisv1.NodeClaim {
	return &apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(launched)}, Status: apisv1.NodeClaimStatus{ProviderID: id}}
}

func launchedClaim(name, id string) *apisv1.NodeClaim {
	return launchedClaimOf(name, id, simv1alpha1.Group, simv1alpha1.SimNodeClassKind)
}

func launchedClaimOf(name, id, group, kind string) *apisv1.NodeClaim {
	c := &apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: apisv1.NodeClaimStatus{ProviderID: id},
		Spec: apisv1.NodeClaimSpec{NodeClassRef: &apisv1.NodeClassReference{Group: group, Kind: kind, Name: "default"}}}
	c.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeLaunched, Status: metav1.ConditionTrue, Reason: "Launched"}, time.Now())
	return c
}

// TestCollect drives single passes with a fake clock and a fake client.
func TestCollect(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(now)
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apisv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	notLaunched := &apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "pending"}, Status: apisv1.NodeClaimStatus{ProviderID: "sim://gone-too"}}
	kube := fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(launchedClaim("live", "sim://live"), launchedClaim("lost", "sim://lost"), notLaunched,
			// Karpenter's: one whose instance this provider does not run, one holding an instance it does list.
			launchedClaimOf("karpenter", "aws:///us-east-1a/i-0f", "karpenter.k8s.aws", "EC2NodeClass"),
			launchedClaimOf("karpenter-held", "sim://held", "karpenter.k8s.aws", "EC2NodeClass")).
		WithIndex(&corev1.Node{}, index.NodeProviderID, func(o client.Object) []string { return []string{o.(*corev1.Node).Spec.ProviderID} }).
		Build()
	cloud := &instances{byID: map[string]*apisv1.NodeClaim{
		"sim://live":   instance("sim://live", now.Add(-time.Hour)),
		"sim://orphan": instance("sim://orphan", now.Add(-2*time.Minute)),
		"sim://young":  instance("sim://young", now.Add(-30*time.Second)),
		"sim://held":   instance("sim://held", now.Add(-time.Hour)),
	}}
	c, err := garbagecollection.New(garbagecollection.Deps{Client: kube, CloudProvider: cloud, Clock: clk}, garbagecollection.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	if len(cloud.deleted) != 1 || cloud.deleted[0] != "sim://orphan" {
		t.Errorf("deleted instances %v, want the old orphan only", cloud.deleted)
	}
	claims := &apisv1.NodeClaimList{}
	if err := kube.List(ctx, claims); err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, claim := range claims.Items {
		left = append(left, claim.Name)
	}
	if !slices.Equal(left, []string{"karpenter", "karpenter-held", "live", "pending"}) {
		t.Errorf("claims left %v, want Karpenter's two, live and pending (the claim whose instance is gone deleted; one never launched kept; another autoscaler's never judged)", left)
	}

	clk.Step(time.Minute)
	if err := c.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	if len(cloud.deleted) != 2 || cloud.deleted[1] != "sim://young" {
		t.Errorf("after the grace period deleted %v", cloud.deleted)
	}
}

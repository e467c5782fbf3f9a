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

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apisv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return scheme
}

func testKube(t *testing.T, objs ...client.Object) client.WithWatch {
	return fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(objs...).
		WithIndex(&corev1.Node{}, index.NodeProviderID, func(o client.Object) []string { return []string{o.(*corev1.Node).Spec.ProviderID} }).
		Build()
}

// namedInstance is the view of an instance launched for the claim called claim.
func namedInstance(id, claim string, launched time.Time) *apisv1.NodeClaim {
	inst := instance(id, launched)
	inst.Name = claim
	return inst
}

// pendingClaim is a claim whose instance may be launched but whose provider ID is not recorded.
func pendingClaim(name string) *apisv1.NodeClaim {
	return &apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apisv1.NodeClaimSpec{NodeClassRef: &apisv1.NodeClassReference{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind, Name: "default"}}}
}

// An instance whose claim exists but has no provider ID yet (launched, status not yet written)
// is held by the claim's name however old it is; an old instance named after no claim is not.
func TestCollectKeepsTheInstanceOfAClaimWithoutProviderIDYet(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	kube := testKube(t, pendingClaim("launching"))
	cloud := &instances{byID: map[string]*apisv1.NodeClaim{
		"sim://launching": namedInstance("sim://launching", "launching", now.Add(-time.Hour)),
		"sim://orphan":    namedInstance("sim://orphan", "deleted-long-ago", now.Add(-time.Hour)),
	}}
	c, err := garbagecollection.New(garbagecollection.Deps{Client: kube, CloudProvider: cloud, Clock: clocktesting.NewFakeClock(now)}, garbagecollection.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Collect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cloud.deleted, []string{"sim://orphan"}) {
		t.Errorf("deleted instances %v, want only the one named after no claim", cloud.deleted)
	}
}

// listHook is a provider whose List first runs a hook: what happens while a pass lists.
type listHook struct {
	*instances
	hook func()
}

func (p *listHook) List(ctx context.Context) ([]*apisv1.NodeClaim, error) {
	out, err := p.instances.List(ctx)
	p.hook()
	return out, err
}

// The claims are listed after the instances: a claim created (and its instance launched) just
// before the instances are listed is seen, so its instance is not taken for an orphan even when
// the pass runs long after the launch.
func TestCollectListsClaimsAfterInstances(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	kube := testKube(t)
	ctx := context.Background()
	cloud := &listHook{
		instances: &instances{byID: map[string]*apisv1.NodeClaim{"sim://new": namedInstance("sim://new", "new", now.Add(-time.Hour))}},
		hook: func() {
			if err := kube.Create(ctx, pendingClaim("new")); err != nil {
				t.Error(err)
			}
		},
	}
	c, err := garbagecollection.New(garbagecollection.Deps{Client: kube, CloudProvider: cloud, Clock: clocktesting.NewFakeClock(now)}, garbagecollection.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	if len(cloud.deleted) != 0 {
		t.Errorf("deleted %v, the instance of a claim created during the pass", cloud.deleted)
	}
}

// The claims are read from Deps.Reader (the API server), not from Deps.Client (a cache that
// may lag): a claim whose provider ID the cache has not seen yet still holds its instance.
func TestCollectReadsClaimsFromTheAPIServer(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	stale := testKube(t)
	live := testKube(t, launchedClaim("launched", "sim://launched"))
	cloud := &instances{byID: map[string]*apisv1.NodeClaim{"sim://launched": instance("sim://launched", now.Add(-time.Hour))}}
	c, err := garbagecollection.New(garbagecollection.Deps{Client: stale, Reader: live, CloudProvider: cloud, Clock: clocktesting.NewFakeClock(now)}, garbagecollection.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Collect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(cloud.deleted) != 0 {
		t.Errorf("deleted %v, the instance of a claim the cache had not seen", cloud.deleted)
	}
}

// A claim launched after the instances were listed is missing from the list but not gone: the
// provider is asked again before the claim is deleted.
func TestCollectKeepsAClaimLaunchedDuringThePass(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	kube := testKube(t)
	ctx := context.Background()
	cloud := &listHook{instances: &instances{byID: map[string]*apisv1.NodeClaim{}}}
	cloud.hook = func() {
		cloud.byID["sim://late"] = namedInstance("sim://late", "late", now)
		if err := kube.Create(ctx, launchedClaim("late", "sim://late")); err != nil {
			t.Error(err)
		}
	}
	c, err := garbagecollection.New(garbagecollection.Deps{Client: kube, CloudProvider: cloud, Clock: clocktesting.NewFakeClock(now)}, garbagecollection.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	if got := (&apisv1.NodeClaim{}); kube.Get(ctx, client.ObjectKey{Name: "late"}, got) != nil || !got.DeletionTimestamp.IsZero() {
		t.Error("a claim launched during the pass was deleted")
	}
}

package nodeclass

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-sh/tenon/internal/controlplane"
	"github.com/tenon-sh/tenon/internal/controlplane/testenv"
	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	"github.com/tenon-sh/tenon/pkg/apis/crds"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
)

// harness is a real API server with the CRDs; each case runs its own endpoint and manager.
type harness struct {
	cp     *controlplane.ControlPlane
	client client.Client
	scheme *runtime.Scheme
}

// TestController runs the controller against a real kube-apiserver (its /version giving the
// Kubernetes version) and the real SDK clients against the endpoint.
func TestController(t *testing.T) {
	all, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{cp: testenv.Start(t, controlplane.Options{CRDs: all}), scheme: runtime.NewScheme()}
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apisv1.AddToScheme, awsv1.AddToScheme} {
		if err := add(h.scheme); err != nil {
			t.Fatal(err)
		}
	}
	if h.client, err = client.New(h.cp.RESTConfig(), client.Options{Scheme: h.scheme}); err != nil {
		t.Fatal(err)
	}
	t.Run("EveryPartResolves", func(t *testing.T) { testEveryPartResolves(t, h) })
	t.Run("EachPartFailsAlone", func(t *testing.T) { testEachPartFailsAlone(t, h) })
	t.Run("SelectorsByIDNameAndWildcard", func(t *testing.T) { testSelectors(t, h) })
	t.Run("ProfileReusedAndRoleReplaced", func(t *testing.T) { testProfileReuse(t, h) })
	t.Run("DeletionWaitsForNodeClaims", func(t *testing.T) { testDeletion(t, h) })
	t.Run("ThrottlingThenRecovery", func(t *testing.T) { testThrottling(t, h) })
}

// realEndpoint is an endpoint on the real clock (the controller judges deprecation and
// capacity-block expiry by it).
func realEndpoint(t *testing.T, opts awsapi.Options) *endpoint {
	opts.Clock = clock.RealClock{}
	return newEndpoint(t, opts)
}

// deleted records the classes OnDelete was called for.
type deleted struct {
	mu    sync.Mutex
	names []string
	fail  bool
}

func (d *deleted) hook(_ context.Context, nc *awsv1.EC2NodeClass) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail {
		return fmt.Errorf("launch templates of %s could not be deleted", nc.Name)
	}
	d.names = append(d.names, nc.Name)
	return nil
}

func (d *deleted) has(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Contains(d.names, name)
}

// start runs a manager with the controller on e until the case ends; at its end the case's
// classes and claims are removed first.
func (h *harness) start(t *testing.T, e *endpoint, d *deleted) {
	t.Helper()
	mgr, err := ctrl.NewManager(h.cp.RESTConfig(), testenv.ManagerOptions(h.scheme))
	if err != nil {
		t.Fatal(err)
	}
	opts := e.options("") // the version comes from the API server
	opts.RequeueInterval = 300 * time.Millisecond
	if d != nil {
		opts.OnDelete = d.hook
	}
	if err := NewController(opts).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	t.Cleanup(func() { h.purge(t) })
}

// purge deletes every EC2NodeClass and NodeClaim, finalizers and all.
func (h *harness) purge(t *testing.T) {
	ctx := context.Background()
	ncs := &awsv1.EC2NodeClassList{}
	if err := h.client.List(ctx, ncs); err != nil {
		t.Error(err)
	}
	for i := range ncs.Items {
		nc := &ncs.Items[i]
		_ = h.client.Delete(ctx, nc)
		nc.Finalizers = nil
		_ = h.client.Update(ctx, nc)
	}
	_ = h.client.DeleteAllOf(ctx, &apisv1.NodeClaim{})
	eventually(t, "purged", func() (bool, string) {
		_ = h.client.List(ctx, ncs)
		return len(ncs.Items) == 0, fmt.Sprintf("%d classes left", len(ncs.Items))
	})
}

func (h *harness) create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := h.client.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
}

func (h *harness) get(t *testing.T, name string) *awsv1.EC2NodeClass {
	t.Helper()
	nc := &awsv1.EC2NodeClass{}
	if err := h.client.Get(context.Background(), client.ObjectKey{Name: name}, nc); err != nil {
		return nil
	}
	return nc
}

// waitCondition waits until a class's condition has the status (and a message containing
// msg) and returns the class.
func (h *harness) waitCondition(t *testing.T, name, condType string, status metav1.ConditionStatus, msg string) *awsv1.EC2NodeClass {
	t.Helper()
	var nc *awsv1.EC2NodeClass
	eventually(t, fmt.Sprintf("%s %s=%s", name, condType, status), func() (bool, string) {
		nc = h.get(t, name)
		if nc == nil {
			return false, "no class"
		}
		c := condition(nc, condType)
		return c.Status == status && strings.Contains(c.Message, msg), fmt.Sprintf("%s %s %q", c.Status, c.Reason, c.Message)
	})
	return nc
}

// waitEvent waits for an event on a class with the reason and a message containing msg.
func (h *harness) waitEvent(t *testing.T, name, eventType, reason, msg string) {
	t.Helper()
	eventually(t, fmt.Sprintf("event %s on %s", reason, name), func() (bool, string) {
		evs := &corev1.EventList{}
		if err := h.client.List(context.Background(), evs); err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, ev := range evs.Items {
			if ev.InvolvedObject.Kind == awsv1.EC2NodeClassKind && ev.InvolvedObject.Name == name {
				if ev.Type == eventType && ev.Reason == reason && strings.Contains(ev.Message, msg) {
					return true, ""
				}
				seen = append(seen, ev.Reason+": "+ev.Message)
			}
		}
		return false, fmt.Sprint(seen)
	})
}

func testEveryPartResolves(t *testing.T, h *harness) {
	cat, err := catalog.Load("us-east-1", catalog.WithReservations(
		catalog.Reservation{ID: "cr-0000000000000c001", InstanceType: "m5.large", Zone: "us-east-1a", Count: 2},
		catalog.Reservation{ID: "cr-0000000000000c002", InstanceType: "p5.48xlarge", Zone: "us-east-1b", Count: 1,
			Window: catalog.Window{Start: time.Now().Add(-time.Hour), End: time.Now().Add(30 * time.Minute)}},
		catalog.Reservation{ID: "cr-0000000000000c003", InstanceType: "c5.large", Zone: "us-east-1c", Count: 1},
	))
	if err != nil {
		t.Fatal(err)
	}
	e := realEndpoint(t, awsapi.Options{Catalog: cat, ReservationTags: map[string]map[string]string{
		"cr-0000000000000c001": {"team": "ml"}, "cr-0000000000000c002": {"team": "ml"}, "cr-0000000000000c003": {"team": "web"},
	}})
	h.start(t, e, nil)
	nc := class("all", alias("al2023@latest"))
	nc.Spec.CapacityReservationSelectorTerms = []awsv1.CapacityReservationSelectorTerm{{Tags: map[string]string{"team": "ml"}}}
	nc.Spec.Tags = map[string]string{"cost-center": "42"}
	h.create(t, nc)
	nc = h.waitCondition(t, "all", awsv1.ConditionTypeReady, metav1.ConditionTrue, "")

	for _, ct := range awsv1.ReadyDependents {
		if c := condition(nc, ct); c.Status != metav1.ConditionTrue || c.ObservedGeneration != nc.Generation {
			t.Errorf("%s: %s (generation %d of %d)", ct, c.Status, c.ObservedGeneration, nc.Generation)
		}
	}
	if !slices.Contains(nc.Finalizers, TerminationFinalizer) {
		t.Errorf("finalizers %v", nc.Finalizers)
	}
	if len(nc.Status.Subnets) != len(cat.Zones) {
		t.Errorf("%d subnets, want one per zone (%d)", len(nc.Status.Subnets), len(cat.Zones))
	}
	for i, s := range nc.Status.Subnets {
		if s.Zone == "" || s.ZoneID == "" || !strings.HasPrefix(s.ID, "subnet-") {
			t.Errorf("subnet %+v", s)
		}
		// Every subnet is as free as the others: the order is by ID then.
		if i > 0 && nc.Status.Subnets[i-1].ID > s.ID {
			t.Errorf("subnets out of order: %v", nc.Status.Subnets)
		}
	}
	if len(nc.Status.SecurityGroups) != 2 || nc.Status.SecurityGroups[0].Name == "" {
		t.Errorf("security groups %+v", nc.Status.SecurityGroups)
	}
	if len(nc.Status.AMIs) != 5 {
		t.Errorf("%d AMIs, want 5 (AL2023 x86_64 standard/nvidia/neuron, arm64 standard/nvidia)", len(nc.Status.AMIs))
	}
	for _, a := range nc.Status.AMIs {
		if !strings.Contains(a.Name, "-1.37-") { // the API server is 1.37
			t.Errorf("AMI %s is not for Kubernetes 1.37", a.Name)
		}
	}
	crs := nc.Status.CapacityReservations
	if len(crs) != 2 || crs[0].ID != "cr-0000000000000c001" || crs[1].ID != "cr-0000000000000c002" {
		t.Fatalf("capacity reservations %+v", crs)
	}
	if c := crs[0]; c.InstanceType != "m5.large" || c.AvailabilityZone != "us-east-1a" || c.OwnerID != awsapi.DefaultAccount ||
		c.InstanceMatchCriteria != "open" || c.ReservationType != awsv1.CapacityReservationTypeDefault || c.State != awsv1.CapacityReservationStateActive || c.EndTime != nil {
		t.Errorf("reservation %+v", c)
	}
	if c := crs[1]; c.ReservationType != awsv1.CapacityReservationTypeCapacityBlock || c.State != awsv1.CapacityReservationStateExpiring || c.EndTime == nil || c.InstanceMatchCriteria != "targeted" {
		t.Errorf("capacity block %+v: want an expiring capacity block with its end time", c)
	}

	want := ProfileName(cluster, e.s.Region(), "all")
	if nc.Status.InstanceProfile != want {
		t.Errorf("instance profile %q, want %q", nc.Status.InstanceProfile, want)
	}
	out, err := e.iam.GetInstanceProfile(context.Background(), &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(want)})
	if err != nil {
		t.Fatal(err)
	}
	p := out.InstanceProfile
	if len(p.Roles) != 1 || aws.ToString(p.Roles[0].RoleName) != "NodeRole" || aws.ToString(p.Path) != "/karpenter/us-east-1/tenon/" {
		t.Errorf("profile roles %v path %s", p.Roles, aws.ToString(p.Path))
	}
	for k, v := range map[string]string{"kubernetes.io/cluster/tenon": "owned", "eks:eks-cluster-name": "tenon", TagEC2NodeClass: "all", "topology.kubernetes.io/region": "us-east-1", "cost-center": "42"} {
		if !hasTag(p.Tags, k, v) {
			t.Errorf("profile lacks tag %s=%s: %v", k, v, p.Tags)
		}
	}
}

func testEachPartFailsAlone(t *testing.T, h *harness) {
	e := realEndpoint(t, awsapi.Options{})
	e.s.InjectFault(awsapi.Fault{Service: awsapi.ServiceEC2, Action: "DescribeCapacityReservations", Kind: awsapi.FaultAccessDenied})
	h.start(t, e, nil)
	nobody := map[string]string{"karpenter.sh/discovery": "nobody"}
	family := awsv1.AMIFamilyAL2023
	for _, tc := range []struct {
		name, cond, reason, message string
		mutate                      func(*awsv1.EC2NodeClass)
	}{
		{"subnets", awsv1.ConditionTypeSubnetsReady, ReasonSubnetsNotFound, `no subnets matched subnetSelectorTerms [{"tags":{"karpenter.sh/discovery":"nobody"}}]`,
			func(nc *awsv1.EC2NodeClass) { nc.Spec.SubnetSelectorTerms = []awsv1.SubnetSelectorTerm{{Tags: nobody}} }},
		{"sgs", awsv1.ConditionTypeSecurityGroupsReady, ReasonSecurityGroupsNotFound, `no security groups matched securityGroupSelectorTerms [{"name":"missing-sg"}]`,
			func(nc *awsv1.EC2NodeClass) {
				nc.Spec.SecurityGroupSelectorTerms = []awsv1.SecurityGroupSelectorTerm{{Name: "missing-sg"}}
			}},
		{"amis", awsv1.ConditionTypeAMIsReady, ReasonAMINotFound, `no AMIs matched amiSelectorTerms [{"id":"ami-00000000000000bad"}]`,
			func(nc *awsv1.EC2NodeClass) {
				nc.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{ID: "ami-00000000000000bad"}}
				nc.Spec.AMIFamily = &family
			}},
		{"profile", awsv1.ConditionTypeInstanceProfileReady, ReasonInstanceProfileNotFound, `instance profile "no-such-profile" not found`,
			func(nc *awsv1.EC2NodeClass) { nc.Spec.Role, nc.Spec.InstanceProfile = "", ptr.To("no-such-profile") }},
		{"reservations", awsv1.ConditionTypeCapacityReservationsReady, ReasonAWSError, "DescribeCapacityReservations: UnauthorizedOperation",
			func(nc *awsv1.EC2NodeClass) {
				nc.Spec.CapacityReservationSelectorTerms = []awsv1.CapacityReservationSelectorTerm{{ID: "cr-0000000000000c001"}}
			}},
	} {
		nc := class("fail-"+tc.name, alias("al2023@latest"))
		tc.mutate(nc)
		h.create(t, nc)
		nc = h.waitCondition(t, nc.Name, tc.cond, metav1.ConditionFalse, tc.message)
		if c := condition(nc, tc.cond); c.Reason != tc.reason {
			t.Errorf("%s: reason %s, want %s", tc.name, c.Reason, tc.reason)
		}
		if ready := condition(nc, awsv1.ConditionTypeReady); ready.Status != metav1.ConditionFalse || !strings.Contains(ready.Message, tc.cond+": "+tc.message) {
			t.Errorf("%s: Ready %s %q, want False naming %s", tc.name, ready.Status, ready.Message, tc.cond)
		}
		// The other parts are resolved and written all the same.
		for _, other := range []string{awsv1.ConditionTypeSubnetsReady, awsv1.ConditionTypeSecurityGroupsReady, awsv1.ConditionTypeAMIsReady, awsv1.ConditionTypeInstanceProfileReady, awsv1.ConditionTypeCapacityReservationsReady} {
			if other != tc.cond && condition(nc, other).Status != metav1.ConditionTrue {
				t.Errorf("%s: %s is %s (%s), want True", tc.name, other, condition(nc, other).Status, condition(nc, other).Message)
			}
		}
		if tc.cond != awsv1.ConditionTypeSubnetsReady && len(nc.Status.Subnets) == 0 {
			t.Errorf("%s: subnets not written", tc.name)
		}
		if tc.cond != awsv1.ConditionTypeAMIsReady && len(nc.Status.AMIs) == 0 {
			t.Errorf("%s: AMIs not written", tc.name)
		}
		h.waitEvent(t, nc.Name, corev1.EventTypeWarning, tc.reason, tc.message)
	}
}

func testSelectors(t *testing.T, h *harness) {
	e := realEndpoint(t, awsapi.Options{})
	h.start(t, e, nil)
	net := awsapi.DefaultNetwork(cluster, mustCatalog(t).Zones)
	subnet, sgNode, sgCluster := net.Subnets[1], net.SecurityGroups[0], net.SecurityGroups[1]

	nc := class("by-id", alias("bottlerocket@latest"))
	nc.Spec.SubnetSelectorTerms = []awsv1.SubnetSelectorTerm{{ID: subnet.ID}}
	nc.Spec.SecurityGroupSelectorTerms = []awsv1.SecurityGroupSelectorTerm{{ID: sgCluster.ID}}
	h.create(t, nc)
	nc = h.waitCondition(t, "by-id", awsv1.ConditionTypeReady, metav1.ConditionTrue, "")
	if len(nc.Status.Subnets) != 1 || nc.Status.Subnets[0].ID != subnet.ID || nc.Status.Subnets[0].Zone != subnet.Zone {
		t.Errorf("subnets by ID: %+v", nc.Status.Subnets)
	}
	if len(nc.Status.SecurityGroups) != 1 || nc.Status.SecurityGroups[0] != (awsv1.SecurityGroup{ID: sgCluster.ID, Name: sgCluster.Name}) {
		t.Errorf("security groups by ID: %+v", nc.Status.SecurityGroups)
	}

	nc = class("by-name", alias("al2023@v20261101"))
	nc.Spec.SubnetSelectorTerms = []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"kubernetes.io/role/internal-elb": "*"}}}
	nc.Spec.SecurityGroupSelectorTerms = []awsv1.SecurityGroupSelectorTerm{{Name: sgNode.Name}, {Tags: map[string]string{"aws:eks:cluster-name": "*"}}}
	h.create(t, nc)
	nc = h.waitCondition(t, "by-name", awsv1.ConditionTypeReady, metav1.ConditionTrue, "")
	if len(nc.Status.Subnets) != len(net.Subnets) {
		t.Errorf("subnets by tag wildcard: %d, want %d", len(nc.Status.Subnets), len(net.Subnets))
	}
	if len(nc.Status.SecurityGroups) != 2 {
		t.Errorf("security groups by name and tag wildcard: %+v", nc.Status.SecurityGroups)
	}
	for _, a := range nc.Status.AMIs {
		if !strings.HasSuffix(a.Name, "-v20261101") {
			t.Errorf("pinned alias resolved to %s", a.Name)
		}
	}

	// Access denied is definitive: SubnetsReady is False until AWS answers again.
	e.s.InjectFault(awsapi.Fault{Service: awsapi.ServiceEC2, Action: "DescribeSubnets", Kind: awsapi.FaultAccessDenied})
	h.waitCondition(t, "by-name", awsv1.ConditionTypeSubnetsReady, metav1.ConditionFalse, "UnauthorizedOperation")
	e.s.ClearFaults()
	h.waitCondition(t, "by-name", awsv1.ConditionTypeSubnetsReady, metav1.ConditionTrue, "")
}

func mustCatalog(t *testing.T) *catalog.Catalog {
	c, err := catalog.Load(catalog.DefaultRegion)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func testProfileReuse(t *testing.T, h *harness) {
	e := realEndpoint(t, awsapi.Options{})
	h.start(t, e, nil)
	h.create(t, class("reuse", alias("al2023@latest")))
	nc := h.waitCondition(t, "reuse", awsv1.ConditionTypeReady, metav1.ConditionTrue, "")
	name := nc.Status.InstanceProfile
	// Reconciles go on (every RequeueInterval, and on each change): still one profile.
	for i := range 3 {
		nc.Annotations = map[string]string{"touch": fmt.Sprint(i)}
		if err := h.client.Update(context.Background(), nc); err != nil {
			t.Fatal(err)
		}
		time.Sleep(400 * time.Millisecond)
		nc = h.get(t, "reuse")
	}
	if got := e.s.InstanceProfiles(); len(got) != 1 || got[0] != name {
		t.Fatalf("profiles %v, want only %s", got, name)
	}

	nc.Spec.Role = "OtherRole"
	if err := h.client.Update(context.Background(), nc); err != nil {
		t.Fatal(err)
	}
	eventually(t, "role replaced", func() (bool, string) {
		out, err := e.iam.GetInstanceProfile(context.Background(), &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
		if err != nil {
			return false, err.Error()
		}
		var roles []string
		for _, r := range out.InstanceProfile.Roles {
			roles = append(roles, aws.ToString(r.RoleName))
		}
		return slices.Equal(roles, []string{"OtherRole"}), fmt.Sprint(roles)
	})
	if got := e.s.InstanceProfiles(); len(got) != 1 {
		t.Errorf("profiles after the role changed: %v", got)
	}
	h.waitCondition(t, "reuse", awsv1.ConditionTypeReady, metav1.ConditionTrue, "")
}

func claimFor(name, class string) *apisv1.NodeClaim {
	return &apisv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apisv1.NodeClaimSpec{
			NodeClassRef: &apisv1.NodeClassReference{Group: awsv1.Group, Kind: awsv1.EC2NodeClassKind, Name: class},
			Requirements: []apisv1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}},
			Resources:    apisv1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		},
	}
}

func testDeletion(t *testing.T, h *harness) {
	e := realEndpoint(t, awsapi.Options{})
	d := &deleted{}
	h.start(t, e, d)
	ctx := context.Background()
	// The user's own profile, named in spec.instanceProfile, is never deleted.
	if _, err := e.iam.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String("users-profile")}); err != nil {
		t.Fatal(err)
	}
	named := class("named", alias("al2023@latest"))
	named.Spec.Role, named.Spec.InstanceProfile = "", ptr.To("users-profile")
	h.create(t, named)
	h.create(t, class("used", alias("al2023@latest")))
	h.waitCondition(t, "named", awsv1.ConditionTypeReady, metav1.ConditionTrue, "")
	used := h.waitCondition(t, "used", awsv1.ConditionTypeReady, metav1.ConditionTrue, "")
	// A claim of another provider's class of the same name does not hold the class.
	foreign := claimFor("foreign", "used")
	foreign.Spec.NodeClassRef.Group, foreign.Spec.NodeClassRef.Kind = "karpenter.sh.example", "OtherNodeClass"
	h.create(t, foreign)
	h.create(t, claimFor("claim-a", "used"))
	h.create(t, claimFor("claim-b", "used"))

	// A failing OnDelete holds the class, with an event, and is retried.
	d.mu.Lock()
	d.fail = true
	d.mu.Unlock()
	if err := h.client.Delete(ctx, h.get(t, "named")); err != nil {
		t.Fatal(err)
	}
	h.waitEvent(t, "named", corev1.EventTypeWarning, ReasonCleanupFailed, "launch templates of named could not be deleted")
	if h.get(t, "named") == nil {
		t.Fatal("the class was finalized although OnDelete failed")
	}
	d.mu.Lock()
	d.fail = false
	d.mu.Unlock()
	eventually(t, "named class gone", func() (bool, string) { return h.get(t, "named") == nil, "" })
	if _, err := e.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String("users-profile")}); err != nil {
		t.Errorf("the user's profile: %v", err)
	}
	if !d.has("named") {
		t.Error("OnDelete was not called for the named class")
	}

	if err := h.client.Delete(ctx, used); err != nil {
		t.Fatal(err)
	}
	h.waitEvent(t, "used", corev1.EventTypeNormal, ReasonWaitingOnNodeClaims, "Waiting on NodeClaim termination for claim-a, claim-b")
	time.Sleep(time.Second)
	if h.get(t, "used") == nil || d.has("used") || !slices.Contains(e.s.InstanceProfiles(), used.Status.InstanceProfile) {
		t.Fatal("the class was finalized while NodeClaims named it")
	}
	for _, n := range []string{"claim-a", "claim-b"} {
		if err := h.client.Delete(ctx, claimFor(n, "used")); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "used class gone", func() (bool, string) { return h.get(t, "used") == nil, "" })
	if !d.has("used") {
		t.Error("OnDelete was not called")
	}
	if got := e.s.InstanceProfiles(); !slices.Equal(got, []string{"users-profile"}) {
		t.Errorf("profiles left %v, want only the user's", got)
	}
}

func testThrottling(t *testing.T, h *harness) {
	e := realEndpoint(t, awsapi.Options{})
	// Three attempts per call (the SDK's retries), two failing reconciles.
	e.s.InjectFault(awsapi.Fault{Service: awsapi.ServiceEC2, Action: "DescribeSubnets", Kind: awsapi.FaultThrottle, Count: 6})
	h.start(t, e, nil)
	h.create(t, class("throttled", alias("al2023@latest")))
	nc := h.waitCondition(t, "throttled", awsv1.ConditionTypeReady, metav1.ConditionTrue, "")
	if hits := e.s.FaultHits(); hits[0] != 6 {
		t.Errorf("the fault was hit %d times, want 6", hits[0])
	}
	subnets := nc.Status.Subnets

	// Throttled for good: what was resolved stays as it was, Ready included.
	e.s.InjectFault(awsapi.Fault{Service: awsapi.ServiceEC2, Action: "DescribeSubnets", Kind: awsapi.FaultServerError})
	before := e.s.FaultHits()[1]
	eventually(t, "reconciles under throttling", func() (bool, string) {
		n := e.s.FaultHits()[1]
		return n >= before+6, fmt.Sprintf("%d hits", n)
	})
	nc = h.get(t, "throttled")
	if c := condition(nc, awsv1.ConditionTypeSubnetsReady); c.Status != metav1.ConditionTrue || !slices.Equal(nc.Status.Subnets, subnets) {
		t.Errorf("under server errors SubnetsReady became %s %q, subnets %v", c.Status, c.Message, nc.Status.Subnets)
	}
	if condition(nc, awsv1.ConditionTypeReady).Status != metav1.ConditionTrue {
		t.Error("a transient error made the class not Ready")
	}
	// Recovered: the next change is resolved again.
	e.s.ClearFaults()
	nc.Spec.SubnetSelectorTerms = []awsv1.SubnetSelectorTerm{{ID: subnets[0].ID}}
	if err := h.client.Update(context.Background(), nc); err != nil {
		t.Fatal(err)
	}
	eventually(t, "resolved after the faults", func() (bool, string) {
		nc = h.get(t, "throttled")
		return len(nc.Status.Subnets) == 1 && condition(nc, awsv1.ConditionTypeReady).Status == metav1.ConditionTrue, fmt.Sprint(nc.Status.Subnets)
	})
}

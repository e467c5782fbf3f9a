package aws

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/instance"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
)

// TestProvider runs the provider's tests on one API server; each subtest has its own endpoint.
func TestProvider(t *testing.T) {
	api := startAPIServer(t)
	t.Run("CreateLaunchesTheCheapestCompatibleOfferingAndTagsIt", func(t *testing.T) { testCreate(t, newEnv(t, api)) })
	t.Run("NodeOverlayPricesRankTheLaunch", func(t *testing.T) { testLaunchPrices(t, newEnv(t, api)) })
	t.Run("CreateIsIdempotentForAClaimWithAnInstance", func(t *testing.T) { testCreateIdempotent(t, newEnv(t, api)) })
	t.Run("NodeClassNotReady", func(t *testing.T) { testNotReady(t, newEnv(t, api)) })
	t.Run("AMIRequirementsChooseTheImage", func(t *testing.T) { testAMIRequirements(t, newEnv(t, api)) })
	t.Run("InsufficientCapacityNamesTheOfferings", func(t *testing.T) { testICE(t, newEnv(t, api)) })
	t.Run("SpotAndReservedCapacity", func(t *testing.T) { testCapacityTypes(t, newEnv(t, api)) })
	t.Run("GetListDelete", func(t *testing.T) { testGetListDelete(t, newEnv(t, api)) })
	t.Run("Drift", func(t *testing.T) { testDrift(t, newEnv(t, api)) })
	t.Run("AdoptedClaimsAreRestampedAndDrift", func(t *testing.T) { testStampHash(t, newEnv(t, api)) })
	t.Run("HundredClaimsOfOneShapeShareOneTemplate", func(t *testing.T) { testOneTemplate(t, newEnv(t, api)) })
	t.Run("APICallsPerThousandClaims", func(t *testing.T) { testAPICalls(t, newEnv(t, api)) })
	t.Run("NoFaultLeaksOrDoublesAnInstance", func(t *testing.T) { testFaults(t, api) })
	t.Run("AFleetReportsTheOfferingsItLaunchedAround", func(t *testing.T) { testFleetReportsTheOfferingsItLaunchedAround(t, newEnv(t, api)) })
	t.Run("TheLifecycleRecordsTheOfferingsAFleetLaunchedAround", func(t *testing.T) { testLifecycleRecordsTheOfferingsAFleetLaunchedAround(t, api) })
	t.Run("ALostCreateFleetAnswerLaunchesOnce", func(t *testing.T) { testLostCreateFleet(t, newEnv(t, api)) })
	t.Run("AnUnauthorizedCreateFleetFailsTheLaunchAndMarksNoOffering", func(t *testing.T) { testUnauthorizedCreateFleet(t, newEnv(t, api)) })
}

func testCreate(t *testing.T, e *env) {
	e.nodeClass(t, "create", nil)
	c := claim("create-1", "create", req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.large", "m5.xlarge", "c5.large"),
		req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand))
	c.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	out, err := e.p.Create(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	insts := e.Server.Instances()
	if len(insts) != 1 {
		t.Fatalf("%d instances, want 1", len(insts))
	}
	inst := insts[0]
	if out.Status.ProviderID != inst.ProviderID || out.Status.ImageID != e.amd64 {
		t.Fatalf("claim says %s/%s, endpoint %s/%s", out.Status.ProviderID, out.Status.ImageID, inst.ProviderID, inst.ImageID)
	}
	if inst.Type.Name != "c5.large" {
		t.Errorf("launched %s, want the cheapest of the three (c5.large)", inst.Type.Name)
	}
	for k, v := range map[string]string{
		corev1.LabelInstanceTypeStable: "c5.large", corev1.LabelTopologyZone: inst.Zone, apisv1.CapacityTypeLabelKey: "on-demand",
		corev1.LabelTopologyRegion: "us-east-1", apisv1.NodePoolLabelKey: "default", corev1.LabelArchStable: "amd64",
	} {
		if out.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, out.Labels[k], v)
		}
	}
	if out.Status.Capacity.Cpu().Value() != 2 || out.Status.Allocatable.Memory().IsZero() {
		t.Errorf("capacity %v allocatable %v", out.Status.Capacity, out.Status.Allocatable)
	}
	if out.Annotations[awsv1.AnnotationEC2NodeClassHashVersion] != awsv1.EC2NodeClassHashVersion || out.Annotations[awsv1.AnnotationEC2NodeClassHash] == "" {
		t.Errorf("hash annotations %v", out.Annotations)
	}
	for k, v := range map[string]string{
		instance.TagNodePool: "default", instance.TagNodeClaim: "create-1", instance.TagEC2NodeClass: "create",
		instance.TagEKSClusterName: "tenon", "kubernetes.io/cluster/tenon": "owned", instance.TagName: "create-1", "team": "ml",
	} {
		if inst.Tags[k] != v {
			t.Errorf("instance tag %s = %q, want %q", k, inst.Tags[k], v)
		}
	}
	if len(inst.Tags) > 0 && inst.SubnetID == "" {
		t.Error("no subnet")
	}
}

// With NodeOverlay prices in the context, CreateFleet goes out prioritized by them: c5.large,
// the cheapest by the cloud's prices, priced dearer, loses to m5.large, on demand and on spot.
func testLaunchPrices(t *testing.T, e *env) {
	e.nodeClass(t, "prices", nil)
	dearC5 := cloudprovider.WithLaunchPrices(ctx, func(it string, o *catalog.Offering) float64 {
		if it == "c5.large" {
			return o.Price + 1
		}
		return o.Price
	})
	for i, ct := range []string{apisv1.CapacityTypeOnDemand, apisv1.CapacityTypeSpot} {
		c := claim(fmt.Sprintf("prices-%d", i), "prices", req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.large", "c5.large"),
			req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, ct))
		c.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		out, err := e.p.Create(dearC5, c)
		if err != nil {
			t.Fatal(err)
		}
		if typ := out.Labels[corev1.LabelInstanceTypeStable]; typ != "m5.large" {
			t.Errorf("%s: launched %s, want m5.large (c5.large is dearer by the overlay)", ct, typ)
		}
	}
}

func testCreateIdempotent(t *testing.T, e *env) {
	e.nodeClass(t, "idem", nil)
	c := claim("idem-1", "idem")
	first, err := e.p.Create(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	// A controller that restarted before recording the launch asks again.
	restarted, err := New(Options{Client: e.api.client, EC2: e.EC2, Region: "us-east-1", ClusterName: "tenon", RESTConfig: e.api.cfg})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*Provider{e.p, restarted} {
		again, err := p.Create(ctx, c)
		if err != nil || again.Status.ProviderID != first.Status.ProviderID {
			t.Fatalf("Create again = %v, %v; want %s", again.Status.ProviderID, err, first.Status.ProviderID)
		}
	}
	if n := len(e.Server.Instances()); n != 1 {
		t.Fatalf("%d instances, want 1", n)
	}
}

func testNotReady(t *testing.T, e *env) {
	e.nodeClass(t, "notready", func(nc *awsv1.EC2NodeClass) {
		meta.SetStatusCondition(&nc.Status.Conditions, metav1.Condition{Type: awsv1.ConditionTypeReady, Status: metav1.ConditionFalse, Reason: "SubnetsNotFound", Message: "no subnet matches"})
	})
	np := &apisv1.NodePool{}
	for _, ref := range []*apisv1.NodeClassReference{
		{Group: awsv1.Group, Kind: awsv1.EC2NodeClassKind, Name: "notready"},
		{Group: awsv1.Group, Kind: awsv1.EC2NodeClassKind, Name: "missing"},
		{Group: "sim.tenon.sh", Kind: "SimNodeClass", Name: "notready"},
		nil,
	} {
		c := claim("nr", "x")
		c.Spec.NodeClassRef = ref
		if _, err := e.p.Create(ctx, c); !cloudprovider.IsNodeClassNotReady(err) {
			t.Errorf("Create with %v: %v, want NodeClassNotReady", ref, err)
		}
		np.Spec.Template.Spec.NodeClassRef = ref
		if _, err := e.p.GetInstanceTypes(ctx, np); !cloudprovider.IsNodeClassNotReady(err) {
			t.Errorf("GetInstanceTypes with %v: %v, want NodeClassNotReady", ref, err)
		}
	}
	if n := len(e.Server.Instances()); n != 0 {
		t.Fatalf("%d instances launched for a NodeClass that is not ready", n)
	}
}

func testAMIRequirements(t *testing.T, e *env) {
	e.nodeClass(t, "arm", nil)
	out, err := e.p.Create(ctx, claim("arm-1", "arm", req(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "arm64")))
	if err != nil {
		t.Fatal(err)
	}
	if out.Status.ImageID != e.arm64 || out.Labels[corev1.LabelArchStable] != "arm64" {
		t.Fatalf("an arm64 claim got image %s and arch %s", out.Status.ImageID, out.Labels[corev1.LabelArchStable])
	}
	// With only the amd64 image, no arm64 type is offered, and an arm64 claim cannot launch.
	e.updateStatus(t, "arm", func(s *awsv1.EC2NodeClassStatus) { s.AMIs = s.AMIs[:1] })
	np := &apisv1.NodePool{}
	np.Spec.Template.Spec.NodeClassRef = &apisv1.NodeClassReference{Group: awsv1.Group, Kind: awsv1.EC2NodeClassKind, Name: "arm"}
	types, err := e.p.GetInstanceTypes(ctx, np)
	if err != nil || len(types) == 0 {
		t.Fatalf("GetInstanceTypes = %d types, %v", len(types), err)
	}
	for _, it := range types {
		if arch, _ := it.Label(corev1.LabelArchStable); arch != "amd64" {
			t.Fatalf("%s (%s) is offered with only an amd64 image", it.Name, arch)
		}
	}
	if _, err := e.p.Create(ctx, claim("arm-2", "arm", req(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "arm64"))); err == nil || cloudprovider.IsInsufficientCapacity(err) {
		t.Fatalf("an arm64 claim without an arm64 image: %v, want a plain error", err)
	}
}

func testICE(t *testing.T, e *env) {
	e.nodeClass(t, "ice", nil)
	for _, sn := range e.Subnets(t) {
		e.Server.SetInsufficientCapacity("m5.large", sn.Zone, apisv1.CapacityTypeOnDemand, true)
	}
	onlyM5 := []apisv1.NodeSelectorRequirementWithMinValues{
		req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.large"),
		req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand),
	}
	_, err := e.p.Create(ctx, claim("ice-1", "ice", onlyM5...))
	var ice *cloudprovider.InsufficientCapacityError
	if !errors.As(err, &ice) {
		t.Fatalf("err = %v, want insufficient capacity", err)
	}
	zones := map[string]bool{}
	for _, o := range ice.Offerings {
		if o.InstanceType != "m5.large" || o.CapacityType != apisv1.CapacityTypeOnDemand {
			t.Errorf("named %v, which was not tried", o)
		}
		zones[o.Zone] = true
	}
	if len(zones) != len(e.Subnets(t)) {
		t.Errorf("named zones %v, want every zone with a subnet", zones)
	}
	// Offerings marked unavailable are not tried: with m5.large marked everywhere the claim
	// fails at once, naming them, without calling CreateFleet.
	for _, o := range ice.Offerings {
		e.unavailable.MarkUnavailable(o, "test", 0x7fffffffffff)
	}
	fleets := e.Calls("CreateFleet")
	if _, err := e.p.Create(ctx, claim("ice-2", "ice", onlyM5...)); !cloudprovider.IsInsufficientCapacity(err) || fleets() != 0 {
		t.Fatalf("with every offering marked: %v after %d CreateFleet calls", err, fleets())
	}
	// A wider claim launches around the marked offerings.
	out, err := e.p.Create(ctx, claim("ice-3", "ice", req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.large", "m5.xlarge"),
		req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand)))
	if err != nil || out.Labels[corev1.LabelInstanceTypeStable] != "m5.xlarge" {
		t.Fatalf("wider claim: %v, %v", out.Labels[corev1.LabelInstanceTypeStable], err)
	}
}

// testUnauthorizedCreateFleet: a CreateFleet refused for the caller's policy (EC2's
// UnauthorizedOperation) fails the launch with an error that names the refusal, launches
// nothing, and says nothing about capacity: no offering is marked unavailable, so that the
// claim launches on the same offerings once the policy allows it.
func testUnauthorizedCreateFleet(t *testing.T, e *env) {
	e.nodeClass(t, "denied", nil)
	reqs := []apisv1.NodeSelectorRequirementWithMinValues{
		req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.large", "m5.xlarge"),
		req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand),
	}
	refusal := len(e.Server.FaultHits())
	e.Server.InjectFault(awsapi.Fault{Service: awsapi.ServiceEC2, Action: "CreateFleet", Kind: awsapi.FaultAccessDenied})
	fleets := func() int { return e.Server.FaultHits()[refusal] } // the CreateFleet calls refused
	_, err := e.p.Create(ctx, claim("denied-1", "denied", reqs...))
	if err == nil || !strings.Contains(err.Error(), "UnauthorizedOperation") {
		t.Fatalf("err = %v, want an error naming UnauthorizedOperation", err)
	}
	if cloudprovider.IsInsufficientCapacity(err) {
		t.Errorf("an access-denied launch reported as insufficient capacity: %v", err)
	}
	if n := e.unavailable.Len(); n != 0 {
		t.Errorf("%d offerings marked unavailable for an access-denied launch", n)
	}
	if n := len(e.Server.Instances()); n != 0 {
		t.Errorf("%d instances launched by a refused CreateFleet", n)
	}
	if n := fleets(); n != 1 {
		t.Errorf("%d CreateFleet calls, want 1: a refusal is not retried", n)
	}
	// Allowed again, the same claim launches on the offerings it asked for.
	e.Server.ClearFaults()
	out, err := e.p.Create(ctx, claim("denied-1", "denied", reqs...))
	if err != nil || out.Labels[corev1.LabelInstanceTypeStable] != "m5.large" {
		t.Fatalf("after the refusal: %v, %v; want m5.large", out.Labels[corev1.LabelInstanceTypeStable], err)
	}
}

func testCapacityTypes(t *testing.T, e *env) {
	e.nodeClass(t, "ct", nil)
	spot, err := e.p.Create(ctx, claim("ct-spot", "ct", req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.xlarge"),
		req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand, apisv1.CapacityTypeSpot)))
	if err != nil || spot.Labels[apisv1.CapacityTypeLabelKey] != apisv1.CapacityTypeSpot {
		t.Fatalf("a claim allowing spot: %v, %v", spot.Labels[apisv1.CapacityTypeLabelKey], err)
	}
	res, err := e.p.Create(ctx, claim("ct-res", "ct", req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeReserved),
		req(apisv1.LabelCapacityReservationID, corev1.NodeSelectorOpIn, reservationID)))
	if err != nil {
		t.Fatal(err)
	}
	if res.Labels[apisv1.LabelCapacityReservationID] != reservationID || res.Labels[apisv1.CapacityTypeLabelKey] != apisv1.CapacityTypeReserved {
		t.Fatalf("reserved claim labels %v", res.Labels)
	}
	for _, inst := range e.Server.Instances() {
		if inst.ProviderID == res.Status.ProviderID && inst.ReservationID != reservationID {
			t.Fatalf("the endpoint launched it outside the reservation: %q", inst.ReservationID)
		}
	}
	got, err := e.p.Get(ctx, res.Status.ProviderID)
	if err != nil || got.Labels[apisv1.CapacityTypeLabelKey] != apisv1.CapacityTypeReserved || got.Labels[apisv1.LabelCapacityReservationID] != reservationID {
		t.Fatalf("Get of the reserved instance: %v, %v", got, err)
	}
	// A capacity block launches with market type capacity-block (the endpoint refuses a block
	// launch that does not target its reservation).
	blk, err := e.p.Create(ctx, claim("ct-block", "ct", req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeReserved),
		req(apisv1.LabelCapacityReservationID, corev1.NodeSelectorOpIn, blockID)))
	if err != nil {
		t.Fatal(err)
	}
	if blk.Labels[apisv1.LabelCapacityReservationID] != blockID || blk.Labels[corev1.LabelInstanceTypeStable] != "c5.large" {
		t.Fatalf("capacity block claim labels %v", blk.Labels)
	}
	out, err := e.EC2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{blk.Status.ProviderID[strings.LastIndex(blk.Status.ProviderID, "/")+1:]}})
	if err != nil || len(out.Reservations) != 1 || out.Reservations[0].Instances[0].InstanceLifecycle != ec2types.InstanceLifecycleTypeCapacityBlock {
		t.Fatalf("the block's instance: %+v, %v", out, err)
	}
}

func testGetListDelete(t *testing.T, e *env) {
	e.nodeClass(t, "gld", nil)
	var ids []string
	for _, name := range []string{"gld-1", "gld-2", "gld-3"} {
		out, err := e.p.Create(ctx, claim(name, "gld", req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, out.Status.ProviderID)
	}
	list, err := e.p.List(ctx)
	if err != nil || len(list) != 3 {
		t.Fatalf("List = %d, %v", len(list), err)
	}
	var names []string
	for _, v := range list {
		names = append(names, v.Name)
		if v.Spec.NodeClassRef == nil || v.Spec.NodeClassRef.Name != "gld" || v.CreationTimestamp.IsZero() || v.Labels[apisv1.NodePoolLabelKey] != "default" {
			t.Errorf("view %s: ref %v, created %v, labels %v", v.Name, v.Spec.NodeClassRef, v.CreationTimestamp, v.Labels)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"gld-1", "gld-2", "gld-3"}) {
		t.Fatalf("views named %v", names)
	}
	got, err := e.p.Get(ctx, ids[0])
	if err != nil || got.Name != "gld-1" || got.Status.ProviderID != ids[0] {
		t.Fatalf("Get = %v, %v", got, err)
	}
	c := claim("gld-1", "gld")
	c.Status.ProviderID = ids[0]
	if err := e.p.Delete(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := e.p.Delete(ctx, c); !cloudprovider.IsNodeClaimNotFound(err) {
		t.Fatalf("second Delete = %v, want not found", err)
	}
	if _, err := e.p.Get(ctx, ids[0]); !cloudprovider.IsNodeClaimNotFound(err) {
		t.Fatalf("Get after Delete = %v, want not found", err)
	}
	c.Status.ProviderID = "garbage"
	if err := e.p.Delete(ctx, c); !cloudprovider.IsNodeClaimNotFound(err) {
		t.Fatalf("Delete of a bad provider ID = %v, want not found", err)
	}
	if list, _ := e.p.List(ctx); len(list) != 2 {
		t.Fatalf("List after a delete = %d", len(list))
	}
}

func testDrift(t *testing.T, e *env) {
	e.nodeClass(t, "drift", nil)
	out, err := e.p.Create(ctx, claim("drift-1", "drift", req(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "amd64")))
	if err != nil {
		t.Fatal(err)
	}
	check := func(want cloudprovider.DriftReason) {
		t.Helper()
		got, err := e.p.IsDrifted(ctx, out)
		if err != nil || got != want {
			t.Fatalf("IsDrifted = %q, %v; want %q", got, err, want)
		}
	}
	describes := e.Calls("DescribeInstances")
	check("")
	var saved awsv1.EC2NodeClassStatus
	e.updateStatus(t, "drift", func(s *awsv1.EC2NodeClassStatus) { saved = *s.DeepCopy(); s.AMIs = s.AMIs[1:] })
	check(DriftAMI)
	e.updateStatus(t, "drift", func(s *awsv1.EC2NodeClassStatus) {
		*s = *saved.DeepCopy()
		s.Subnets = slices.DeleteFunc(s.Subnets, func(sn awsv1.Subnet) bool { return sn.Zone == out.Labels[corev1.LabelTopologyZone] })
	})
	check(DriftSubnet)
	e.updateStatus(t, "drift", func(s *awsv1.EC2NodeClassStatus) { *s = *saved.DeepCopy(); s.SecurityGroups = s.SecurityGroups[:1] })
	check(DriftSecurityGroup)
	e.updateStatus(t, "drift", func(s *awsv1.EC2NodeClassStatus) { *s = *saved.DeepCopy() })
	check("")
	nc := &awsv1.EC2NodeClass{}
	if err := e.api.client.Get(ctx, objKey("drift"), nc); err != nil {
		t.Fatal(err)
	}
	nc.Spec.Tags = map[string]string{"team": "other"}
	if err := e.api.client.Update(ctx, nc); err != nil {
		t.Fatal(err)
	}
	check(DriftNodeClass)
	// A claim stamped under another hash version is not judged by its hash.
	out.Annotations[awsv1.AnnotationEC2NodeClassHashVersion] = "v-other"
	check("")
	// Drift checks in turn share one listing of the instances.
	if n := describes(); n != 1 {
		t.Errorf("7 drift checks made %d DescribeInstances calls, want 1", n)
	}
}

// A claim Karpenter launched carries Karpenter's EC2NodeClass hash and version, which are not
// judged. StampHash gives it tenon's hash of the class as it is now and version tenon-v1, so
// that a later change to the class drifts it; a claim already Drifted gets the version only,
// its old hash keeping it drifted; a claim of tenon's version, one not launched, and one whose
// EC2NodeClass is missing are left as they are.
func testStampHash(t *testing.T, e *env) {
	e.nodeClass(t, "stamp", nil)
	const karpenterHash, karpenterVersion = "9106813447891402951", "v4"
	launch := func(name string, drifted bool) *apisv1.NodeClaim {
		t.Helper()
		out, err := e.p.Create(ctx, claim(name, "stamp", req(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "amd64"),
			req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand)))
		if err != nil {
			t.Fatal(err)
		}
		out.Annotations[awsv1.AnnotationEC2NodeClassHash] = karpenterHash
		out.Annotations[awsv1.AnnotationEC2NodeClassHashVersion] = karpenterVersion
		if drifted {
			out.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeDrifted, Status: metav1.ConditionTrue, Reason: "NodeClassDrift"}, time.Now())
		}
		return out
	}
	drift := func(c *apisv1.NodeClaim, want cloudprovider.DriftReason) {
		t.Helper()
		got, err := e.p.IsDrifted(ctx, c)
		if err != nil || got != want {
			t.Fatalf("claim %s: IsDrifted = %q, %v; want %q", c.Name, got, err, want)
		}
	}
	stamp := func(c *apisv1.NodeClaim, wantFrom, wantTo string) {
		t.Helper()
		from, to, err := e.p.StampHash(ctx, c)
		if err != nil || from != wantFrom || to != wantTo {
			t.Fatalf("claim %s: StampHash = %q, %q, %v; want %q, %q", c.Name, from, to, err, wantFrom, wantTo)
		}
	}
	fresh, drifted := launch("stamp-fresh", false), launch("stamp-drifted", true)
	drift(fresh, "") // Karpenter's hash is not judged
	stamp(fresh, karpenterVersion, awsv1.EC2NodeClassHashVersion)
	stamp(drifted, karpenterVersion, awsv1.EC2NodeClassHashVersion)
	nc := &awsv1.EC2NodeClass{}
	if err := e.api.client.Get(ctx, objKey("stamp"), nc); err != nil {
		t.Fatal(err)
	}
	if h := fresh.Annotations[awsv1.AnnotationEC2NodeClassHash]; h != nc.Hash(e.p.cluster.CABundle) || h == karpenterHash {
		t.Fatalf("re-stamped hash %s, want the class's %s", h, nc.Hash(e.p.cluster.CABundle))
	}
	if h := drifted.Annotations[awsv1.AnnotationEC2NodeClassHash]; h != karpenterHash {
		t.Errorf("a Drifted claim's hash was re-stamped as %s; it must keep %s", h, karpenterHash)
	}
	drift(fresh, "")
	drift(drifted, DriftNodeClass)
	stamp(fresh, "", "") // tenon's version already
	nc.Spec.Tags = map[string]string{"team": "other"}
	if err := e.api.client.Update(ctx, nc); err != nil {
		t.Fatal(err)
	}
	drift(fresh, DriftNodeClass)

	unlaunched := claim("stamp-unlaunched", "stamp")
	stamp(unlaunched, "", "")
	gone := launch("stamp-gone", false)
	gone.Spec.NodeClassRef.Name = "no-such-class"
	stamp(gone, "", "")
	if a := gone.Annotations; a[awsv1.AnnotationEC2NodeClassHashVersion] != karpenterVersion || a[awsv1.AnnotationEC2NodeClassHash] != karpenterHash {
		t.Errorf("a claim whose EC2NodeClass is missing was re-stamped: %v", a)
	}
}

func testOneTemplate(t *testing.T, e *env) {
	e.nodeClass(t, "shape", nil)
	creates, describes := e.Calls("CreateLaunchTemplate"), e.Calls("DescribeInstances")
	var wg sync.WaitGroup
	errs := make([]error, 100)
	for i := range 100 {
		wg.Go(func() {
			_, errs[i] = e.p.Create(ctx, claim("shape-"+itoa(i), "shape", req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.large", "m5.xlarge"),
				req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand)))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if n := creates(); n != 1 {
		t.Fatalf("100 claims of one shape made %d launch templates, want 1", n)
	}
	// The Creates reach the lookup spread over the time their NodeClass reads take, so
	// they share calls in several windows rather than one.
	if n := describes(); n > 25 {
		t.Errorf("100 Creates made %d DescribeInstances calls looking for their instances, want at most 25", n)
	} else {
		t.Logf("100 concurrent Creates made %d DescribeInstances calls", n)
	}
	if n := len(e.Server.Instances()); n != 100 {
		t.Fatalf("%d instances, want 100", n)
	}
}

// testAPICalls launches and deletes 1,000 claims of one shape at once and reports the EC2
// calls it took (docs/performance.md): one CreateFleet per claim is inherent; everything else
// is shared.
func testAPICalls(t *testing.T, e *env) {
	e.nodeClass(t, "thousand", nil)
	// As in the controller, the NodeClass is read from an informer's cache, not the API server.
	informers, err := cache.New(e.api.cfg, cache.Options{Scheme: e.api.client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = informers.Start(cctx) }()
	if _, err := informers.GetInformer(cctx, &awsv1.EC2NodeClass{}); err != nil || !informers.WaitForCacheSync(cctx) {
		t.Fatalf("starting the cache: %v", err)
	}
	p, err := New(Options{Client: informers, EC2: e.EC2, Region: "us-east-1", ClusterName: "tenon", RESTConfig: e.api.cfg})
	if err != nil {
		t.Fatal(err)
	}
	actions := []string{"CreateFleet", "DescribeInstances", "TerminateInstances", "CreateLaunchTemplate", "DescribeLaunchTemplates"}
	counts := map[string]func() int{}
	for _, a := range actions {
		counts[a] = e.Calls(a)
	}
	n := 1000
	if testing.Short() {
		n = 100
	}
	claims := make([]*apisv1.NodeClaim, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			c := claim("thousand-"+itoa(i), "thousand", req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.large", "m5.xlarge", "c5.large"),
				req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand))
			claims[i], errs[i] = p.Create(ctx, c)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	launch := map[string]int{}
	for _, a := range actions {
		launch[a] = counts[a]()
	}
	for i := range n {
		wg.Go(func() { errs[i] = p.Delete(ctx, claims[i]) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	total := map[string]int{}
	for _, a := range actions {
		total[a] = counts[a]()
	}
	t.Logf("%d Creates: %v; then %d Deletes: %v", n, launch, n, total)
	if launch["CreateFleet"] != n || launch["CreateLaunchTemplate"] != 1 || launch["DescribeLaunchTemplates"] != 1 {
		t.Errorf("launch calls %v: want one fleet per claim and one template", launch)
	}
	if d := total["DescribeInstances"]; d > n/10 {
		t.Errorf("%d DescribeInstances calls for %d Creates and Deletes, want at most %d", d, n, n/10)
	}
	if d := total["TerminateInstances"]; d > n/10 {
		t.Errorf("%d TerminateInstances calls for %d Deletes, want at most %d", d, n, n/10)
	}
}

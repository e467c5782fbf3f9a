package awsapi

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// subnets returns the IDs of the discovered subnets by zone.
func (e *env) subnets(t *testing.T) map[string]string {
	t.Helper()
	out, err := e.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, sn := range out.Subnets {
		m[aws.ToString(sn.AvailabilityZone)] = aws.ToString(sn.SubnetId)
	}
	return m
}

// template creates a launch template with the recommended AL2023 AMI of an architecture.
func (e *env) template(t *testing.T, name, arch string, data func(*ec2types.RequestLaunchTemplateData)) string {
	t.Helper()
	img := e.param(t, "/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/"+arch+"/standard/recommended/image_id")
	d := &ec2types.RequestLaunchTemplateData{
		ImageId:            aws.String(img),
		UserData:           aws.String("IyEvYmluL2Jhc2gK"),
		IamInstanceProfile: &ec2types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String("tenon-node")},
		TagSpecifications: []ec2types.LaunchTemplateTagSpecificationRequest{{
			ResourceType: ec2types.ResourceTypeInstance,
			Tags:         []ec2types.Tag{{Key: aws.String("kubernetes.io/cluster/tenon"), Value: aws.String("owned")}},
		}},
	}
	if data != nil {
		data(d)
	}
	out, err := e.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String(name), LaunchTemplateData: d})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.LaunchTemplate.LaunchTemplateId)
}

// fleet builds a CreateFleet input: one launch template, overrides type × zone.
func fleet(template string, capacityType ec2types.DefaultTargetCapacityType, n int32, overrides ...ec2types.FleetLaunchTemplateOverridesRequest) *ec2.CreateFleetInput {
	return &ec2.CreateFleetInput{
		Type: ec2types.FleetTypeInstant,
		LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: aws.String(template), Version: aws.String("$Latest")},
			Overrides:                   overrides,
		}},
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{DefaultTargetCapacityType: capacityType, TotalTargetCapacity: aws.Int32(n)},
		OnDemandOptions:             &ec2types.OnDemandOptionsRequest{AllocationStrategy: ec2types.FleetOnDemandAllocationStrategyLowestPrice},
		SpotOptions:                 &ec2types.SpotOptionsRequest{AllocationStrategy: ec2types.SpotAllocationStrategyPriceCapacityOptimized},
		TagSpecifications: []ec2types.TagSpecification{{
			ResourceType: ec2types.ResourceTypeInstance,
			Tags:         []ec2types.Tag{{Key: aws.String("karpenter.sh/nodeclaim"), Value: aws.String("default-abc12")}, {Key: aws.String("karpenter.sh/nodepool"), Value: aws.String("default")}},
		}},
	}
}

func ovr(instanceType, subnet string) ec2types.FleetLaunchTemplateOverridesRequest {
	return ec2types.FleetLaunchTemplateOverridesRequest{InstanceType: ec2types.InstanceType(instanceType), SubnetId: aws.String(subnet)}
}

func TestLaunchTemplatesAreCreatedDescribedAndDeleted(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.template(t, "tenon/default/abc", "x86_64", nil)
	_, err := e.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("tenon/default/abc"), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String("ami-1")}})
	wantCode(t, err, "InvalidLaunchTemplateName.AlreadyExistsException")
	_, err = e.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("other"), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String("ami-00000000000000000")}})
	wantCode(t, err, "InvalidAMIID.NotFound")

	out, err := e.ec2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{"tenon/default/abc"}})
	if err != nil || len(out.LaunchTemplates) != 1 || aws.ToString(out.LaunchTemplates[0].LaunchTemplateId) != id {
		t.Fatalf("describe by name: %+v (%v)", out, err)
	}
	if _, err := e.ec2.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{id}, Tags: []ec2types.Tag{{Key: aws.String("karpenter.k8s.aws/cluster"), Value: aws.String("tenon")}}}); err != nil {
		t.Fatal(err)
	}
	tagged, err := e.ec2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{Filters: []ec2types.Filter{{Name: aws.String("tag:karpenter.k8s.aws/cluster"), Values: []string{"tenon"}}}})
	if err != nil || len(tagged.LaunchTemplates) != 1 {
		t.Fatalf("describe by tag: %d (%v)", len(tagged.LaunchTemplates), err)
	}
	if _, err := e.ec2.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String("tenon/default/abc")}); err != nil {
		t.Fatal(err)
	}
	_, err = e.ec2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{"tenon/default/abc"}})
	wantCode(t, err, "InvalidLaunchTemplateName.NotFoundException")
	_, err = e.ec2.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateId: aws.String(id)})
	wantCode(t, err, "InvalidLaunchTemplateId.NotFound")
}

func TestCreateFleetRecordsICEForOneOverrideAndLaunchesOnAnother(t *testing.T) {
	e := newEnv(t, Options{Delays: cloud.Delays{Boot: 20 * time.Second, Registration: 10 * time.Second, Shutdown: 30 * time.Second}})
	sn := e.subnets(t)
	e.template(t, "tenon-lt", "x86_64", nil)
	e.s.SetInsufficientCapacity("m5.large", "us-east-1a", apisv1.CapacityTypeOnDemand, true)
	// m5.large is cheaper than m5.xlarge, so lowest-price tries it first in both zones.
	out, err := e.ec2.CreateFleet(ctx, fleet("tenon-lt", ec2types.DefaultTargetCapacityTypeOnDemand, 1,
		ovr("m5.xlarge", sn["us-east-1b"]), ovr("m5.large", sn["us-east-1a"]), ovr("m5.large", sn["us-east-1b"])))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Errors) != 1 || aws.ToString(out.Errors[0].ErrorCode) != "InsufficientInstanceCapacity" ||
		out.Errors[0].LaunchTemplateAndOverrides.Overrides.InstanceType != "m5.large" || aws.ToString(out.Errors[0].LaunchTemplateAndOverrides.Overrides.AvailabilityZone) != "us-east-1a" {
		t.Fatalf("errors: %+v", out.Errors)
	}
	if len(out.Instances) != 1 || len(out.Instances[0].InstanceIds) != 1 || out.Instances[0].InstanceType != "m5.large" ||
		aws.ToString(out.Instances[0].LaunchTemplateAndOverrides.Overrides.SubnetId) != sn["us-east-1b"] || out.Instances[0].Lifecycle != ec2types.InstanceLifecycleOnDemand {
		t.Fatalf("instances: %+v", out.Instances)
	}
	id := out.Instances[0].InstanceIds[0]
	if !strings.HasPrefix(id, "i-") || len(id) != 19 {
		t.Errorf("instance ID %q is not EC2-shaped", id)
	}
	desc, err := e.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	inst := desc.Reservations[0].Instances[0]
	if inst.State.Name != ec2types.InstanceStateNamePending || aws.ToString(inst.Placement.AvailabilityZone) != "us-east-1b" || aws.ToString(inst.SubnetId) != sn["us-east-1b"] {
		t.Fatalf("instance: %s in %s", inst.State.Name, aws.ToString(inst.Placement.AvailabilityZone))
	}
	tags := map[string]string{}
	for _, tg := range inst.Tags {
		tags[aws.ToString(tg.Key)] = aws.ToString(tg.Value)
	}
	if tags["karpenter.sh/nodeclaim"] != "default-abc12" || tags["kubernetes.io/cluster/tenon"] != "owned" || tags["aws:ec2launchtemplate:id"] == "" {
		t.Errorf("tags %v lack the request's, the template's or EC2's own", tags)
	}
	if inst.IamInstanceProfile == nil || !strings.HasSuffix(aws.ToString(inst.IamInstanceProfile.Arn), ":instance-profile/tenon-node") {
		t.Errorf("instance profile %+v", inst.IamInstanceProfile)
	}
	e.advance(20 * time.Second)
	desc, _ = e.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if st := desc.Reservations[0].Instances[0].State; st.Name != ec2types.InstanceStateNameRunning || aws.ToInt32(st.Code) != 16 {
		t.Fatalf("after boot: %s %d", st.Name, aws.ToInt32(st.Code))
	}
	if got := e.s.Instances()[0].ProviderID; got != "aws:///us-east-1b/"+id {
		t.Errorf("provider ID %q", got)
	}

	// With every override out of capacity, the fleet launches nothing and says why for each.
	e.s.SetInsufficientCapacity("m5.large", "us-east-1b", apisv1.CapacityTypeOnDemand, true)
	e.s.SetInsufficientCapacity("m5.xlarge", "us-east-1b", apisv1.CapacityTypeOnDemand, true)
	out, err = e.ec2.CreateFleet(ctx, fleet("tenon-lt", ec2types.DefaultTargetCapacityTypeOnDemand, 1,
		ovr("m5.large", sn["us-east-1a"]), ovr("m5.large", sn["us-east-1b"]), ovr("m5.xlarge", sn["us-east-1b"])))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Instances) != 0 || len(out.Errors) != 3 {
		t.Fatalf("all ICE: %d instances, %d errors", len(out.Instances), len(out.Errors))
	}
}

func TestCreateFleetRespectsTheEnginesCapacityPoolsAndSellsSpot(t *testing.T) {
	pool := cloud.Pool{Match: scheduling.NewRequirements(scheduling.In(apisv1.LabelInstanceType, "c5.large"), scheduling.In(apisv1.CapacityTypeLabelKey, apisv1.CapacityTypeSpot)), Capacity: 1}
	e := newEnv(t, Options{Pools: []cloud.Pool{pool}})
	sn := e.subnets(t)
	e.template(t, "tenon-lt", "x86_64", nil)
	in := fleet("tenon-lt", ec2types.DefaultTargetCapacityTypeSpot, 1, ovr("c5.large", sn["us-east-1a"]))
	out, err := e.ec2.CreateFleet(ctx, in)
	if err != nil || len(out.Instances) != 1 || out.Instances[0].Lifecycle != ec2types.InstanceLifecycleSpot {
		t.Fatalf("first spot launch: %+v %+v (%v)", out.Instances, out.Errors, err)
	}
	desc, _ := e.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: out.Instances[0].InstanceIds})
	if desc.Reservations[0].Instances[0].InstanceLifecycle != ec2types.InstanceLifecycleTypeSpot {
		t.Errorf("lifecycle %q", desc.Reservations[0].Instances[0].InstanceLifecycle)
	}
	in.ClientToken = nil // the SDK filled in an idempotency token; a new request needs a new one
	out, err = e.ec2.CreateFleet(ctx, in)
	if err != nil || len(out.Instances) != 0 || len(out.Errors) != 1 || aws.ToString(out.Errors[0].ErrorCode) != "InsufficientInstanceCapacity" || out.Errors[0].Lifecycle != ec2types.InstanceLifecycleSpot {
		t.Fatalf("second spot launch into a full pool: %+v %+v (%v)", out.Instances, out.Errors, err)
	}
	// A type not sold as spot in the zone is Unsupported, not out of capacity.
	out, err = e.ec2.CreateFleet(ctx, fleet("tenon-lt", ec2types.DefaultTargetCapacityTypeOnDemand, 1, ovr("m5.nope", sn["us-east-1a"])))
	if err != nil || len(out.Errors) != 1 || aws.ToString(out.Errors[0].ErrorCode) != "InvalidParameterValue" {
		t.Fatalf("unknown type: %+v (%v)", out.Errors, err)
	}
	_, err = e.ec2.CreateFleet(ctx, fleet("missing", ec2types.DefaultTargetCapacityTypeOnDemand, 1, ovr("m5.large", sn["us-east-1a"])))
	wantCode(t, err, "InvalidLaunchTemplateName.NotFoundException")
}

func TestCreateFleetLaunchesIntoATargetedReservationUntilItIsFull(t *testing.T) {
	cat, err := catalog.Load("us-east-1", catalog.WithReservations(catalog.Reservation{ID: "cr-0123456789abcdef0", InstanceType: "m5.large", Zone: "us-east-1a", Count: 1}))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, Options{Catalog: cat, Targeted: []string{"cr-0123456789abcdef0"}})
	sn := e.subnets(t)
	e.template(t, "reserved", "x86_64", func(d *ec2types.RequestLaunchTemplateData) {
		d.CapacityReservationSpecification = &ec2types.LaunchTemplateCapacityReservationSpecificationRequest{
			CapacityReservationPreference: ec2types.CapacityReservationPreferenceCapacityReservationsOnly,
			CapacityReservationTarget:     &ec2types.CapacityReservationTarget{CapacityReservationId: aws.String("cr-0123456789abcdef0")},
		}
	})
	in := fleet("reserved", ec2types.DefaultTargetCapacityTypeOnDemand, 1, ovr("m5.large", sn["us-east-1a"]))
	out, err := e.ec2.CreateFleet(ctx, in)
	if err != nil || len(out.Instances) != 1 {
		t.Fatalf("reserved launch: %+v (%v)", out.Errors, err)
	}
	desc, _ := e.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: out.Instances[0].InstanceIds})
	if got := aws.ToString(desc.Reservations[0].Instances[0].CapacityReservationId); got != "cr-0123456789abcdef0" {
		t.Errorf("capacity reservation ID %q", got)
	}
	crs, _ := e.ec2.DescribeCapacityReservations(ctx, &ec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{"cr-0123456789abcdef0"}})
	if got := aws.ToInt32(crs.CapacityReservations[0].AvailableInstanceCount); got != 0 || crs.CapacityReservations[0].InstanceMatchCriteria != ec2types.InstanceMatchCriteriaTargeted {
		t.Errorf("reservation after launch: %d available, %s", got, crs.CapacityReservations[0].InstanceMatchCriteria)
	}
	in.ClientToken = nil
	out, err = e.ec2.CreateFleet(ctx, in)
	if err != nil || len(out.Errors) != 1 || aws.ToString(out.Errors[0].ErrorCode) != "ReservationCapacityExceeded" {
		t.Fatalf("full reservation: %+v %+v (%v)", out.Instances, out.Errors, err)
	}
}

func TestCreateFleetWithAClientTokenIsIdempotent(t *testing.T) {
	e := newEnv(t, Options{})
	sn := e.subnets(t)
	e.template(t, "tenon-lt", "x86_64", nil)
	in := fleet("tenon-lt", ec2types.DefaultTargetCapacityTypeOnDemand, 1, ovr("m5.large", sn["us-east-1a"]))
	in.ClientToken = aws.String("claim-uid-1")
	a, err := e.ec2.CreateFleet(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.ec2.CreateFleet(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if a.Instances[0].InstanceIds[0] != b.Instances[0].InstanceIds[0] || len(e.s.Instances()) != 1 {
		t.Fatalf("a retried CreateFleet launched again: %v then %v", a.Instances[0].InstanceIds, b.Instances[0].InstanceIds)
	}
}

func TestCreateFleetRefusesAnAMIOfTheWrongArchitecture(t *testing.T) {
	e := newEnv(t, Options{})
	sn := e.subnets(t)
	e.template(t, "arm", "arm64", nil)
	// m6g.large is cheaper, so m5.large is tried only with it out of capacity.
	e.s.SetInsufficientCapacity("m6g.large", "us-east-1a", apisv1.CapacityTypeOnDemand, true)
	out, err := e.ec2.CreateFleet(ctx, fleet("arm", ec2types.DefaultTargetCapacityTypeOnDemand, 1, ovr("m5.large", sn["us-east-1a"]), ovr("m6g.large", sn["us-east-1a"])))
	if err != nil || len(out.Errors) != 2 || len(out.Instances) != 0 {
		t.Fatalf("arm64 AMI: %+v %+v (%v)", out.Instances, out.Errors, err)
	}
	codes := map[string]string{}
	for _, fe := range out.Errors {
		codes[string(fe.LaunchTemplateAndOverrides.Overrides.InstanceType)] = aws.ToString(fe.ErrorCode)
	}
	if codes["m5.large"] != "InvalidParameterValue" || codes["m6g.large"] != "InsufficientInstanceCapacity" {
		t.Fatalf("error codes %v", codes)
	}
	e.s.SetInsufficientCapacity("m6g.large", "us-east-1a", apisv1.CapacityTypeOnDemand, false)
	out, err = e.ec2.CreateFleet(ctx, fleet("arm", ec2types.DefaultTargetCapacityTypeOnDemand, 1, ovr("m5.large", sn["us-east-1a"]), ovr("m6g.large", sn["us-east-1a"])))
	if err != nil || len(out.Instances) != 1 || out.Instances[0].InstanceType != "m6g.large" {
		t.Fatalf("arm64 AMI: %+v %+v (%v)", out.Instances, out.Errors, err)
	}
}

// A lost response is served before it is lost: the fleet launched though the caller heard a
// 500, and the SDK's retry (same ClientToken) hears the fleet that launched, not a second one.
func TestALostCreateFleetResponseLaunchedAndItsRetryHearsTheSameFleet(t *testing.T) {
	e := newEnv(t, Options{})
	sn := e.subnets(t)
	e.template(t, "tenon-lt", "x86_64", nil)
	in := fleet("tenon-lt", ec2types.DefaultTargetCapacityTypeOnDemand, 1, ovr("m5.large", sn["us-east-1a"]))

	// Every attempt lost: the SDK gives up with the 500, and the instance runs all the same.
	e.s.InjectFault(Fault{Service: ServiceEC2, Action: "CreateFleet", Kind: FaultLostResponse})
	_, err := e.ec2.CreateFleet(ctx, in)
	wantCode(t, err, "InternalError")
	if hits := e.s.FaultHits(); hits[0] < 2 {
		t.Fatalf("the SDK did not retry the lost answer: %d attempts", hits[0])
	}
	first := e.s.Instances()
	if len(first) != 1 {
		t.Fatalf("after every answer was lost: %d instances, want the 1 the first attempt launched", len(first))
	}
	e.s.ClearFaults()

	// One attempt lost: the retry succeeds and names the instance the lost attempt launched.
	in.ClientToken = nil
	e.s.InjectFault(Fault{Service: ServiceEC2, Action: "CreateFleet", Kind: FaultLostResponse, Count: 1})
	out, err := e.ec2.CreateFleet(ctx, in)
	if err != nil {
		t.Fatalf("the retry after one lost answer: %v", err)
	}
	insts := e.s.Instances()
	if len(insts) != 2 || len(out.Instances) != 1 || len(out.Instances[0].InstanceIds) != 1 || out.Instances[0].InstanceIds[0] == first[0].ID {
		t.Fatalf("after one lost answer: fleet %+v, endpoint instances %+v; want one new instance", out.Instances, insts)
	}
	if hits := e.s.FaultHits(); hits[0] != 1 {
		t.Fatalf("fault hits %v, want [1]", hits)
	}

	// Any service: an IAM create that was lost exists, and its retry says so.
	e.s.InjectFault(Fault{Service: ServiceIAM, Kind: FaultLostResponse, Count: 1})
	_, err = e.iam.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String("lost")})
	wantCode(t, err, "EntityAlreadyExists")
}

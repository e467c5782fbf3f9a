package instance

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
)

func TestOverrides(t *testing.T) {
	subnets := []awsv1.Subnet{{ID: "subnet-a1", Zone: "us-east-1a"}, {ID: "subnet-a2", Zone: "us-east-1a"}, {ID: "subnet-b", Zone: "us-east-1b"}}
	cases := []struct {
		name  string
		cands []Candidate
		skip  func(string) bool
		want  []Override
	}{
		{
			name:  "cheapest first, first subnet of each zone",
			cands: []Candidate{{"m5.xlarge", "us-east-1b", 0.19, ""}, {"m5.large", "us-east-1a", 0.096, ""}, {"m5.large", "us-east-1b", 0.096, ""}},
			want: []Override{
				{InstanceType: "m5.large", SubnetID: "subnet-a1", Zone: "us-east-1a", ImageID: "ami-1", Price: 0.096},
				{InstanceType: "m5.large", SubnetID: "subnet-b", Zone: "us-east-1b", ImageID: "ami-1", Price: 0.096},
				{InstanceType: "m5.xlarge", SubnetID: "subnet-b", Zone: "us-east-1b", ImageID: "ami-1", Price: 0.19},
			},
		},
		{
			name:  "zones without a subnet are dropped",
			cands: []Candidate{{"m5.large", "us-east-1c", 0.05, ""}, {"m5.large", "us-east-1a", 0.096, ""}},
			want:  []Override{{InstanceType: "m5.large", SubnetID: "subnet-a1", Zone: "us-east-1a", ImageID: "ami-1", Price: 0.096}},
		},
		{
			name:  "a full subnet is skipped for the next in its zone",
			cands: []Candidate{{"m5.large", "us-east-1a", 0.096, ""}},
			skip:  func(id string) bool { return id == "subnet-a1" },
			want:  []Override{{InstanceType: "m5.large", SubnetID: "subnet-a2", Zone: "us-east-1a", ImageID: "ami-1", Price: 0.096}},
		},
		{
			name:  "duplicates collapse, reservations stay apart",
			cands: []Candidate{{"m5.large", "us-east-1a", 0.096, ""}, {"m5.large", "us-east-1a", 0.096, ""}, {"m5.large", "us-east-1a", 0, "cr-1"}},
			want: []Override{
				{InstanceType: "m5.large", SubnetID: "subnet-a1", Zone: "us-east-1a", ImageID: "ami-1", Price: 0, ReservationID: "cr-1"},
				{InstanceType: "m5.large", SubnetID: "subnet-a1", Zone: "us-east-1a", ImageID: "ami-1", Price: 0.096},
			},
		},
		{name: "nothing in, nothing out", want: []Override{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Overrides(tc.cands, subnets, "ami-1", tc.skip)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestOverridesKeepTheCheapestSixty(t *testing.T) {
	var cands []Candidate
	for i := range 100 {
		cands = append(cands, Candidate{InstanceType: fmt.Sprintf("t%03d", i), Zone: "us-east-1a", Price: float64(100 - i)})
	}
	got := Overrides(cands, []awsv1.Subnet{{ID: "subnet-a", Zone: "us-east-1a"}}, "", nil)
	if len(got) != MaxOverrides || got[0].Price != 1 || got[len(got)-1].Price != 60 {
		t.Fatalf("got %d overrides from %v to %v", len(got), got[0].Price, got[len(got)-1].Price)
	}
}

func TestFleetInput(t *testing.T) {
	configs := []LaunchConfig{{TemplateName: "lt", Overrides: []Override{{InstanceType: "m5.large", SubnetID: "subnet-a", Zone: "us-east-1a", ImageID: "ami-1"}}}}
	cases := []struct {
		name            string
		capacityType    string
		reservationType awsv1.CapacityReservationType
		target          ec2types.DefaultTargetCapacityType
		onDemand        ec2types.FleetOnDemandAllocationStrategy
		spot            ec2types.SpotAllocationStrategy
	}{
		{"on-demand takes the lowest price", apisv1.CapacityTypeOnDemand, "", ec2types.DefaultTargetCapacityTypeOnDemand, ec2types.FleetOnDemandAllocationStrategyLowestPrice, ""},
		{"spot takes price-capacity-optimized", apisv1.CapacityTypeSpot, "", ec2types.DefaultTargetCapacityTypeSpot, "", ec2types.SpotAllocationStrategyPriceCapacityOptimized},
		{"a reservation launches on demand", apisv1.CapacityTypeReserved, awsv1.CapacityReservationTypeDefault, ec2types.DefaultTargetCapacityTypeOnDemand, ec2types.FleetOnDemandAllocationStrategyLowestPrice, ""},
		{"a capacity block launches as capacity-block", apisv1.CapacityTypeReserved, awsv1.CapacityReservationTypeCapacityBlock, ec2types.DefaultTargetCapacityTypeCapacityBlock, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := FleetInput(LaunchRequest{CapacityType: tc.capacityType, ReservationType: tc.reservationType, Configs: configs, Tags: map[string]string{"b": "2", "a": "1"}})
			if in.Type != ec2types.FleetTypeInstant || aws.ToInt32(in.TargetCapacitySpecification.TotalTargetCapacity) != 1 {
				t.Fatalf("type %s, total %d", in.Type, aws.ToInt32(in.TargetCapacitySpecification.TotalTargetCapacity))
			}
			if got := in.TargetCapacitySpecification.DefaultTargetCapacityType; got != tc.target {
				t.Errorf("target capacity type %q, want %q", got, tc.target)
			}
			var od ec2types.FleetOnDemandAllocationStrategy
			if in.OnDemandOptions != nil {
				od = in.OnDemandOptions.AllocationStrategy
			}
			var spot ec2types.SpotAllocationStrategy
			if in.SpotOptions != nil {
				spot = in.SpotOptions.AllocationStrategy
			}
			if od != tc.onDemand || spot != tc.spot {
				t.Errorf("strategies %q/%q, want %q/%q", od, spot, tc.onDemand, tc.spot)
			}
			if in.ClientToken != nil {
				t.Errorf("a fresh input carries no client token, got %q", *in.ClientToken)
			}
			var kinds []ec2types.ResourceType
			for _, ts := range in.TagSpecifications {
				kinds = append(kinds, ts.ResourceType)
				if len(ts.Tags) != 2 || aws.ToString(ts.Tags[0].Key) != "a" {
					t.Errorf("tags of %s: %+v", ts.ResourceType, ts.Tags)
				}
			}
			if want := []ec2types.ResourceType{ec2types.ResourceTypeInstance, ec2types.ResourceTypeVolume, ec2types.ResourceTypeFleet}; !reflect.DeepEqual(kinds, want) {
				t.Errorf("tagged %v, want %v", kinds, want)
			}
			ov := in.LaunchTemplateConfigs[0].Overrides[0]
			if ov.InstanceType != "m5.large" || aws.ToString(ov.SubnetId) != "subnet-a" || aws.ToString(ov.AvailabilityZone) != "us-east-1a" || aws.ToString(ov.ImageId) != "ami-1" {
				t.Errorf("override %+v", ov)
			}
		})
	}
}

func fleetError(code, it, zone, subnet string) ec2types.CreateFleetError {
	return ec2types.CreateFleetError{
		ErrorCode: aws.String(code), ErrorMessage: aws.String(code + " message"),
		LaunchTemplateAndOverrides: &ec2types.LaunchTemplateAndOverridesResponse{Overrides: &ec2types.FleetLaunchTemplateOverrides{
			InstanceType: ec2types.InstanceType(it), AvailabilityZone: aws.String(zone), SubnetId: aws.String(subnet),
		}},
	}
}

func TestClassifyFleetErrors(t *testing.T) {
	od := apisv1.CapacityTypeOnDemand
	off := func(it, zone, ct string) cloudprovider.Offering {
		return cloudprovider.Offering{InstanceType: it, Zone: zone, CapacityType: ct}
	}
	cases := []struct {
		name         string
		errs         []ec2types.CreateFleetError
		capacityType string
		offerings    []cloudprovider.Offering
		subnets      []string
		other        int
	}{
		{"insufficient capacity names the offering", []ec2types.CreateFleetError{fleetError("InsufficientInstanceCapacity", "m5.large", "us-east-1a", "subnet-a")}, od, []cloudprovider.Offering{off("m5.large", "us-east-1a", od)}, nil, 0},
		{"spot limits are capacity", []ec2types.CreateFleetError{fleetError("MaxSpotInstanceCountExceeded", "m5.large", "us-east-1b", "subnet-b")}, apisv1.CapacityTypeSpot, []cloudprovider.Offering{off("m5.large", "us-east-1b", "spot")}, nil, 0},
		{"unfulfillable and unsupported are capacity", []ec2types.CreateFleetError{fleetError("UnfulfillableCapacity", "c5.large", "us-east-1a", "s"), fleetError("Unsupported", "c5.xlarge", "us-east-1a", "s")}, od, []cloudprovider.Offering{off("c5.large", "us-east-1a", od), off("c5.xlarge", "us-east-1a", od)}, nil, 0},
		{"a full reservation is capacity of the reserved offering", []ec2types.CreateFleetError{fleetError("ReservationCapacityExceeded", "p5.48xlarge", "us-east-1a", "s")}, apisv1.CapacityTypeReserved, []cloudprovider.Offering{off("p5.48xlarge", "us-east-1a", "reserved")}, nil, 0},
		{"a full subnet is capacity and names the subnet", []ec2types.CreateFleetError{fleetError("InsufficientFreeAddressesInSubnet", "m5.large", "us-east-1a", "subnet-a")}, od, []cloudprovider.Offering{off("m5.large", "us-east-1a", od)}, []string{"subnet-a"}, 0},
		{"vcpu limits are capacity", []ec2types.CreateFleetError{fleetError("VcpuLimitExceeded", "m5.large", "us-east-1a", "s")}, od, []cloudprovider.Offering{off("m5.large", "us-east-1a", od)}, nil, 0},
		{"each offering once", []ec2types.CreateFleetError{fleetError("InsufficientInstanceCapacity", "m5.large", "us-east-1a", "s"), fleetError("InsufficientInstanceCapacity", "m5.large", "us-east-1a", "s")}, od, []cloudprovider.Offering{off("m5.large", "us-east-1a", od)}, nil, 0},
		{"a bad request is not capacity", []ec2types.CreateFleetError{fleetError("InvalidParameterValue", "m5.large", "us-east-1a", "s"), fleetError("InvalidAMIID.NotFound", "m5.large", "us-east-1b", "s")}, od, nil, nil, 2},
		{"throttling inside a fleet response is not capacity", []ec2types.CreateFleetError{fleetError("RequestLimitExceeded", "m5.large", "us-east-1a", "s"), fleetError("InternalError", "m5.large", "us-east-1b", "s")}, od, nil, nil, 2},
		{"a capacity code without an offering is not marked", []ec2types.CreateFleetError{{ErrorCode: aws.String("InsufficientInstanceCapacity")}}, od, nil, nil, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ClassifyFleetErrors(tc.errs, tc.capacityType)
			if !reflect.DeepEqual(got.Offerings, tc.offerings) || !reflect.DeepEqual(got.Subnets, tc.subnets) || len(got.Other) != tc.other {
				t.Fatalf("got %+v, want offerings %v subnets %v and %d other", got, tc.offerings, tc.subnets, tc.other)
			}
		})
	}
}

// A prioritized request (NodeOverlay prices) asks for the prioritized strategies and gives each
// override its price as its priority.
func TestFleetInputPrioritized(t *testing.T) {
	configs := []LaunchConfig{{TemplateName: "lt", Overrides: []Override{
		{InstanceType: "m5.large", SubnetID: "subnet-a", Zone: "us-east-1a", Price: 0.096},
		{InstanceType: "c5.large", SubnetID: "subnet-a", Zone: "us-east-1a", Price: 1.085},
	}}}
	od := FleetInput(LaunchRequest{CapacityType: apisv1.CapacityTypeOnDemand, Configs: configs, Prioritized: true})
	if od.OnDemandOptions.AllocationStrategy != ec2types.FleetOnDemandAllocationStrategyPrioritized {
		t.Errorf("on-demand strategy %q, want prioritized", od.OnDemandOptions.AllocationStrategy)
	}
	spot := FleetInput(LaunchRequest{CapacityType: apisv1.CapacityTypeSpot, Configs: configs, Prioritized: true})
	if spot.SpotOptions.AllocationStrategy != ec2types.SpotAllocationStrategyCapacityOptimizedPrioritized {
		t.Errorf("spot strategy %q, want capacity-optimized-prioritized", spot.SpotOptions.AllocationStrategy)
	}
	for i, want := range []float64{0.096, 1.085} {
		if got := od.LaunchTemplateConfigs[0].Overrides[i].Priority; got == nil || *got != want {
			t.Errorf("override %d priority %v, want %g", i, got, want)
		}
	}
	if plain := FleetInput(LaunchRequest{CapacityType: apisv1.CapacityTypeOnDemand, Configs: configs}); plain.LaunchTemplateConfigs[0].Overrides[0].Priority != nil {
		t.Error("a request that is not prioritized carries priorities")
	}
}

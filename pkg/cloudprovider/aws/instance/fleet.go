package instance

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
)

// MaxOverrides caps the overrides of one CreateFleet request: the cheapest are kept. EC2
// refuses requests with very many overrides, and past a few dozen the expensive tail is never
// reached.
const MaxOverrides = 60

// Candidate is one offering a launch may use: an instance type in a zone, at a price, through
// a capacity reservation when reserved.
type Candidate struct {
	InstanceType  string
	Zone          string
	Price         float64
	ReservationID string
}

// Override is one instance type × subnet pair of a launch template config.
type Override struct {
	InstanceType  string
	SubnetID      string
	Zone          string
	ImageID       string
	Price         float64
	ReservationID string
}

// Overrides crosses candidates with subnets: each candidate gets the first subnet of its zone
// (in the NodeClass status's order) that skipSubnet does not rule out; candidates in zones
// without a usable subnet are dropped. The result is cheapest first (ties by instance type,
// then zone, so it is deterministic), without duplicates, and at most MaxOverrides long.
func Overrides(cands []Candidate, subnets []awsv1.Subnet, imageID string, skipSubnet func(id string) bool) []Override {
	bestSubnet := func(zone string) (string, bool) {
		for _, sn := range subnets {
			if sn.Zone == zone && (skipSubnet == nil || !skipSubnet(sn.ID)) {
				return sn.ID, true
			}
		}
		return "", false
	}
	out := make([]Override, 0, len(cands))
	for _, c := range cands {
		id, ok := bestSubnet(c.Zone)
		if !ok {
			continue
		}
		out = append(out, Override{InstanceType: c.InstanceType, SubnetID: id, Zone: c.Zone, ImageID: imageID, Price: c.Price, ReservationID: c.ReservationID})
	}
	slices.SortFunc(out, func(a, b Override) int {
		return cmp.Or(cmp.Compare(a.Price, b.Price), strings.Compare(a.InstanceType, b.InstanceType), strings.Compare(a.Zone, b.Zone), strings.Compare(a.ReservationID, b.ReservationID))
	})
	out = slices.CompactFunc(out, func(a, b Override) bool {
		return a.InstanceType == b.InstanceType && a.Zone == b.Zone && a.ReservationID == b.ReservationID
	})
	if len(out) > MaxOverrides {
		out = out[:MaxOverrides]
	}
	return out
}

// LaunchConfig is one launch template and the overrides to try through it.
type LaunchConfig struct {
	TemplateName string
	Overrides    []Override
}

// LaunchRequest is one CreateFleet call for one instance.
type LaunchRequest struct {
	// CapacityType is on-demand, spot or reserved.
	CapacityType string
	// ReservationType, for reserved launches, is default or capacity-block.
	ReservationType awsv1.CapacityReservationType
	Configs         []LaunchConfig
	// Tags go on the instance, its volumes and the fleet.
	Tags map[string]string
	// Context is the NodeClass's spec.context, passed through.
	Context string
	// Prioritized launches the overrides in their order (their Price is the price NodeOverlays
	// set): on-demand with the prioritized allocation strategy, spot with
	// capacity-optimized-prioritized, each override's priority its price (lower goes first).
	// Karpenter's AWS provider does the same when NodeOverlay prices apply.
	Prioritized bool
}

// Allocation strategies, by capacity type.
const (
	OnDemandAllocationStrategy = ec2types.FleetOnDemandAllocationStrategyLowestPrice
	SpotAllocationStrategy     = ec2types.SpotAllocationStrategyPriceCapacityOptimized
)

// FleetInput builds a fresh CreateFleetInput for the request (never reuse one: the SDK writes
// its generated client token into it). On-demand and reserved launches take the lowest price;
// spot takes price-capacity-optimized; a capacity block is launched with target capacity type
// capacity-block (its launch template sets market type capacity-block and the reservation).
func FleetInput(req LaunchRequest) *ec2.CreateFleetInput {
	in := &ec2.CreateFleetInput{
		Type: ec2types.FleetTypeInstant,
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{
			TotalTargetCapacity: aws.Int32(1),
		},
		TagSpecifications: TagSpecifications(req.Tags, ec2types.ResourceTypeInstance, ec2types.ResourceTypeVolume, ec2types.ResourceTypeFleet),
	}
	if req.Context != "" {
		in.Context = aws.String(req.Context)
	}
	ts := in.TargetCapacitySpecification
	switch {
	case req.CapacityType == apisv1.CapacityTypeSpot:
		ts.DefaultTargetCapacityType = ec2types.DefaultTargetCapacityTypeSpot
		in.SpotOptions = &ec2types.SpotOptionsRequest{AllocationStrategy: SpotAllocationStrategy}
		if req.Prioritized {
			in.SpotOptions.AllocationStrategy = ec2types.SpotAllocationStrategyCapacityOptimizedPrioritized
		}
	case req.CapacityType == apisv1.CapacityTypeReserved && req.ReservationType == awsv1.CapacityReservationTypeCapacityBlock:
		ts.DefaultTargetCapacityType = ec2types.DefaultTargetCapacityTypeCapacityBlock
	default:
		ts.DefaultTargetCapacityType = ec2types.DefaultTargetCapacityTypeOnDemand
		in.OnDemandOptions = &ec2types.OnDemandOptionsRequest{AllocationStrategy: OnDemandAllocationStrategy}
		if req.Prioritized {
			in.OnDemandOptions.AllocationStrategy = ec2types.FleetOnDemandAllocationStrategyPrioritized
		}
	}
	for _, c := range req.Configs {
		cfg := ec2types.FleetLaunchTemplateConfigRequest{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{
				LaunchTemplateName: aws.String(c.TemplateName), Version: aws.String("$Latest"),
			},
		}
		for _, o := range c.Overrides {
			ov := ec2types.FleetLaunchTemplateOverridesRequest{
				InstanceType: ec2types.InstanceType(o.InstanceType), SubnetId: aws.String(o.SubnetID),
				// The zone is redundant with the subnet, but it comes back in the fleet's
				// errors, which name offerings by zone.
				AvailabilityZone: aws.String(o.Zone),
			}
			if o.ImageID != "" {
				ov.ImageId = aws.String(o.ImageID)
			}
			if req.Prioritized {
				ov.Priority = aws.Float64(o.Price) // lower goes first: the cheapest by the overlaid prices
			}
			cfg.Overrides = append(cfg.Overrides, ov)
		}
		in.LaunchTemplateConfigs = append(in.LaunchTemplateConfigs, cfg)
	}
	return in
}

// TagSpecifications tags the given resource types with tags, keys sorted.
func TagSpecifications(tags map[string]string, types ...ec2types.ResourceType) []ec2types.TagSpecification {
	ec2Tags := EC2Tags(tags)
	out := make([]ec2types.TagSpecification, 0, len(types))
	for _, t := range types {
		out = append(out, ec2types.TagSpecification{ResourceType: t, Tags: ec2Tags})
	}
	return out
}

// EC2Tags turns a map into EC2 tags, keys sorted.
func EC2Tags(tags map[string]string) []ec2types.Tag {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]ec2types.Tag, 0, len(keys))
	for _, k := range keys {
		out = append(out, ec2types.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	return out
}

// capacityErrorCodes are the CreateFleet error codes that mean the offering has no capacity
// for now: the launch should go elsewhere and the offering be avoided for a while. (Throttling
// and server errors are never fleet errors: they fail the whole call, the SDK retries them,
// and they never mark an offering.)
var capacityErrorCodes = []string{
	"InsufficientInstanceCapacity",
	"MaxSpotInstanceCountExceeded",
	"VcpuLimitExceeded",
	"UnfulfillableCapacity",
	"Unsupported",
	"InsufficientFreeAddressesInSubnet",
	"MaxFleetCountExceeded",
	"ReservationCapacityExceeded",
	"InsufficientCapacityOnHost",
}

// IsCapacityErrorCode reports whether a CreateFleet error code means no capacity.
func IsCapacityErrorCode(code string) bool { return slices.Contains(capacityErrorCodes, code) }

// FleetErrors sorts a fleet's errors: the offerings that had no capacity (each once, in the
// order reported, with the capacity type launched), the subnets that ran out of addresses,
// and the other errors, which say the request itself was wrong.
type FleetErrors struct {
	Offerings []cloudprovider.Offering
	Subnets   []string
	Other     []error
}

// ClassifyFleetErrors reads a CreateFleet response's errors for a launch of capacityType.
func ClassifyFleetErrors(errs []ec2types.CreateFleetError, capacityType string) FleetErrors {
	var out FleetErrors
	for _, e := range errs {
		code, msg := aws.ToString(e.ErrorCode), aws.ToString(e.ErrorMessage)
		var it, zone, subnet string
		if lo := e.LaunchTemplateAndOverrides; lo != nil && lo.Overrides != nil {
			it, zone, subnet = string(lo.Overrides.InstanceType), aws.ToString(lo.Overrides.AvailabilityZone), aws.ToString(lo.Overrides.SubnetId)
		}
		if !IsCapacityErrorCode(code) || it == "" || zone == "" {
			out.Other = append(out.Other, fmt.Errorf("%s: %s", code, msg))
			continue
		}
		if code == "InsufficientFreeAddressesInSubnet" && subnet != "" && !slices.Contains(out.Subnets, subnet) {
			out.Subnets = append(out.Subnets, subnet)
		}
		o := cloudprovider.Offering{InstanceType: it, Zone: zone, CapacityType: capacityType}
		if !slices.Contains(out.Offerings, o) {
			out.Offerings = append(out.Offerings, o)
		}
	}
	return out
}

package instancetype

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
)

// typeData is what the region says about one instance type, independent of any NodeClass.
type typeData struct {
	name     string
	shape    catalog.Shape
	onDemand bool     // sold on demand (supported usage class)
	spot     bool     // sold as spot
	zones    []string // the zones it is offered in, sorted
}

// data is the region's instance types, sorted by name, from one fetch.
type data struct {
	types    []typeData
	gen      uint64
	embedded bool // the embedded catalog's, served while EC2 cannot be reached
}

// fetch describes the region's instance types and where they are offered: two paginated
// calls.
func (p *Provider) fetch(ctx context.Context) ([]typeData, error) {
	var infos []ec2types.InstanceTypeInfo
	types := ec2.NewDescribeInstanceTypesPaginator(p.ec2, &ec2.DescribeInstanceTypesInput{
		Filters: []ec2types.Filter{
			{Name: aws.String("supported-virtualization-type"), Values: []string{"hvm"}},
			{Name: aws.String("processor-info.supported-architecture"), Values: []string{"x86_64", "arm64"}},
		},
		MaxResults: aws.Int32(100),
	})
	for types.HasMorePages() {
		page, err := types.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("instancetype: DescribeInstanceTypes: %w", err)
		}
		infos = append(infos, page.InstanceTypes...)
	}
	zones := map[string][]string{}
	offerings := ec2.NewDescribeInstanceTypeOfferingsPaginator(p.ec2, &ec2.DescribeInstanceTypeOfferingsInput{
		LocationType: ec2types.LocationTypeAvailabilityZone,
		MaxResults:   aws.Int32(1000),
	})
	for offerings.HasMorePages() {
		page, err := offerings.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("instancetype: DescribeInstanceTypeOfferings: %w", err)
		}
		for _, o := range page.InstanceTypeOfferings {
			name, zone := string(o.InstanceType), aws.ToString(o.Location)
			if !slices.Contains(zones[name], zone) {
				zones[name] = append(zones[name], zone)
			}
		}
	}
	out := make([]typeData, 0, len(infos))
	for i := range infos {
		td, ok := fromInfo(&infos[i])
		if !ok {
			continue
		}
		td.zones = zones[td.name]
		slices.Sort(td.zones)
		out = append(out, td)
	}
	slices.SortFunc(out, func(a, b typeData) int { return strings.Compare(a.name, b.name) })
	out = slices.CompactFunc(out, func(a, b typeData) bool { return a.name == b.name })
	return out, nil
}

// familyScheme splits a type name into category and generation: c7gn.large is c, 7;
// u-6tb1.56xlarge is u, 1.
var familyScheme = regexp.MustCompile(`^([a-z]+)(\-[0-9]+tb)?([0-9]+).*\.`)

// fromInfo turns EC2's description of a type into its shape. ok is false for a type tenon
// cannot run (no x86_64 or arm64 architecture, no vCPUs or memory).
func fromInfo(x *ec2types.InstanceTypeInfo) (typeData, bool) {
	td := typeData{name: string(x.InstanceType)}
	s := &td.shape
	if x.ProcessorInfo != nil {
		for _, a := range x.ProcessorInfo.SupportedArchitectures {
			switch a {
			case ec2types.ArchitectureTypeX8664:
				s.Arch = "amd64"
			case ec2types.ArchitectureTypeArm64:
				s.Arch = "arm64"
			default:
				continue
			}
			break
		}
		s.CPUManufacturer = kebab(aws.ToString(x.ProcessorInfo.Manufacturer))
	}
	if x.VCpuInfo != nil {
		s.VCPU = int(aws.ToInt32(x.VCpuInfo.DefaultVCpus))
	}
	if x.MemoryInfo != nil {
		s.MemoryMiB = aws.ToInt64(x.MemoryInfo.SizeInMiB)
	}
	if s.Arch == "" || s.VCPU <= 0 || s.MemoryMiB <= 0 {
		return td, false
	}
	s.Family, s.Size, _ = strings.Cut(td.name, ".")
	if m := familyScheme.FindStringSubmatch(td.name); m != nil {
		s.Category = m[1]
		s.Generation, _ = strconv.Atoi(m[3])
	}
	s.Hypervisor = string(x.Hypervisor)
	s.BareMetal = aws.ToBool(x.BareMetal)
	for _, u := range x.SupportedUsageClasses {
		switch u {
		case ec2types.UsageClassTypeOnDemand:
			td.onDemand = true
		case ec2types.UsageClassTypeSpot:
			td.spot = true
		}
	}
	if ni := x.NetworkInfo; ni != nil {
		s.ENIs = int(aws.ToInt32(ni.MaximumNetworkInterfaces))
		s.IPv4PerENI = int(aws.ToInt32(ni.Ipv4AddressesPerInterface))
		s.CardENIs = s.ENIs
		gbps := 0.0
		for _, c := range ni.NetworkCards {
			gbps += aws.ToFloat64(c.BaselineBandwidthInGbps)
			if aws.ToInt32(c.NetworkCardIndex) == aws.ToInt32(ni.DefaultNetworkCardIndex) {
				s.CardENIs = int(aws.ToInt32(c.MaximumNetworkInterfaces))
			}
		}
		s.NetworkGbps = gbps
		s.NetworkBandwidthMbps = int64(math.Round(gbps * 1000))
		if ni.EfaInfo != nil {
			s.EFA = int(aws.ToInt32(ni.EfaInfo.MaximumEfaInterfaces))
		}
	}
	s.MaxPods = eniLimitedPods(s)
	if e := x.EbsInfo; e != nil && e.EbsOptimizedInfo != nil && e.EbsOptimizedSupport == ec2types.EbsOptimizedSupportDefault {
		s.EBSBandwidthMbps = int64(aws.ToInt32(e.EbsOptimizedInfo.MaximumBandwidthInMbps))
	}
	if st := x.InstanceStorageInfo; st != nil && st.NvmeSupport != ec2types.EphemeralNvmeSupportUnsupported {
		s.LocalNVMeGB = aws.ToInt64(st.TotalSizeInGB)
	}
	if g := x.GpuInfo; g != nil && len(g.Gpus) > 0 {
		d := g.Gpus[0]
		s.GPUName, s.GPUManufacturer = kebab(aws.ToString(d.Name)), kebab(aws.ToString(d.Manufacturer))
		s.GPUCount = int(aws.ToInt32(d.Count))
		if d.MemoryInfo != nil {
			s.GPUMemoryMiB = int64(aws.ToInt32(d.MemoryInfo.SizeInMiB))
		}
	}
	switch {
	case x.NeuronInfo != nil && len(x.NeuronInfo.NeuronDevices) > 0:
		d := x.NeuronInfo.NeuronDevices[0]
		s.AcceleratorName, s.AcceleratorManufacturer = kebab(aws.ToString(d.Name)), "aws"
		s.AcceleratorCount = int(aws.ToInt32(d.Count))
		if d.MemoryInfo != nil {
			s.AcceleratorMemoryMiB = int64(aws.ToInt32(d.MemoryInfo.SizeInMiB))
		}
		if d.CoreInfo != nil {
			s.NeuronCores = s.AcceleratorCount * int(aws.ToInt32(d.CoreInfo.Count))
		}
	case x.InferenceAcceleratorInfo != nil && len(x.InferenceAcceleratorInfo.Accelerators) > 0:
		d := x.InferenceAcceleratorInfo.Accelerators[0]
		s.AcceleratorName, s.AcceleratorManufacturer = kebab(aws.ToString(d.Name)), kebab(aws.ToString(d.Manufacturer))
		s.AcceleratorCount = int(aws.ToInt32(d.Count))
		if d.MemoryInfo != nil {
			s.AcceleratorMemoryMiB = int64(aws.ToInt32(d.MemoryInfo.SizeInMiB))
		}
	}
	return td, true
}

// eniLimitedPods is the VPC CNI's pod limit: the default card's ENIs × (IPv4 per ENI − 1) + 2,
// and none without interfaces.
func eniLimitedPods(s *catalog.Shape) int {
	if s.CardENIs <= 0 || s.IPv4PerENI <= 0 {
		return 0
	}
	return s.CardENIs*(s.IPv4PerENI-1) + 2
}

func kebab(s string) string { return strings.ToLower(strings.ReplaceAll(s, " ", "-")) }

// embeddedData is the embedded catalog's description of the region, as the API would give it.
func embeddedData(region string) ([]typeData, error) {
	c, err := catalog.Load(region)
	if err != nil {
		return nil, err
	}
	out := make([]typeData, 0, len(c.Types))
	for _, it := range c.Types {
		td := typeData{name: it.Name, shape: it.Shape}
		for _, o := range it.Offerings {
			switch o.CapacityType {
			case apisv1.CapacityTypeOnDemand:
				td.onDemand = true
			case apisv1.CapacityTypeSpot:
				td.spot = true
			default:
				continue
			}
			if !slices.Contains(td.zones, o.Zone) {
				td.zones = append(td.zones, o.Zone)
			}
		}
		slices.Sort(td.zones)
		out = append(out, td)
	}
	return out, nil
}

package awsapi

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
)

func TestDescribeInstanceTypesServesTheCatalogThroughThePaginator(t *testing.T) {
	e := newEnv(t, Options{})
	p := ec2.NewDescribeInstanceTypesPaginator(e.ec2, &ec2.DescribeInstanceTypesInput{
		Filters: []ec2types.Filter{
			{Name: aws.String("supported-virtualization-type"), Values: []string{"hvm"}},
			{Name: aws.String("processor-info.supported-architecture"), Values: []string{"x86_64", "arm64"}},
		},
	})
	got := map[string]ec2types.InstanceTypeInfo{}
	pages := 0
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, it := range out.InstanceTypes {
			got[string(it.InstanceType)] = it
		}
	}
	cat := e.s.opts.Catalog
	if len(got) != len(cat.Types) || pages < 2 {
		t.Fatalf("%d types in %d pages, want the catalog's %d in several pages", len(got), pages, len(cat.Types))
	}
	m5 := got["m5.large"]
	switch {
	case aws.ToInt32(m5.VCpuInfo.DefaultVCpus) != 2, aws.ToInt64(m5.MemoryInfo.SizeInMiB) != 8192:
		t.Errorf("m5.large: %d vCPUs, %d MiB", aws.ToInt32(m5.VCpuInfo.DefaultVCpus), aws.ToInt64(m5.MemoryInfo.SizeInMiB))
	case m5.ProcessorInfo.SupportedArchitectures[0] != ec2types.ArchitectureTypeX8664, m5.Hypervisor != ec2types.InstanceTypeHypervisorNitro:
		t.Errorf("m5.large: %v %v", m5.ProcessorInfo.SupportedArchitectures, m5.Hypervisor)
	case aws.ToInt32(m5.NetworkInfo.MaximumNetworkInterfaces) != 3, aws.ToInt32(m5.NetworkInfo.Ipv4AddressesPerInterface) != 10:
		t.Errorf("m5.large ENIs: %d × %d", aws.ToInt32(m5.NetworkInfo.MaximumNetworkInterfaces), aws.ToInt32(m5.NetworkInfo.Ipv4AddressesPerInterface))
	case len(m5.SupportedUsageClasses) != 2:
		t.Errorf("m5.large usage classes %v, want on-demand and spot", m5.SupportedUsageClasses)
	}
	g5 := got["g5.xlarge"]
	if g5.GpuInfo == nil || len(g5.GpuInfo.Gpus) != 1 {
		t.Fatalf("g5.xlarge has no GPU info: %+v", g5.GpuInfo)
	}
	gpu := g5.GpuInfo.Gpus[0]
	g5c, _ := cat.Get("g5.xlarge")
	if aws.ToString(gpu.Name) != "a10g" || aws.ToString(gpu.Manufacturer) != "NVIDIA" || aws.ToInt32(gpu.Count) != 1 || int64(aws.ToInt32(gpu.MemoryInfo.SizeInMiB)) != g5c.Shape.GPUMemoryMiB {
		t.Errorf("g5.xlarge GPU: %s %s ×%d %d MiB", aws.ToString(gpu.Name), aws.ToString(gpu.Manufacturer), aws.ToInt32(gpu.Count), aws.ToInt32(gpu.MemoryInfo.SizeInMiB))
	}
	inf := got["inf2.xlarge"]
	if inf.NeuronInfo == nil || aws.ToInt32(inf.NeuronInfo.NeuronDevices[0].Count) != 1 || aws.ToInt32(inf.NeuronInfo.NeuronDevices[0].CoreInfo.Count) != 2 {
		t.Errorf("inf2.xlarge neuron info: %+v", inf.NeuronInfo)
	}
	if arm := got["m6g.large"]; arm.ProcessorInfo.SupportedArchitectures[0] != ec2types.ArchitectureTypeArm64 || aws.ToString(arm.ProcessorInfo.Manufacturer) != "AWS" {
		t.Errorf("m6g.large: %v %s", arm.ProcessorInfo.SupportedArchitectures, aws.ToString(arm.ProcessorInfo.Manufacturer))
	}

	_, err := e.ec2.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{InstanceTypes: []ec2types.InstanceType{"m5.nope"}})
	wantCode(t, err, "InvalidInstanceType")
	_, err = e.ec2.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{Filters: []ec2types.Filter{{Name: aws.String("no-such-filter"), Values: []string{"x"}}}})
	wantCode(t, err, "InvalidParameterValue")
}

func TestDescribeInstanceTypeOfferingsListsEachTypeInTheZonesItIsSold(t *testing.T) {
	e := newEnv(t, Options{})
	p := ec2.NewDescribeInstanceTypeOfferingsPaginator(e.ec2, &ec2.DescribeInstanceTypeOfferingsInput{LocationType: ec2types.LocationTypeAvailabilityZone})
	zones := map[string][]string{}
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range out.InstanceTypeOfferings {
			if o.LocationType != ec2types.LocationTypeAvailabilityZone {
				t.Fatalf("location type %s", o.LocationType)
			}
			zones[string(o.InstanceType)] = append(zones[string(o.InstanceType)], aws.ToString(o.Location))
		}
	}
	if got := len(zones["m5.large"]); got != len(e.s.opts.Catalog.Zones) {
		t.Errorf("m5.large offered in %v", zones["m5.large"])
	}
	out, err := e.ec2.DescribeInstanceTypeOfferings(ctx, &ec2.DescribeInstanceTypeOfferingsInput{
		LocationType: ec2types.LocationTypeAvailabilityZoneId,
		Filters:      []ec2types.Filter{{Name: aws.String("instance-type"), Values: []string{"m5.*"}}, {Name: aws.String("location"), Values: []string{"use1-az1"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out.InstanceTypeOfferings {
		if aws.ToString(o.Location) != "use1-az1" || string(o.InstanceType)[:3] != "m5." {
			t.Fatalf("filtered offering %s in %s", o.InstanceType, aws.ToString(o.Location))
		}
	}
	if len(out.InstanceTypeOfferings) < 5 {
		t.Errorf("only %d m5 offerings in use1-az1", len(out.InstanceTypeOfferings))
	}
}

func TestTheNetworkIsDiscoverableByTagAndID(t *testing.T) {
	e := newEnv(t, Options{ClusterName: "demo"})
	azs, err := e.ec2.DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(azs.AvailabilityZones) != 6 || aws.ToString(azs.AvailabilityZones[0].ZoneId) != "use1-az1" || aws.ToString(azs.AvailabilityZones[0].ZoneName) != "us-east-1a" {
		t.Fatalf("zones: %d, first %s/%s", len(azs.AvailabilityZones), aws.ToString(azs.AvailabilityZones[0].ZoneName), aws.ToString(azs.AvailabilityZones[0].ZoneId))
	}
	discovery := ec2types.Filter{Name: aws.String("tag:" + DiscoveryTag), Values: []string{"demo"}}
	subnets, err := e.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{discovery}})
	if err != nil {
		t.Fatal(err)
	}
	if len(subnets.Subnets) != 6 {
		t.Fatalf("%d discovered subnets, want one per zone", len(subnets.Subnets))
	}
	sn := subnets.Subnets[1]
	if aws.ToString(sn.AvailabilityZone) != "us-east-1b" || aws.ToString(sn.AvailabilityZoneId) != "use1-az2" || aws.ToInt32(sn.AvailableIpAddressCount) != 8187 || aws.ToString(sn.VpcId) == "" {
		t.Errorf("subnet %s: %s %s %d free", aws.ToString(sn.SubnetId), aws.ToString(sn.AvailabilityZone), aws.ToString(sn.AvailabilityZoneId), aws.ToInt32(sn.AvailableIpAddressCount))
	}
	none, err := e.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{{Name: aws.String("tag:" + DiscoveryTag), Values: []string{"other"}}}})
	if err != nil || len(none.Subnets) != 0 {
		t.Fatalf("another cluster's tag found %d subnets (%v)", len(none.Subnets), err)
	}
	byID, err := e.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{aws.ToString(sn.SubnetId)}})
	if err != nil || len(byID.Subnets) != 1 {
		t.Fatalf("by ID: %d subnets (%v)", len(byID.Subnets), err)
	}
	_, err = e.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{"subnet-0000000000000000f"}})
	wantCode(t, err, "InvalidSubnetID.NotFound")

	sgs, err := e.ec2.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{discovery}})
	if err != nil || len(sgs.SecurityGroups) != 2 {
		t.Fatalf("%d discovered security groups (%v)", len(sgs.SecurityGroups), err)
	}
	owned, err := e.ec2.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{{Name: aws.String("tag-key"), Values: []string{"kubernetes.io/cluster/demo"}}}})
	if err != nil || len(owned.SecurityGroups) != 1 || aws.ToString(owned.SecurityGroups[0].GroupName) != "eks-cluster-sg-demo" {
		t.Fatalf("cluster security group: %+v (%v)", owned.SecurityGroups, err)
	}
	id := aws.ToString(owned.SecurityGroups[0].GroupId)
	byGroup, err := e.ec2.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{{Name: aws.String("group-id"), Values: []string{id}}}})
	if err != nil || len(byGroup.SecurityGroups) != 1 {
		t.Fatalf("by group-id: %d (%v)", len(byGroup.SecurityGroups), err)
	}
	_, err = e.ec2.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{"sg-0000000000000000f"}})
	wantCode(t, err, "InvalidGroup.NotFound")
}

func TestSpotPricesAndCapacityReservationsComeFromTheCatalog(t *testing.T) {
	cat, err := catalog.Load("us-east-1", catalog.WithReservations(catalog.Reservation{ID: "cr-0123456789abcdef0", InstanceType: "m5.large", Zone: "us-east-1a", Count: 2}))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, Options{Catalog: cat, ReservationTags: map[string]map[string]string{"cr-0123456789abcdef0": {"team": "ml"}}})
	prices, err := e.ec2.DescribeSpotPriceHistory(ctx, &ec2.DescribeSpotPriceHistoryInput{
		InstanceTypes: []ec2types.InstanceType{"m5.large"}, ProductDescriptions: []string{"Linux/UNIX", "Linux/UNIX (Amazon VPC)"}, StartTime: aws.Time(epoch),
	})
	if err != nil {
		t.Fatal(err)
	}
	it, _ := cat.Get("m5.large")
	want := map[string]float64{}
	for _, o := range it.Offerings {
		if o.CapacityType == apisv1.CapacityTypeSpot {
			want[o.Zone] = o.Price
		}
	}
	if len(prices.SpotPriceHistory) != len(want) || len(want) == 0 {
		t.Fatalf("%d spot prices, want %d", len(prices.SpotPriceHistory), len(want))
	}
	for _, p := range prices.SpotPriceHistory {
		if z := aws.ToString(p.AvailabilityZone); aws.ToString(p.SpotPrice) != fmtPrice(want[z]) || p.Timestamp == nil {
			t.Errorf("spot price in %s: %s, want %s", z, aws.ToString(p.SpotPrice), fmtPrice(want[z]))
		}
	}

	crs, err := e.ec2.DescribeCapacityReservations(ctx, &ec2.DescribeCapacityReservationsInput{Filters: []ec2types.Filter{{Name: aws.String("tag:team"), Values: []string{"ml"}}}})
	if err != nil || len(crs.CapacityReservations) != 1 {
		t.Fatalf("%d reservations by tag (%v)", len(crs.CapacityReservations), err)
	}
	cr := crs.CapacityReservations[0]
	if aws.ToString(cr.InstanceType) != "m5.large" || aws.ToString(cr.AvailabilityZone) != "us-east-1a" || aws.ToInt32(cr.AvailableInstanceCount) != 2 || aws.ToInt32(cr.TotalInstanceCount) != 2 || cr.State != ec2types.CapacityReservationStateActive {
		t.Errorf("reservation: %s %s %d/%d %s", aws.ToString(cr.InstanceType), aws.ToString(cr.AvailabilityZone), aws.ToInt32(cr.AvailableInstanceCount), aws.ToInt32(cr.TotalInstanceCount), cr.State)
	}
}

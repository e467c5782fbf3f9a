package awsapi

import (
	"math"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
)

// The VPC CNI gives pods addresses from the default network card only; a provider applying its
// formula to what the endpoint describes must get the catalog's max pods for every type, and
// the cards' bandwidths must add up to the type's.
func TestDescribedNetworkCardsGiveTheCatalogsMaxPods(t *testing.T) {
	e := newEnv(t, Options{})
	p := ec2.NewDescribeInstanceTypesPaginator(e.ec2, &ec2.DescribeInstanceTypesInput{MaxResults: aws.Int32(100)})
	seen := 0
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range out.InstanceTypes {
			seen++
			it, _ := e.s.opts.Catalog.Get(string(x.InstanceType))
			ni := x.NetworkInfo
			card := ni.NetworkCards[aws.ToInt32(ni.DefaultNetworkCardIndex)]
			pods := int(aws.ToInt32(card.MaximumNetworkInterfaces))*(int(aws.ToInt32(ni.Ipv4AddressesPerInterface))-1) + 2
			if pods != it.Shape.MaxPods {
				t.Errorf("%s: card 0 gives %d pods, catalog %d", it.Name, pods, it.Shape.MaxPods)
			}
			total, gbps := 0, 0.0
			for _, c := range ni.NetworkCards {
				total += int(aws.ToInt32(c.MaximumNetworkInterfaces))
				gbps += aws.ToFloat64(c.BaselineBandwidthInGbps)
			}
			if total != int(aws.ToInt32(ni.MaximumNetworkInterfaces)) || len(ni.NetworkCards) != int(aws.ToInt32(ni.MaximumNetworkCards)) {
				t.Errorf("%s: cards hold %d ENIs of %d; %d cards of %d", it.Name, total, aws.ToInt32(ni.MaximumNetworkInterfaces), len(ni.NetworkCards), aws.ToInt32(ni.MaximumNetworkCards))
			}
			if it.Shape.ENIs > 0 && total != it.Shape.ENIs {
				t.Errorf("%s: %d ENIs, catalog %d", it.Name, total, it.Shape.ENIs)
			}
			if math.Abs(gbps-it.Shape.NetworkGbps) > 1e-9 {
				t.Errorf("%s: cards' bandwidth %g Gbps, catalog %g", it.Name, gbps, it.Shape.NetworkGbps)
			}
		}
	}
	if seen != len(e.s.opts.Catalog.Types) {
		t.Fatalf("described %d types of %d", seen, len(e.s.opts.Catalog.Types))
	}
}

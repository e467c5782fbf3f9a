package awsapi

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	pricingtypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"
)

func TestSetSpotPriceAndSetPriceDocumentChangeWhatIsServed(t *testing.T) {
	e := newEnv(t, Options{})
	spot := func() string {
		out, err := e.ec2.DescribeSpotPriceHistory(ctx, &ec2.DescribeSpotPriceHistoryInput{InstanceTypes: []ec2types.InstanceType{"m5.large"}, AvailabilityZone: aws.String("us-east-1a")})
		if err != nil || len(out.SpotPriceHistory) != 1 {
			t.Fatalf("spot history: %v, %d records", err, len(out.SpotPriceHistory))
		}
		return aws.ToString(out.SpotPriceHistory[0].SpotPrice)
	}
	before := spot()
	e.s.SetSpotPrice("m5.large", "us-east-1a", 0.5)
	if got := spot(); got != "0.500000" {
		t.Fatalf("after SetSpotPrice: %s", got)
	}
	e.s.SetSpotPrice("m5.large", "us-east-1a", 0)
	if got := spot(); got != before {
		t.Fatalf("after restoring: %s, want %s", got, before)
	}
	doc := func() string {
		out, err := e.pricing.GetProducts(ctx, &pricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"), Filters: []pricingtypes.Filter{
			{Field: aws.String("instanceType"), Type: pricingtypes.FilterTypeTermMatch, Value: aws.String("m5.large")},
			{Field: aws.String("tenancy"), Type: pricingtypes.FilterTypeTermMatch, Value: aws.String("Shared")},
		}})
		if err != nil || len(out.PriceList) != 1 {
			t.Fatalf("GetProducts: %v, %d products", err, len(out.PriceList))
		}
		return out.PriceList[0]
	}
	orig := doc()
	e.s.SetPriceDocument("m5.large", "{not json")
	if got := doc(); got != "{not json" {
		t.Fatalf("after SetPriceDocument: %s", got)
	}
	e.s.SetPriceDocument("m5.large", "")
	if got := doc(); got != orig {
		t.Fatal("SetPriceDocument(\"\") did not restore the document")
	}
}

func TestFaultDeniedRefusesAsAnUnauthorizedCaller(t *testing.T) {
	e := newEnv(t, Options{})
	e.s.InjectFault(Fault{Service: ServiceEC2, Action: "DescribeInstanceTypes", Kind: FaultAccessDenied, Count: 1})
	_, err := e.ec2.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{})
	wantCode(t, err, "UnauthorizedOperation")
	if hits := e.s.FaultHits(); hits[0] != 1 {
		t.Fatalf("the SDK retried a refusal: %d hits", hits[0])
	}
	e.s.InjectFault(Fault{Service: ServicePricing, Kind: FaultAccessDenied, Count: 1})
	_, err = e.pricing.GetProducts(ctx, &pricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2")})
	wantCode(t, err, "AccessDeniedException")
}

// Package awstest starts the project's EC2-compatible endpoint (package awsapi) on loopback
// for the AWS provider's tests and builds unmodified aws-sdk-go-v2 clients for it, as the
// provider's own constructor would, so tests exercise the real wire protocol.
package awstest

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	clocktesting "k8s.io/utils/clock/testing"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
)

// Epoch is when the endpoint's fake clock starts.
var Epoch = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// Env is an endpoint and clients for it.
type Env struct {
	Server *awsapi.Server
	Clock  *clocktesting.FakeClock
	URL    string
	Config aws.Config
	EC2    *ec2.Client
}

// New starts a server with opts (a fake clock at Epoch unless opts.Clock is set; cluster
// "tenon" unless named) and an EC2 client with static credentials, BaseEndpoint and the SDK's
// standard retryer with short backoffs and no retry quota, so that injected throttling is
// retried quickly. Request bodies are buffered (awsapi.HTTPClient).
func New(t testing.TB, opts awsapi.Options) *Env {
	t.Helper()
	fc := clocktesting.NewFakeClock(Epoch)
	if opts.Clock == nil {
		opts.Clock = fc
	}
	s, err := awsapi.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	cfg, err := config.LoadDefaultConfig(context.Background(),
		config.WithRegion(s.Region()),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")),
		config.WithBaseEndpoint(hs.URL),
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = 5
				o.MaxBackoff = 5 * time.Millisecond
				o.RateLimiter = ratelimit.None
			})
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	cfg.HTTPClient = awsapi.HTTPClient{} // buffered bodies: see its comment
	return &Env{Server: s, Clock: fc, URL: hs.URL, Config: cfg, EC2: ec2.NewFromConfig(cfg)}
}

// Subnets returns the endpoint's subnets as an EC2NodeClass status lists them.
func (e *Env) Subnets(t testing.TB) []awsv1.Subnet {
	t.Helper()
	out, err := e.EC2.DescribeSubnets(context.Background(), &ec2.DescribeSubnetsInput{})
	if err != nil {
		t.Fatal(err)
	}
	var subnets []awsv1.Subnet
	for _, sn := range out.Subnets {
		subnets = append(subnets, awsv1.Subnet{ID: aws.ToString(sn.SubnetId), Zone: aws.ToString(sn.AvailabilityZone), ZoneID: aws.ToString(sn.AvailabilityZoneId)})
	}
	return subnets
}

// SecurityGroups returns the endpoint's security groups as a status lists them.
func (e *Env) SecurityGroups(t testing.TB) []awsv1.SecurityGroup {
	t.Helper()
	out, err := e.EC2.DescribeSecurityGroups(context.Background(), &ec2.DescribeSecurityGroupsInput{})
	if err != nil {
		t.Fatal(err)
	}
	var sgs []awsv1.SecurityGroup
	for _, sg := range out.SecurityGroups {
		sgs = append(sgs, awsv1.SecurityGroup{ID: aws.ToString(sg.GroupId), Name: aws.ToString(sg.GroupName)})
	}
	return sgs
}

// Image returns the ID of the newest image whose name matches the EC2 name pattern.
func (e *Env) Image(t testing.TB, pattern string) string {
	t.Helper()
	out, err := e.EC2.DescribeImages(context.Background(), &ec2.DescribeImagesInput{
		Owners: []string{"amazon"}, Filters: []ec2types.Filter{{Name: aws.String("name"), Values: []string{pattern}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	best, when := "", ""
	for _, im := range out.Images {
		if c := aws.ToString(im.CreationDate); best == "" || c > when {
			best, when = aws.ToString(im.ImageId), c
		}
	}
	if best == "" {
		t.Fatalf("no image matches %q", pattern)
	}
	return best
}

// Calls counts the requests of one EC2 action from now on (by a zero-delay FaultSlow, which
// serves them unchanged); read the count with the returned function. The first matching
// fault decides a request, so inject other faults on the same action before counting: the
// count is then of the requests they let through.
func (e *Env) Calls(action string) func() int {
	before := len(e.Server.FaultHits())
	e.Server.InjectFault(awsapi.Fault{Service: awsapi.ServiceEC2, Action: action, Kind: awsapi.FaultSlow})
	return func() int { return e.Server.FaultHits()[before] }
}

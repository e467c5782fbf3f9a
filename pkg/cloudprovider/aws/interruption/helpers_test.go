package interruption

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
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
)

const (
	cluster   = "tenon"
	queueName = "tenon-interruption"
)

var (
	epoch = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ctx   = context.Background()
)

// endpoint is an awsapi server with an interruption queue, on loopback, and unmodified SDK
// clients for it.
type endpoint struct {
	s     *awsapi.Server
	clock *clocktesting.FakeClock
	ec2   *ec2.Client
	sqs   *sqs.Client
	url   string
}

// newEndpoint starts a server on clk (a fake clock at epoch when nil).
func newEndpoint(t *testing.T, clk clock.Clock) *endpoint {
	t.Helper()
	e := &endpoint{}
	if clk == nil {
		e.clock = clocktesting.NewFakeClock(epoch)
		clk = e.clock
	}
	s, err := awsapi.New(awsapi.Options{Clock: clk, ClusterName: cluster, InterruptionQueue: queueName, MaxWait: 100 * time.Millisecond})
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
				o.MaxBackoff = 10 * time.Millisecond
				o.RateLimiter = ratelimit.None
			})
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	cfg.HTTPClient = awsapi.HTTPClient{} // buffered bodies: see its comment
	e.s, e.ec2, e.sqs = s, ec2.NewFromConfig(cfg), sqs.NewFromConfig(cfg)
	out, err := e.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(queueName)})
	if err != nil {
		t.Fatal(err)
	}
	e.url = aws.ToString(out.QueueUrl)
	return e
}

// queue is a Queue on the endpoint.
func (e *endpoint) queue(t *testing.T) *Queue {
	t.Helper()
	var clk clock.Clock = clock.RealClock{}
	if e.clock != nil {
		clk = e.clock
	}
	q, err := New(Options{SQS: e.sqs, EC2: e.ec2, QueueName: queueName, ClusterName: cluster, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// launch starts n spot m5.large instances tagged for clusterTag's cluster and returns their IDs.
func (e *endpoint) launch(t *testing.T, clusterTag string, n int32) []string {
	t.Helper()
	name := "lt-" + clusterTag
	if _, err := e.ec2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{name}}); err != nil {
		_, err := e.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
			LaunchTemplateName: aws.String(name),
			LaunchTemplateData: &ec2types.RequestLaunchTemplateData{
				ImageId: aws.String(e.image(t)),
				TagSpecifications: []ec2types.LaunchTemplateTagSpecificationRequest{{
					ResourceType: ec2types.ResourceTypeInstance,
					Tags:         []ec2types.Tag{{Key: aws.String("kubernetes.io/cluster/" + clusterTag), Value: aws.String("owned")}},
				}},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	subnets, err := e.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.ec2.CreateFleet(ctx, &ec2.CreateFleetInput{
		Type: ec2types.FleetTypeInstant,
		LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: aws.String(name), Version: aws.String("$Latest")},
			Overrides:                   []ec2types.FleetLaunchTemplateOverridesRequest{{InstanceType: "m5.large", SubnetId: subnets.Subnets[0].SubnetId}},
		}},
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{DefaultTargetCapacityType: ec2types.DefaultTargetCapacityTypeSpot, TotalTargetCapacity: aws.Int32(n)},
		SpotOptions:                 &ec2types.SpotOptionsRequest{AllocationStrategy: ec2types.SpotAllocationStrategyPriceCapacityOptimized},
	})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, i := range out.Instances {
		ids = append(ids, i.InstanceIds...)
	}
	if len(ids) != int(n) {
		t.Fatalf("launched %d instances, want %d (errors %+v)", len(ids), n, out.Errors)
	}
	return ids
}

func (e *endpoint) image(t *testing.T) string {
	t.Helper()
	out, err := e.ec2.DescribeImages(ctx, &ec2.DescribeImagesInput{Filters: []ec2types.Filter{{Name: aws.String("name"), Values: []string{"amazon-eks-node-al2023-x86_64-standard-1.37-*"}}}})
	if err != nil || len(out.Images) == 0 {
		t.Fatalf("no AMI: %v", err)
	}
	return aws.ToString(out.Images[0].ImageId)
}

// send puts a raw message on the queue.
func (e *endpoint) send(t *testing.T, body string) {
	t.Helper()
	if _, err := e.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(e.url), MessageBody: aws.String(body)}); err != nil {
		t.Fatal(err)
	}
}

// left is how many messages the queue holds, in flight or not.
func (e *endpoint) left() int { return len(e.s.QueueMessages(queueName)) }

// zoneOf is the zone the endpoint placed an instance in.
func (e *endpoint) zoneOf(t *testing.T, id string) string {
	t.Helper()
	for _, i := range e.s.Instances() {
		if i.ID == id {
			return i.Zone
		}
	}
	t.Fatalf("no instance %s", id)
	return ""
}

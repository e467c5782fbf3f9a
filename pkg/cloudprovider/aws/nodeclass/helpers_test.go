package nodeclass

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
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
)

const cluster = "tenon"

// epoch is when the endpoint's clock starts: after every published AMI release.
var epoch = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// endpoint is an awsapi server on loopback and unmodified SDK clients for it.
type endpoint struct {
	s   *awsapi.Server
	ec2 *ec2.Client
	ssm *ssm.Client
	iam *iam.Client
}

// newEndpoint starts a server (its clock a fake one at epoch unless set) and builds SDK clients
// through the SDK's own config loader, with static credentials, BaseEndpoint and the standard
// retryer with short backoffs.
func newEndpoint(t *testing.T, opts awsapi.Options) *endpoint {
	t.Helper()
	if opts.Clock == nil {
		opts.Clock = clocktesting.NewFakeClock(epoch)
	}
	opts.ClusterName = cluster
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
				o.MaxBackoff = 10 * time.Millisecond
				o.RateLimiter = ratelimit.None
			})
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	cfg.HTTPClient = awsapi.HTTPClient{} // buffered bodies: see its comment
	return &endpoint{s: s, ec2: ec2.NewFromConfig(cfg), ssm: ssm.NewFromConfig(cfg), iam: iam.NewFromConfig(cfg)}
}

// options are controller options on the endpoint's clients.
func (e *endpoint) options(k8s string) Options {
	return Options{EC2: e.ec2, SSM: e.ssm, IAM: e.iam, ClusterName: cluster, Region: e.s.Region(), KubernetesVersion: k8s}
}

// resolve runs the resolution of nc's parts (no API server involved) and returns it.
func (e *endpoint) resolve(t *testing.T, k8s string, nc *awsv1.EC2NodeClass) *resolution {
	t.Helper()
	c := NewController(e.options(k8s))
	r := &resolution{c: c, nc: nc, now: epoch, requeue: c.opts.RequeueInterval}
	ctx := context.Background()
	r.subnets(ctx)
	r.securityGroups(ctx)
	r.amis(ctx)
	r.capacityReservations(ctx)
	r.instanceProfile(ctx)
	r.placementGroup(ctx)
	r.validation()
	r.ready()
	return r
}

var discoveryTags = map[string]string{awsapi.DiscoveryTag: cluster}

// class is an EC2NodeClass selecting the endpoint's discovery-tagged network, with the AMI
// terms given and the role NodeRole.
func class(name string, amis ...awsv1.AMISelectorTerm) *awsv1.EC2NodeClass {
	return &awsv1.EC2NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: awsv1.EC2NodeClassSpec{
			SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: discoveryTags}},
			SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: discoveryTags}},
			AMISelectorTerms:           amis,
			Role:                       "NodeRole",
		},
	}
}

func alias(a string) awsv1.AMISelectorTerm { return awsv1.AMISelectorTerm{Alias: a} }

// condition returns a condition of nc (zero when absent).
func condition(nc *awsv1.EC2NodeClass, t string) metav1.Condition {
	for _, c := range nc.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return metav1.Condition{}
}

// reqString renders requirements compactly: "kubernetes.io/arch In [amd64], ...".
func reqString(reqs []corev1.NodeSelectorRequirement) string {
	s := ""
	for i, r := range reqs {
		if i > 0 {
			s += ", "
		}
		s += r.Key + " " + string(r.Operator)
		if len(r.Values) > 0 {
			s += " " + r.Values[0]
		}
	}
	return s
}

// eventually polls cond every 50ms until it holds, failing t after 30s with what cond last
// described.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: timed out (last: %s)", what, state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

package awsapi

import (
	"context"
	"errors"
	"fmt"
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
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/smithy-go"
	clocktesting "k8s.io/utils/clock/testing"
)

// epoch is when every test's fake clock starts.
var epoch = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// env is a server on an httptest listener and the SDK's clients pointed at it.
type env struct {
	s       *Server
	clock   *clocktesting.FakeClock
	url     string
	ec2     *ec2.Client
	ssm     *ssm.Client
	sqs     *sqs.Client
	pricing *pricing.Client
	iam     *iam.Client
}

// newEnv starts a server with opts (its clock a fake one at epoch unless set) and builds
// unmodified SDK clients for it with static credentials and BaseEndpoint, through the SDK's
// own config loader. The retryer is the SDK's standard one with short backoffs.
func newEnv(t *testing.T, opts Options) *env {
	t.Helper()
	fc := clocktesting.NewFakeClock(epoch)
	if opts.Clock == nil {
		opts.Clock = fc
	}
	s, err := New(opts)
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
				o.MaxBackoff = 20 * time.Millisecond
				o.RateLimiter = ratelimit.None
			})
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	cfg.HTTPClient = HTTPClient{} // buffered bodies: see its comment
	return &env{
		s: s, clock: fc, url: hs.URL,
		ec2: ec2.NewFromConfig(cfg), ssm: ssm.NewFromConfig(cfg), sqs: sqs.NewFromConfig(cfg),
		pricing: pricing.NewFromConfig(cfg), iam: iam.NewFromConfig(cfg),
	}
}

// advance moves the fake clock and brings the server up to it.
func (e *env) advance(d time.Duration) {
	e.clock.Step(d)
	e.s.Sync()
}

// errorCode is the API error code the SDK decoded from err ("" when none).
func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := errorCode(err); got != code {
		t.Fatalf("error %v: code %q, want %q", err, got, code)
	}
}

var ctx = context.Background()

func fmtPrice(p float64) string { return fmt.Sprintf("%.6f", p) }

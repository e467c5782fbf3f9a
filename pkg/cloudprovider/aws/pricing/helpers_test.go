package pricing

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"

	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
)

var ctx = context.Background()

// endpoint is an awsapi.Server on a loopback port that can be taken down and brought back up
// on the same address, with unmodified SDK clients pointed at it that count their requests.
type endpoint struct {
	t       *testing.T
	s       *awsapi.Server
	addr    string
	srv     *http.Server
	ec2     *ec2.Client
	pricing *pricing.Client
	calls   atomic.Int64
}

func newEndpoint(t *testing.T, opts awsapi.Options) *endpoint {
	t.Helper()
	s, err := awsapi.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	e := &endpoint{t: t, s: s}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.addr = ln.Addr().String()
	e.serve(ln)
	t.Cleanup(e.down)
	cfg, err := config.LoadDefaultConfig(ctx,
		config.WithRegion(s.Region()),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")),
		config.WithBaseEndpoint("http://"+e.addr),
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxBackoff = 5 * time.Millisecond
				o.RateLimiter = ratelimit.None
			})
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	hc := counting{&e.calls, &http.Client{}}
	e.ec2 = ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.HTTPClient = hc })
	e.pricing = pricing.NewFromConfig(cfg, func(o *pricing.Options) { o.HTTPClient = hc })
	return e
}

func (e *endpoint) serve(ln net.Listener) {
	srv := &http.Server{Handler: e.s, ReadHeaderTimeout: 5 * time.Second}
	e.srv = srv
	go func() { _ = srv.Serve(ln) }()
}

// down closes the listener and every connection: requests fail to connect.
func (e *endpoint) down() {
	if e.srv != nil {
		_ = e.srv.Close()
		e.srv = nil
	}
}

// up serves again on the same address.
func (e *endpoint) up() {
	e.t.Helper()
	ln, err := net.Listen("tcp", e.addr)
	if err != nil {
		e.t.Fatal(err)
	}
	e.serve(ln)
}

// counting counts the HTTP requests (attempts, retries included) a client sends.
//
// It reads each request body into memory before sending it. On loopback the endpoint can
// answer before net/http's writer has finished with the SDK's streamed body; the transport then
// closes the connection under a large response still being read ("use of closed network
// connection"), and the SDK retries. A buffered body does not race, so counts are exact.
type counting struct {
	n    *atomic.Int64
	next *http.Client
}

func (c counting) Do(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	if r.Body != nil && r.Body != http.NoBody {
		b, err := io.ReadAll(r.Body)
		_ = r.Body.Close()
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	return c.next.Do(r)
}

// logs records what a logger is told, one line per message.
type logs struct {
	mu    sync.Mutex
	lines []string
}

func (l *logs) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, args)
	}, funcr.Options{})
}

// count is how many lines contain s.
func (l *logs) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

func contextWithCancel() (context.Context, context.CancelFunc) { return context.WithCancel(ctx) }

// waitFor polls cond (real time, the endpoint runs on real sockets) for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

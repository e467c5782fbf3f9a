package awstest

import (
	"context"
	"net"
	"net/http"
	"slices"
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

// Endpoint is an awsapi.Server on a loopback port that can be taken down and brought back up
// on the same address, with unmodified EC2 and Pricing clients pointed at it that count their
// requests. Unlike New, it keeps opts.Clock as given (nil: the server's own default).
type Endpoint struct {
	Server  *awsapi.Server
	EC2     *ec2.Client
	Pricing *pricing.Client

	t     testing.TB
	addr  string
	srv   *http.Server
	calls atomic.Int64
}

// NewEndpoint starts a server with opts on a loopback port, stopped when t ends. Its clients
// use static credentials and the SDK's standard retryer with short backoffs and no retry
// quota, and send through an awsapi.HTTPClient that buffers bodies and counts requests.
func NewEndpoint(t testing.TB, opts awsapi.Options) *Endpoint {
	t.Helper()
	s, err := awsapi.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	e := &Endpoint{t: t, Server: s}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.addr = ln.Addr().String()
	e.serve(ln)
	t.Cleanup(e.Down)
	cfg, err := config.LoadDefaultConfig(context.Background(),
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
	cfg.HTTPClient = awsapi.HTTPClient{Next: &http.Client{}, Calls: &e.calls}
	e.EC2 = ec2.NewFromConfig(cfg)
	e.Pricing = pricing.NewFromConfig(cfg)
	return e
}

func (e *Endpoint) serve(ln net.Listener) {
	srv := &http.Server{Handler: e.Server, ReadHeaderTimeout: 5 * time.Second}
	e.srv = srv
	go func() { _ = srv.Serve(ln) }()
}

// Down closes the listener and every open connection: requests then fail to connect.
func (e *Endpoint) Down() {
	if e.srv != nil {
		_ = e.srv.Close()
		e.srv = nil
	}
}

// Up serves again on the address the endpoint had.
func (e *Endpoint) Up() {
	e.t.Helper()
	ln, err := net.Listen("tcp", e.addr)
	if err != nil {
		e.t.Fatal(err)
	}
	e.serve(ln)
}

// Calls is how many HTTP requests (attempts, retries included) the clients have sent so far.
func (e *Endpoint) Calls() int64 { return e.calls.Load() }

// Logs records what a logger is told, one line per message. The zero value is ready to use.
type Logs struct {
	mu    sync.Mutex
	lines []string
}

// Logger returns a logger whose messages l records.
func (l *Logs) Logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, args)
	}, funcr.Options{})
}

// Count is how many recorded lines contain s.
func (l *Logs) Count(s string) int {
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

// Lines returns a copy of the recorded lines, oldest first.
func (l *Logs) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines)
}

// WaitFor polls cond in real time (the endpoint runs on real sockets) for up to 10 s and
// fails t, naming what, if it never holds.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

package instancetype

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"reflect"
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
	awspricing "github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/pricing"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
)

var ctx = context.Background()

// endpoint is an awsapi.Server on a loopback port that can be taken down and brought back up
// on the same address, with unmodified SDK clients pointed at it that count their requests.
type endpoint struct {
	t       testing.TB
	s       *awsapi.Server
	addr    string
	srv     *http.Server
	ec2     *ec2.Client
	pricing *awspricing.Client
	calls   atomic.Int64
}

func newEndpoint(t testing.TB, opts awsapi.Options) *endpoint {
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
	e.pricing = awspricing.NewFromConfig(cfg, func(o *awspricing.Options) { o.HTTPClient = hc })
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

var epoch = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// fixture is an endpoint serving cat, prices refreshed from it, and a provider over both.
type fixture struct {
	*endpoint
	cat    *catalog.Catalog
	clock  *clocktesting.FakeClock
	prices *pricing.Provider
	p      *Provider
	log    *logs
}

func newFixture(t testing.TB, cat *catalog.Catalog, opts Options) *fixture {
	t.Helper()
	if cat == nil {
		var err error
		if cat, err = catalog.Load("us-east-1"); err != nil {
			t.Fatal(err)
		}
	}
	clk := clocktesting.NewFakeClock(epoch)
	e := newEndpoint(t, awsapi.Options{Catalog: cat, Clock: clk})
	prices, err := pricing.New(e.pricing, e.ec2, pricing.Options{Region: cat.Region, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if err := prices.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	f := &fixture{endpoint: e, cat: cat, clock: clk, prices: prices, log: &logs{}}
	opts.Region, opts.Clock, opts.Logger = cat.Region, clk, f.log.logger()
	if f.p, err = New(e.ec2, prices, opts); err != nil {
		t.Fatal(err)
	}
	return f
}

// nodeClass is a Ready-looking EC2NodeClass whose status has a subnet in each zone named
// (all the catalog's when none are).
func (f *fixture) nodeClass(name string, zones ...string) *awsv1.EC2NodeClass {
	nc := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: name}}
	nc.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}}
	for _, z := range f.cat.Zones {
		if len(zones) == 0 || slices.Contains(zones, z.Name) {
			nc.Status.Subnets = append(nc.Status.Subnets, awsv1.Subnet{ID: "subnet-" + z.ID, Zone: z.Name, ZoneID: z.ID})
		}
	}
	return nc
}

func (f *fixture) list(t *testing.T, nc *awsv1.EC2NodeClass) []*catalog.InstanceType {
	t.Helper()
	its, err := f.p.List(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	return its
}

// find returns the type called name.
func find(t *testing.T, its []*catalog.InstanceType, name string) *catalog.InstanceType {
	t.Helper()
	for _, it := range its {
		if it.Name == name {
			return it
		}
	}
	t.Fatalf("%s not listed", name)
	return nil
}

// The spot price history carries six decimals: a price read back is within a unit of the
// sixth.
const pricePrecision = 1e-6

// sameTypes reports how got differs from want: names, labels, requirements, capacity,
// overhead and offerings (prices within pricePrecision).
func sameTypes(got, want []*catalog.InstanceType) []string {
	var diffs []string
	add := func(format string, args ...any) {
		if len(diffs) < 40 {
			diffs = append(diffs, fmt.Sprintf(format, args...))
		}
	}
	if len(got) != len(want) {
		add("%d types, want %d", len(got), len(want))
	}
	byName := map[string]*catalog.InstanceType{}
	for _, it := range got {
		byName[it.Name] = it
	}
	for _, w := range want {
		g := byName[w.Name]
		if g == nil {
			add("%s missing", w.Name)
			continue
		}
		if !maps.Equal(g.Labels(), w.Labels()) {
			add("%s labels %v, want %v", w.Name, g.Labels(), w.Labels())
		}
		if !g.Requirements.Equal(w.Requirements) {
			add("%s requirements %s, want %s", w.Name, g.Requirements, w.Requirements)
		}
		if g.Capacity != w.Capacity {
			add("%s capacity %v, want %v", w.Name, g.Capacity, w.Capacity)
		}
		if g.Overhead != w.Overhead {
			add("%s overhead %+v, want %+v", w.Name, g.Overhead, w.Overhead)
		}
		if len(g.Offerings) != len(w.Offerings) {
			add("%s %d offerings %v, want %d %v", w.Name, len(g.Offerings), g.Offerings, len(w.Offerings), w.Offerings)
			continue
		}
		for i := range w.Offerings {
			go_, wo := g.Offerings[i], w.Offerings[i]
			if math.Abs(go_.Price-wo.Price) > pricePrecision {
				add("%s offering %d price %g, want %g", w.Name, i, go_.Price, wo.Price)
			}
			go_.Price = wo.Price
			if !reflect.DeepEqual(go_, wo) {
				add("%s offering %d %+v, want %+v", w.Name, i, go_, wo)
			}
		}
	}
	return diffs
}

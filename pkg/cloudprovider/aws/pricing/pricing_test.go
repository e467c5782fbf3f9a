package pricing

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/internal/awstest"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
	clocktesting "k8s.io/utils/clock/testing"
)

var epoch = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// want is the embedded us-east-1 catalog the endpoint serves by default.
func want(t *testing.T) *catalog.Catalog {
	t.Helper()
	c, err := catalog.Load("us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newProvider(t *testing.T, e *awstest.Endpoint, opts Options) *Provider {
	t.Helper()
	if opts.Clock == nil {
		opts.Clock = clocktesting.NewFakeClock(epoch)
	}
	p, err := New(e.Pricing, e.EC2, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The spot price history carries six decimals, as EC2's does: a price read back is within a
// unit of the sixth decimal.
const spotPrecision = 1e-6

func TestRefreshReadsEveryPriceOfTheCatalogFromTheAPIs(t *testing.T) {
	e := awstest.NewEndpoint(t, awsapi.Options{})
	p := newProvider(t, e, Options{Region: "us-east-1"})
	if od, spot := p.Sources(); od != SourceEmbedded || spot != SourceEmbedded {
		t.Fatalf("before a refresh: sources %v, %v", od, spot)
	}
	if err := p.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if od, spot := p.Sources(); od != SourceAPI || spot != SourceAPI {
		t.Fatalf("after a refresh: sources %v, %v", od, spot)
	}
	c := want(t)
	odCount, spotCount := 0, 0
	for _, it := range c.Types {
		if w, ok := it.OnDemandPrice(); ok {
			odCount++
			if got, ok := p.OnDemand(it.Name); !ok || got != w {
				t.Errorf("%s on-demand %g (%v), want %g", it.Name, got, ok, w)
			}
		}
		for _, o := range it.Offerings {
			if o.CapacityType != apisv1.CapacityTypeSpot {
				continue
			}
			spotCount++
			if got, ok := p.Spot(it.Name, o.Zone); !ok || math.Abs(got-o.Price) > spotPrecision {
				t.Errorf("%s spot in %s %g (%v), want %g", it.Name, o.Zone, got, ok, o.Price)
			}
		}
	}
	// Bare metal is priced under its own product family and dedicated tenancy.
	if _, ok := p.OnDemand("m5.metal"); !ok {
		t.Error("m5.metal has no on-demand price")
	}
	if odCount < 1300 || spotCount < 5000 {
		t.Fatalf("only %d on-demand and %d spot prices checked", odCount, spotCount)
	}
}

func TestMalformedPriceDocumentIsAnErrorNamingTheProduct(t *testing.T) {
	e := awstest.NewEndpoint(t, awsapi.Options{})
	e.Server.SetPriceDocument("m5.large", `{"product":{"sku":"SKUM5","attributes":{"instanceType":"m5.large"}},"terms":{"OnDemand":{"a":{"priceDimensions":{"b":{"pricePerUnit":{"USD":"abc"}}}}}}}`)
	e.Server.SetPriceDocument("c5.large", `{"product":{"sku":"SKUC5","attributes":{"instanceType":"c5.large"}},"terms":{"OnDemand":{"a":{"priceDimensions":{"b":{"pricePerUnit":{"USD":"0.0000000000"}}}}}}}`)
	e.Server.SetPriceDocument("r5.large", `{"product":{"sku":"SKUR5","attributes":{"instanceType":"r5.large"}},"terms":{}}`)
	e.Server.SetPriceDocument("t3.micro", `{"product": [`)
	var l awstest.Logs
	p := newProvider(t, e, Options{Region: "us-east-1", Logger: l.Logger()})
	embedded := map[string]float64{}
	for _, n := range []string{"m5.large", "c5.large", "r5.large", "t3.micro"} {
		embedded[n], _ = p.OnDemand(n)
	}
	err := p.RefreshOnDemand(ctx)
	if err == nil {
		t.Fatal("no error for four malformed products")
	}
	for _, s := range []string{"m5.large (SKU SKUM5)", `"abc"`, "c5.large (SKU SKUC5)", "r5.large (SKU SKUR5): no on-demand price", `product "{\"product\": [": not a price-list document`} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
	for n, w := range embedded {
		if got, ok := p.OnDemand(n); !ok || got != w || got == 0 {
			t.Errorf("%s: %g (%v) after a malformed document, want its previous price %g", n, got, ok, w)
		}
	}
	// The readable products did apply.
	if od, _ := p.Sources(); od != SourceAPI {
		t.Fatalf("on-demand source %v", od)
	}
	it, _ := want(t).Get("m6i.large")
	if w, _ := it.OnDemandPrice(); func() float64 { v, _ := p.OnDemand("m6i.large"); return v }() != w {
		t.Error("m6i.large lost its price")
	}
	// A second refresh with the same bad products does not log again.
	_ = p.RefreshOnDemand(ctx)
	if n := l.Count("could not be read"); n != 1 {
		t.Fatalf("%d log lines about unreadable prices over two refreshes, want 1", n)
	}
}

func TestIsolatedVPCNeverCallsThePricingAPIButReadsSpotFromEC2(t *testing.T) {
	e := awstest.NewEndpoint(t, awsapi.Options{})
	e.Server.SetSpotPrice("m5.large", "us-east-1b", 0.0123)
	p, err := New(nil, e.EC2, Options{Region: "us-east-1", IsolatedVPC: true, Clock: clocktesting.NewFakeClock(epoch)})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	// Every request went to EC2 (the pricing client is nil; a request to the Pricing API
	// would have panicked).
	if od, spot := p.Sources(); od != SourceEmbedded || spot != SourceAPI {
		t.Fatalf("sources %v, %v; want embedded, api", od, spot)
	}
	if got, _ := p.Spot("m5.large", "us-east-1b"); got != 0.0123 {
		t.Fatalf("spot m5.large in us-east-1b %g, want the history's 0.0123", got)
	}
	it, _ := want(t).Get("m5.large")
	if w, _ := it.OnDemandPrice(); func() float64 { v, _ := p.OnDemand("m5.large"); return v }() != w {
		t.Fatal("on-demand price is not the embedded one")
	}
	// Against a Pricing API client too, isolated VPC sends nothing to it.
	q := newProvider(t, e, Options{Region: "us-east-1", IsolatedVPC: true})
	before := e.Calls()
	if err := q.RefreshOnDemand(ctx); err != nil {
		t.Fatal(err)
	}
	if n := e.Calls() - before; n != 0 {
		t.Fatalf("isolated VPC sent %d requests for on-demand prices", n)
	}
}

func TestSpotRefreshChangesPricesAndTheGeneration(t *testing.T) {
	e := awstest.NewEndpoint(t, awsapi.Options{})
	p := newProvider(t, e, Options{Region: "us-east-1"})
	if err := p.RefreshSpot(ctx); err != nil {
		t.Fatal(err)
	}
	g := p.Generation()
	before, _ := p.Spot("c5.xlarge", "us-east-1c")
	if err := p.RefreshSpot(ctx); err != nil {
		t.Fatal(err)
	}
	if p.Generation() != g {
		t.Fatal("an unchanged refresh changed the generation")
	}
	e.Server.SetSpotPrice("c5.xlarge", "us-east-1c", before*2)
	if err := p.RefreshSpot(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := p.Spot("c5.xlarge", "us-east-1c"); math.Abs(got-before*2) > spotPrecision {
		t.Fatalf("spot after the change %g, want %g", got, before*2)
	}
	if p.Generation() == g {
		t.Fatal("a changed price kept the generation")
	}
}

func TestEndpointDownKeepsPricesLogsOnceAndRecovers(t *testing.T) {
	e := awstest.NewEndpoint(t, awsapi.Options{})
	var l awstest.Logs
	p := newProvider(t, e, Options{Region: "us-east-1", Logger: l.Logger()})
	e.Down()
	err := p.Refresh(ctx)
	if err == nil || !IsUnreachable(err) {
		t.Fatalf("refresh against a closed endpoint: %v (unreachable %v)", err, IsUnreachable(err))
	}
	_ = p.Refresh(ctx)
	if n := l.Count("keeping the embedded catalog's prices"); n != 2 {
		t.Fatalf("%d log lines about keeping embedded prices after two failed refreshes (on-demand, spot), want 2:\n%s", n, strings.Join(l.Lines(), "\n"))
	}
	it, _ := want(t).Get("m5.large")
	w, _ := it.OnDemandPrice()
	if got, ok := p.OnDemand("m5.large"); !ok || got != w {
		t.Fatalf("m5.large while down: %g (%v), want the embedded %g", got, ok, w)
	}
	e.Up()
	e.Server.SetSpotPrice("m5.large", "us-east-1a", 0.0321)
	if err := p.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := p.Spot("m5.large", "us-east-1a"); got != 0.0321 {
		t.Fatalf("spot after recovery %g", got)
	}
	// Down again after a success: the API's prices stay, marked stale, logged once.
	e.Down()
	_ = p.Refresh(ctx)
	_ = p.Refresh(ctx)
	if od, spot := p.Sources(); od != SourceAPIStale || spot != SourceAPIStale {
		t.Fatalf("sources %v, %v; want stale", od, spot)
	}
	if got, _ := p.Spot("m5.large", "us-east-1a"); got != 0.0321 {
		t.Fatalf("spot while down again %g, want the last fetched 0.0321", got)
	}
	if n := l.Count("keeping the last prices it returned"); n != 2 {
		t.Fatalf("%d log lines about keeping the last prices, want 2", n)
	}
}

func TestStartRefreshesOnTheIntervalAndRetriesFailuresSooner(t *testing.T) {
	e := awstest.NewEndpoint(t, awsapi.Options{})
	clk := clocktesting.NewFakeClock(epoch)
	p := newProvider(t, e, Options{Region: "us-east-1", Clock: clk, RefreshInterval: time.Hour, RetryInterval: time.Minute})
	e.Server.InjectFault(awsapi.Fault{Service: awsapi.ServiceEC2, Action: "DescribeSpotPriceHistory", Kind: awsapi.FaultServerError, Count: 5})
	runCtx, cancel := contextWithCancel()
	done := make(chan error, 1)
	go func() { done <- p.Start(runCtx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	awstest.WaitFor(t, "the first refresh to fail", func() bool { _, s := p.Sources(); return s == SourceEmbedded && clk.HasWaiters() })
	clk.Step(time.Minute)
	awstest.WaitFor(t, "the retry to succeed", func() bool { _, s := p.Sources(); return s == SourceAPI && clk.HasWaiters() })
	e.Server.SetSpotPrice("m5.large", "us-east-1a", 0.0777)
	clk.Step(59 * time.Minute)
	time.Sleep(20 * time.Millisecond)
	if got, _ := p.Spot("m5.large", "us-east-1a"); got == 0.0777 {
		t.Fatal("refreshed before the interval")
	}
	clk.Step(time.Minute)
	awstest.WaitFor(t, "the interval's refresh", func() bool { v, _ := p.Spot("m5.large", "us-east-1a"); return v == 0.0777 })
}

func TestIsUnreachableTellsOutagesFromRefusals(t *testing.T) {
	e := awstest.NewEndpoint(t, awsapi.Options{})
	p := newProvider(t, e, Options{Region: "us-east-1"})
	e.Server.InjectFault(awsapi.Fault{Service: awsapi.ServicePricing, Kind: awsapi.FaultThrottle})
	err := p.RefreshOnDemand(ctx)
	if !IsUnreachable(err) {
		t.Fatalf("throttled past retries: %v not unreachable", err)
	}
	e.Server.ClearFaults()
	if IsUnreachable(errors.New("AccessDenied")) || IsUnreachable(nil) {
		t.Fatal("plain errors are not outages")
	}
}

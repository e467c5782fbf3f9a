package instancetype

import (
	"context"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/internal/awstest"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/pricing"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
)

var ctx = context.Background()

func contextWithCancel() (context.Context, context.CancelFunc) { return context.WithCancel(ctx) }

var epoch = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// fixture is an endpoint serving cat, prices refreshed from it, and a provider over both.
type fixture struct {
	*awstest.Endpoint
	cat    *catalog.Catalog
	clock  *clocktesting.FakeClock
	prices *pricing.Provider
	p      *Provider
	log    *awstest.Logs
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
	e := awstest.NewEndpoint(t, awsapi.Options{Catalog: cat, Clock: clk})
	prices, err := pricing.New(e.Pricing, e.EC2, pricing.Options{Region: cat.Region, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if err := prices.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	f := &fixture{Endpoint: e, cat: cat, clock: clk, prices: prices, log: &awstest.Logs{}}
	opts.Region, opts.Clock, opts.Logger = cat.Region, clk, f.log.Logger()
	if f.p, err = New(e.EC2, prices, opts); err != nil {
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

package overlay_test

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/apis/v1alpha1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/overlay"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

var (
	catOnce sync.Once
	cat     *catalog.Catalog
	catErr  error
)

func types(t testing.TB, names ...string) []*catalog.InstanceType {
	t.Helper()
	catOnce.Do(func() { cat, catErr = catalog.Load("us-east-1", catalog.WithZones("us-east-1a", "us-east-1b")) })
	if catErr != nil {
		t.Fatal(catErr)
	}
	var out []*catalog.InstanceType
	for _, n := range names {
		it, ok := cat.Get(n)
		if !ok {
			t.Fatalf("no instance type %s", n)
		}
		out = append(out, it)
	}
	return out
}

func pool(name string, labels map[string]string, its []*catalog.InstanceType) overlay.Pool {
	np := &apisv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
	np.Spec.Template.Labels = labels
	return overlay.Pool{NodePool: np, Types: its}
}

type ov struct {
	name       string
	weight     int32
	reqs       []v1alpha1.NodeSelectorRequirement
	price, adj string
	capacity   corev1.ResourceList
}

func (o ov) object() *v1alpha1.NodeOverlay {
	x := &v1alpha1.NodeOverlay{ObjectMeta: metav1.ObjectMeta{Name: o.name}}
	if o.weight != 0 {
		w := o.weight
		x.Spec.Weight = &w
	}
	x.Spec.Requirements = o.reqs
	if o.price != "" {
		p := o.price
		x.Spec.Price = &p
	}
	if o.adj != "" {
		a := o.adj
		x.Spec.PriceAdjustment = &a
	}
	x.Spec.Capacity = o.capacity
	return x
}

func req(key string, op corev1.NodeSelectorOperator, values ...string) v1alpha1.NodeSelectorRequirement {
	return v1alpha1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

func objects(os ...ov) []*v1alpha1.NodeOverlay {
	var out []*v1alpha1.NodeOverlay
	for _, o := range os {
		out = append(out, o.object())
	}
	return out
}

// price returns the price of a type's offering of a capacity type in a zone.
func price(t *testing.T, its []*catalog.InstanceType, name, ct, zone string) float64 {
	t.Helper()
	for _, it := range its {
		if it.Name != name {
			continue
		}
		for _, o := range it.Offerings {
			if o.CapacityType == ct && o.Zone == zone {
				return o.Price
			}
		}
	}
	t.Fatalf("no %s %s offering of %s", ct, zone, name)
	return 0
}

const (
	od   = apisv1.CapacityTypeOnDemand
	spot = apisv1.CapacityTypeSpot
	zA   = "us-east-1a"
	zB   = "us-east-1b"
)

func TestEvaluate(t *testing.T) {
	base := types(t, "m5.large", "c5.large")
	orig := func(name, ct, zone string) float64 { return price(t, base, name, ct, zone) }
	isType := func(n string) v1alpha1.NodeSelectorRequirement {
		return req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, n)
	}
	type want struct {
		name, ct, zone string
		price          float64
	}
	cases := []struct {
		name      string
		overlays  []ov
		pools     []overlay.Pool
		in        string // the pool applied
		prices    []want
		invalid   []string
		conflicts []string
	}{
		{
			name:     "a fixed price replaces every offering's price of the types it selects",
			overlays: []ov{{name: "a", reqs: []v1alpha1.NodeSelectorRequirement{isType("m5.large")}, price: "0.05"}},
			prices: []want{{"m5.large", od, zA, 0.05}, {"m5.large", spot, zB, 0.05},
				{"c5.large", od, zA, orig("c5.large", od, zA)}},
		},
		{
			name:     "a percentage applies to the offerings of the capacity type selected",
			overlays: []ov{{name: "a", reqs: []v1alpha1.NodeSelectorRequirement{req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, spot)}, adj: "+50%"}},
			prices: []want{{"m5.large", spot, zA, orig("m5.large", spot, zA) * 1.5}, {"m5.large", od, zA, orig("m5.large", od, zA)},
				{"c5.large", spot, zB, orig("c5.large", spot, zB) * 1.5}},
		},
		{
			name:     "an amount is added, and a price never goes below zero",
			overlays: []ov{{name: "a", reqs: []v1alpha1.NodeSelectorRequirement{isType("m5.large")}, adj: "-5"}, {name: "b", reqs: []v1alpha1.NodeSelectorRequirement{isType("c5.large")}, adj: "+0.01"}},
			prices:   []want{{"m5.large", od, zA, 0}, {"c5.large", od, zA, orig("c5.large", od, zA) + 0.01}},
		},
		{
			name: "the heavier overlay sets the price; the lighter one still prices what the heavier does not select",
			overlays: []ov{
				{name: "light", weight: 1, adj: "-10%"},
				{name: "heavy", weight: 50, reqs: []v1alpha1.NodeSelectorRequirement{req(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zA)}, price: "1"},
			},
			prices: []want{{"m5.large", od, zA, 1}, {"m5.large", od, zB, orig("m5.large", od, zB) * 0.9}},
		},
		{
			name: "two overlays of one weight on one offering conflict; the later name is applied, the earlier is not",
			overlays: []ov{
				{name: "alpha", weight: 5, reqs: []v1alpha1.NodeSelectorRequirement{isType("m5.large")}, price: "2"},
				{name: "beta", weight: 5, reqs: []v1alpha1.NodeSelectorRequirement{isType("m5.large"), req(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zB)}, price: "3"},
			},
			prices:    []want{{"m5.large", od, zB, 3}, {"m5.large", od, zA, orig("m5.large", od, zA)}},
			conflicts: []string{"alpha"},
		},
		{
			name: "two overlays of one weight on different offerings do not conflict",
			overlays: []ov{
				{name: "alpha", weight: 5, reqs: []v1alpha1.NodeSelectorRequirement{req(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zA)}, price: "2"},
				{name: "beta", weight: 5, reqs: []v1alpha1.NodeSelectorRequirement{req(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zB)}, price: "3"},
			},
			prices: []want{{"m5.large", od, zA, 2}, {"c5.large", spot, zB, 3}},
		},
		{
			name: "a conflict in one nodepool keeps the overlay out of every nodepool",
			overlays: []ov{
				{name: "alpha", weight: 5, price: "2"},
				{name: "beta", weight: 5, reqs: []v1alpha1.NodeSelectorRequirement{req(apisv1.NodePoolLabelKey, corev1.NodeSelectorOpIn, "gpu")}, price: "3"},
			},
			pools:     []overlay.Pool{pool("default", nil, base), pool("gpu", nil, base)},
			prices:    []want{{"m5.large", od, zA, orig("m5.large", od, zA)}},
			conflicts: []string{"alpha"},
		},
		{
			name:     "the nodepool's template labels are node labels",
			overlays: []ov{{name: "a", reqs: []v1alpha1.NodeSelectorRequirement{req("team", corev1.NodeSelectorOpIn, "ml")}, price: "0.5"}},
			pools:    []overlay.Pool{pool("default", map[string]string{"team": "web"}, base), pool("ml", map[string]string{"team": "ml"}, base)},
			in:       "ml",
			prices:   []want{{"m5.large", od, zA, 0.5}},
		},
		{
			name:     "an overlay selecting another nodepool leaves this one alone",
			overlays: []ov{{name: "a", reqs: []v1alpha1.NodeSelectorRequirement{req(apisv1.NodePoolLabelKey, corev1.NodeSelectorOpIn, "other")}, price: "0.5"}},
			pools:    []overlay.Pool{pool("default", nil, base), pool("other", nil, base)},
			prices:   []want{{"m5.large", od, zA, orig("m5.large", od, zA)}},
		},
		{
			name:     "numeric requirements read the type's labels",
			overlays: []ov{{name: "a", reqs: []v1alpha1.NodeSelectorRequirement{req("karpenter.k8s.aws/instance-cpu", corev1.NodeSelectorOpGt, "1")}, price: "9"}},
			prices:   []want{{"m5.large", od, zA, 9}, {"c5.large", od, zA, 9}},
		},
		{
			name: "invalid overlays are reported and applied nowhere",
			overlays: []ov{
				{name: "word", price: "cheap"},
				{name: "both", price: "1", adj: "+1"},
				{name: "cpu", capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}},
				{name: "pct", adj: "-150%"},
				{name: "op", reqs: []v1alpha1.NodeSelectorRequirement{req("a", "Near", "x")}, price: "1"},
				{name: "notin", reqs: []v1alpha1.NodeSelectorRequirement{req("a", corev1.NodeSelectorOpNotIn)}, price: "1"},
				{name: "huge", price: "1" + strings.Repeat("0", 400)},
			},
			prices:  []want{{"m5.large", od, zA, orig("m5.large", od, zA)}},
			invalid: []string{"both", "cpu", "huge", "notin", "op", "pct", "word"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pools := tc.pools
			if pools == nil {
				pools = []overlay.Pool{pool("default", nil, base)}
			}
			in := tc.in
			if in == "" {
				in = pools[0].NodePool.Name
			}
			before := snapshotPrices(base)
			e := overlay.Evaluate(objects(tc.overlays...), pools)
			var got []*catalog.InstanceType
			for _, p := range pools {
				if p.NodePool.Name == in {
					var err error
					if got, err = e.Apply(in, p.Types); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, w := range tc.prices {
				if p := price(t, got, w.name, w.ct, w.zone); !near(p, w.price) {
					t.Errorf("%s %s %s: price %g, want %g", w.name, w.ct, w.zone, p, w.price)
				}
			}
			if !slices.Equal(before, snapshotPrices(base)) {
				t.Error("Apply modified the instance types it was given")
			}
			if got := sortedKeys(e.Invalid); !slices.Equal(got, tc.invalid) {
				t.Errorf("invalid %v, want %v (%v)", got, tc.invalid, e.Invalid)
			}
			if got := sortedKeys(e.Conflicts); !slices.Equal(got, tc.conflicts) {
				t.Errorf("conflicts %v, want %v", got, tc.conflicts)
			}
			for name, why := range e.Conflicts {
				if !strings.Contains(why, "conflicts with nodeoverlay") {
					t.Errorf("conflict of %s does not say with whom: %q", name, why)
				}
			}
		})
	}
}

func TestCapacity(t *testing.T) {
	base := types(t, "m5.large", "c5.large")
	fuse := corev1.ResourceName("smarter-devices/fuse")
	e := overlay.Evaluate(objects(
		ov{name: "a-fuse", weight: 10, reqs: []v1alpha1.NodeSelectorRequirement{req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.large")}, capacity: corev1.ResourceList{fuse: resource.MustParse("20")}},
		ov{name: "b-fuse", weight: 10, reqs: []v1alpha1.NodeSelectorRequirement{req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.large")}, capacity: corev1.ResourceList{fuse: resource.MustParse("1")}},
		ov{name: "low", weight: 1, capacity: corev1.ResourceList{fuse: resource.MustParse("5")}},
	), []overlay.Pool{pool("default", nil, base)})
	got, err := e.Apply("default", base)
	if err != nil {
		t.Fatal(err)
	}
	slot, ok := scheduling.ResourceIndex(fuse)
	if !ok {
		t.Fatal("the overlay's resource has no slot")
	}
	// Of two overlays of one weight, the later name is merged first (as in Karpenter); the
	// lighter overlay does not override it.
	if got[0].Capacity[slot] != 1 || got[0].Allocatable()[slot] != 1 {
		t.Errorf("m5.large: capacity %d, allocatable %d of %s; want 1 (b-fuse)", got[0].Capacity[slot], got[0].Allocatable()[slot], fuse)
	}
	if got[1].Capacity[slot] != 5 {
		t.Errorf("c5.large: capacity %d of %s; want 5", got[1].Capacity[slot], fuse)
	}
	if base[0].Capacity[slot] != 0 {
		t.Error("Apply modified the instance type it was given")
	}
	if _, ok := e.Conflicts["a-fuse"]; !ok || len(e.Conflicts) != 1 {
		t.Errorf("an overlay of the same weight on the same resource does not conflict: %v", e.Conflicts)
	}
}

func TestHugepagesComeOutOfMemory(t *testing.T) {
	base := types(t, "m5.large")
	huge := corev1.ResourceName("hugepages-2Mi")
	e := overlay.Evaluate(objects(ov{name: "huge", capacity: corev1.ResourceList{huge: resource.MustParse("1Gi")}}), []overlay.Pool{pool("default", nil, base)})
	got, err := e.Apply("default", base)
	if err != nil {
		t.Fatal(err)
	}
	slot, _ := scheduling.ResourceIndex(huge)
	if got[0].Capacity[slot] != 1<<30 {
		t.Errorf("hugepages capacity %d, want 1Gi", got[0].Capacity[slot])
	}
	if d := base[0].Allocatable()[scheduling.Memory] - got[0].Allocatable()[scheduling.Memory]; d != 1<<30 {
		t.Errorf("allocatable memory went down by %d, want 1Gi", d)
	}
}

// Apply returns the same copy for the same type, and a fresh one once the type's offerings
// change in place (a provider updating availability).
func TestApplyReusesCopiesUntilTheTypeChanges(t *testing.T) {
	orig := types(t, "m5.large")[0]
	it := *orig
	it.Offerings = slices.Clone(orig.Offerings)
	base := []*catalog.InstanceType{&it}
	e := overlay.Evaluate(objects(ov{name: "a", adj: "+1"}), []overlay.Pool{pool("default", nil, base)})
	a, _ := e.Apply("default", base)
	b, _ := e.Apply("default", base)
	if a[0] != b[0] {
		t.Error("two Applies of the same type made two copies")
	}
	it.Offerings[0].Available = !it.Offerings[0].Available
	c, _ := e.Apply("default", base)
	if c[0] == a[0] || c[0].Offerings[0].Available != it.Offerings[0].Available {
		t.Error("an offering changed in place, yet Apply returned the old copy")
	}
}

func TestApplyToAPoolNotEvaluated(t *testing.T) {
	base := types(t, "m5.large")
	e := overlay.Evaluate(nil, []overlay.Pool{pool("default", nil, base)})
	if got, err := e.Apply("default", base); err != nil || len(got) != 1 || got[0] != base[0] {
		t.Errorf("no overlay: got %v, %v; want the types as given", got, err)
	}
	var nee *overlay.NotEvaluatedError
	if _, err := e.Apply("new", base); !errors.As(err, &nee) || nee.NodePool != "new" {
		t.Errorf("a pool not evaluated: error %v, want a NotEvaluatedError naming it", err)
	}
}

// The evaluation does not depend on the order overlays are listed in, never leaves a price
// negative or not finite, and never modifies the types it is given.
func TestEvaluateProperties(t *testing.T) {
	base := types(t, "m5.large", "c5.large", "g5.xlarge", "r5.large")
	keys := []string{corev1.LabelInstanceTypeStable, corev1.LabelTopologyZone, apisv1.CapacityTypeLabelKey, apisv1.NodePoolLabelKey}
	values := map[string][]string{
		corev1.LabelInstanceTypeStable: {"m5.large", "c5.large", "g5.xlarge", "r5.large"},
		corev1.LabelTopologyZone:       {zA, zB},
		apisv1.CapacityTypeLabelKey:    {od, spot},
		apisv1.NodePoolLabelKey:        {"a", "b"},
	}
	pools := []overlay.Pool{pool("a", nil, base), pool("b", nil, base)}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 6).Draw(t, "overlays")
		var os []*v1alpha1.NodeOverlay
		for i := range n {
			o := ov{name: string(rune('a' + i)), weight: int32(rapid.IntRange(0, 3).Draw(t, "weight"))}
			for range rapid.IntRange(0, 2).Draw(t, "reqs") {
				k := rapid.SampledFrom(keys).Draw(t, "key")
				op := rapid.SampledFrom([]corev1.NodeSelectorOperator{corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn}).Draw(t, "op")
				o.reqs = append(o.reqs, req(k, op, rapid.SampledFrom(values[k]).Draw(t, "value")))
			}
			switch rapid.IntRange(0, 3).Draw(t, "kind") {
			case 0:
				o.price = rapid.SampledFrom([]string{"0", "0.1", "3.5"}).Draw(t, "price")
			case 1:
				o.adj = rapid.SampledFrom([]string{"-100%", "-15%", "+10%", "-0.05", "+2"}).Draw(t, "adj")
			case 2:
				o.capacity = corev1.ResourceList{"example.com/dongle": resource.MustParse(rapid.SampledFrom([]string{"1", "4"}).Draw(t, "cap"))}
			}
			os = append(os, o.object())
		}
		before := snapshotPrices(base)
		e1 := overlay.Evaluate(os, pools)
		rev := slices.Clone(os)
		slices.Reverse(rev)
		e2 := overlay.Evaluate(rev, pools)
		if !slices.Equal(sortedKeys(e1.Conflicts), sortedKeys(e2.Conflicts)) {
			t.Fatalf("conflicts depend on the order: %v vs %v", e1.Conflicts, e2.Conflicts)
		}
		for _, p := range []string{"a", "b"} {
			g1, err1 := e1.Apply(p, base)
			g2, err2 := e2.Apply(p, base)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			p1, p2 := snapshotPrices(g1), snapshotPrices(g2)
			if !slices.Equal(p1, p2) {
				t.Fatalf("pool %s: prices depend on the order of the overlays", p)
			}
			for _, x := range p1 {
				if x < 0 || x != x || x > 1e9 {
					t.Fatalf("pool %s: price %g", p, x)
				}
			}
		}
		if !slices.Equal(before, snapshotPrices(base)) {
			t.Fatal("Apply modified the instance types it was given")
		}
	})
}

func snapshotPrices(its []*catalog.InstanceType) []float64 {
	var out []float64
	for _, it := range its {
		for _, o := range it.Offerings {
			out = append(out, o.Price)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func near(a, b float64) bool {
	d := a - b
	return d < 1e-9 && d > -1e-9
}

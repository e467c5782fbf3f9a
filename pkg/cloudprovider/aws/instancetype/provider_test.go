package instancetype

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/aws/smithy-go"
	"k8s.io/apimachinery/pkg/api/resource"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

func i32(v int32) *int32 { return &v }

const (
	mi = catalog.MiB
	gi = catalog.GiB
)

// m5.large: 2 vCPUs, 8192 MiB, 3 ENIs × 10 addresses (29 pods); m5d.large adds 75 GB of NVMe.
// Its VM overhead is ⌈8192 × 7.5%⌉ = 615 MiB, its default kube-reserved 70m CPU,
// (11 × 29 + 255) MiB memory and 1Gi storage.
func TestPodsAndOverheadFollowTheKubeletSettings(t *testing.T) {
	f := newFixture(t, nil, Options{})
	type want struct {
		pods, storage                 int64
		kubeCPU, kubeMem, kubeStorage int64
		sysCPU, sysMem                int64
		evictMem, evictStorage        int64
	}
	def := want{pods: 29, storage: 20 * gi, kubeCPU: 70, kubeMem: (11*29 + 255) * mi, kubeStorage: gi, evictMem: 100 * mi, evictStorage: 2 * gi}
	with := func(edit func(*want)) want { w := def; edit(&w); return w }
	cases := []struct {
		name    string
		typ     string
		family  string
		kubelet *awsv1.KubeletConfiguration
		edit    func(*awsv1.EC2NodeClass)
		want    want
	}{
		{name: "defaults are the VPC CNI limit", typ: "m5.large", want: def},
		{name: "maxPods replaces the limit; AL2023 keeps ENI-based kube-reserved", typ: "m5.large", kubelet: &awsv1.KubeletConfiguration{MaxPods: i32(110)},
			want: with(func(w *want) { w.pods = 110 })},
		{name: "maxPods on Bottlerocket also sizes kube-reserved", typ: "m5.large", family: awsv1.AMIFamilyBottlerocket, kubelet: &awsv1.KubeletConfiguration{MaxPods: i32(110)},
			want: with(func(w *want) { w.pods, w.kubeMem = 110, (11*110+255)*mi })},
		{name: "podsPerCore caps at per-vCPU pods", typ: "m5.large", kubelet: &awsv1.KubeletConfiguration{PodsPerCore: i32(4)},
			want: with(func(w *want) { w.pods = 8 })},
		{name: "podsPerCore never exceeds maxPods", typ: "m5.large", kubelet: &awsv1.KubeletConfiguration{PodsPerCore: i32(4), MaxPods: i32(5)},
			want: with(func(w *want) { w.pods = 5 })},
		{name: "podsPerCore above the ENI limit changes nothing", typ: "m5.large", kubelet: &awsv1.KubeletConfiguration{PodsPerCore: i32(100)}, want: def},
		{name: "Bottlerocket ignores podsPerCore", typ: "m5.large", family: awsv1.AMIFamilyBottlerocket, kubelet: &awsv1.KubeletConfiguration{PodsPerCore: i32(4)}, want: def},
		{name: "kubeReserved replaces the keys it sets", typ: "m5.large", kubelet: &awsv1.KubeletConfiguration{KubeReserved: map[string]string{"cpu": "200m", "memory": "1Gi", "pid": "100"}},
			want: with(func(w *want) { w.kubeCPU, w.kubeMem = 200, gi })},
		{name: "systemReserved is held back", typ: "m5.large", kubelet: &awsv1.KubeletConfiguration{SystemReserved: map[string]string{"cpu": "100m", "memory": "200Mi"}},
			want: with(func(w *want) { w.sysCPU, w.sysMem = 100, 200*mi })},
		{name: "evictionHard quantities and a volume percentage", typ: "m5.large", kubelet: &awsv1.KubeletConfiguration{EvictionHard: map[string]string{"memory.available": "500Mi", "nodefs.available": "15%"}},
			want: with(func(w *want) { w.evictMem, w.evictStorage = 500*mi, int64(math.Ceil(0.15*float64(20*gi))) })},
		{name: "evictionHard memory percentage is of the memory the OS sees", typ: "m5.large", kubelet: &awsv1.KubeletConfiguration{EvictionHard: map[string]string{"memory.available": "5%", "nodefs.available": "1Gi"}},
			want: with(func(w *want) { w.evictMem, w.evictStorage = int64(math.Ceil(float64((8192-615)*mi)*0.05)), gi })},
		{name: "100% disables a threshold", typ: "m5.large", kubelet: &awsv1.KubeletConfiguration{EvictionHard: map[string]string{"nodefs.available": "100%"}},
			want: with(func(w *want) { w.evictStorage = 0 })},
		{name: "the root volume sizes ephemeral storage", typ: "m5.large", edit: func(nc *awsv1.EC2NodeClass) {
			nc.Spec.BlockDeviceMappings = []*awsv1.BlockDeviceMapping{{DeviceName: strp("/dev/xvda"), EBS: &awsv1.BlockDevice{VolumeSize: qty("100Gi")}}}
		}, want: with(func(w *want) { w.storage, w.evictStorage = 100*gi, 10*gi })},
		{name: "a mapping marked rootVolume wins", typ: "m5.large", family: awsv1.AMIFamilyBottlerocket, edit: func(nc *awsv1.EC2NodeClass) {
			nc.Spec.BlockDeviceMappings = []*awsv1.BlockDeviceMapping{
				{DeviceName: strp("/dev/xvdb"), EBS: &awsv1.BlockDevice{VolumeSize: qty("50Gi")}},
				{DeviceName: strp("/dev/xvdc"), EBS: &awsv1.BlockDevice{VolumeSize: qty("80Gi")}, RootVolume: true},
			}
		}, want: with(func(w *want) { w.storage, w.evictStorage = 80*gi, 8*gi })},
		{name: "RAID0 instance store is the ephemeral storage", typ: "m5d.large", edit: func(nc *awsv1.EC2NodeClass) {
			p := awsv1.InstanceStorePolicyRAID0
			nc.Spec.InstanceStorePolicy = &p
		}, want: with(func(w *want) { w.storage, w.evictStorage = 75_000_000_000, 7_500_000_000 })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nc := f.nodeClass("kubelet")
			nc.Spec.Kubelet = c.kubelet
			if c.family != "" {
				nc.Spec.AMIFamily = &c.family
			}
			if c.edit != nil {
				c.edit(nc)
			}
			it := find(t, f.list(t, nc), c.typ)
			o := it.Overhead
			got := want{
				pods: it.Capacity[scheduling.Pods], storage: it.Capacity[scheduling.EphemeralStorage],
				kubeCPU: o.KubeReserved[scheduling.CPU], kubeMem: o.KubeReserved[scheduling.Memory], kubeStorage: o.KubeReserved[scheduling.EphemeralStorage],
				sysCPU: o.SystemReserved[scheduling.CPU], sysMem: o.SystemReserved[scheduling.Memory],
				evictMem: o.EvictionThreshold[scheduling.Memory], evictStorage: o.EvictionThreshold[scheduling.EphemeralStorage],
			}
			if got != c.want {
				t.Fatalf("%s:\n got %+v\nwant %+v", c.typ, got, c.want)
			}
			if vm := o.VM[scheduling.Memory]; vm != 615*mi {
				t.Fatalf("VM overhead %d MiB, want 615", vm/mi)
			}
		})
	}
}

func TestBadKubeletSettingsAreErrorsNamingTheNodeClass(t *testing.T) {
	f := newFixture(t, nil, Options{})
	for name, k := range map[string]*awsv1.KubeletConfiguration{
		"kubeReserved":     {KubeReserved: map[string]string{"memory": "lots"}},
		"systemReserved":   {SystemReserved: map[string]string{"gpu": "1"}},
		"evictionHard":     {EvictionHard: map[string]string{"memory.available": "150%"}},
		"negative maxPods": {MaxPods: i32(-1)},
	} {
		nc := f.nodeClass("broken")
		nc.Spec.Kubelet = k
		_, err := f.p.List(ctx, nc)
		if err == nil || !strings.Contains(err.Error(), "EC2NodeClass broken") {
			t.Errorf("%s: error %v does not name the NodeClass", name, err)
		}
	}
	nc := f.nodeClass("windows")
	w := awsv1.AMIFamilyWindows2022
	nc.Spec.AMIFamily = &w
	if _, err := f.p.List(ctx, nc); err == nil || !strings.Contains(err.Error(), "Windows2022") {
		t.Errorf("Windows: %v", err)
	}
	empty := f.nodeClass("no-subnets")
	empty.Status.Subnets = nil
	if _, err := f.p.List(ctx, empty); err == nil || !strings.Contains(err.Error(), "no resolved subnets") {
		t.Errorf("no subnets: %v", err)
	}
}

func TestUnavailableOfferingsAreMarkedOnEveryList(t *testing.T) {
	u := cloudprovider.NewUnavailableOfferings(nil)
	f := newFixture(t, nil, Options{})
	u = cloudprovider.NewUnavailableOfferings(f.clock)
	f.p.opts.Unavailable = u
	nc := f.nodeClass("ice")
	if m5 := find(t, f.list(t, nc), "m5.large"); !allAvailable(m5) {
		t.Fatal("m5.large starts with an unavailable offering")
	}
	u.MarkUnavailable(cloudprovider.Offering{InstanceType: "m5.large", Zone: "us-east-1c", CapacityType: apisv1.CapacityTypeSpot}, "InsufficientInstanceCapacity", 3*time.Minute)
	its := f.list(t, nc)
	m5 := find(t, its, "m5.large")
	for _, o := range m5.Offerings {
		marked := o.Zone == "us-east-1c" && o.CapacityType == apisv1.CapacityTypeSpot
		if o.Available == marked {
			t.Errorf("m5.large %s %s available %v", o.Zone, o.CapacityType, o.Available)
		}
	}
	if !allAvailable(find(t, its, "m5.xlarge")) {
		t.Error("m5.xlarge lost an offering")
	}
	f.clock.Step(3 * time.Minute)
	if !allAvailable(find(t, f.list(t, nc), "m5.large")) {
		t.Fatal("the mark outlived its TTL (the cached types were modified)")
	}
}

func allAvailable(it *catalog.InstanceType) bool {
	for _, o := range it.Offerings {
		if !o.Available {
			return false
		}
	}
	return len(it.Offerings) > 0
}

// The API results are shared by every NodeClass of the region and fetched again only after
// the TTL; a NodeClass seen before costs no call at all.
func TestDescribeResultsAreCachedForTheTTLAndShared(t *testing.T) {
	f := newFixture(t, nil, Options{})
	calls := func(do func()) int64 {
		before := f.Calls()
		do()
		return f.Calls() - before
	}
	a, b, c := f.nodeClass("a"), f.nodeClass("b"), f.nodeClass("c", "us-east-1a")
	cold := calls(func() { f.list(t, a) })
	// The types in pages of 100, their offerings (one per type and zone) in pages of 1,000.
	offerings := 0
	for _, it := range f.cat.Types {
		zones := map[string]bool{}
		for _, o := range it.Offerings {
			zones[o.Zone] = true
		}
		offerings += len(zones)
	}
	if want := int64((len(f.cat.Types)+99)/100 + (offerings+999)/1000); cold != want {
		t.Fatalf("a cold List made %d calls, want %d (%d types, %d offerings)", cold, want, len(f.cat.Types), offerings)
	}
	first := f.list(t, a)
	if n := calls(func() { f.list(t, a); f.list(t, b); f.list(t, c) }); n != 0 {
		t.Fatalf("warm Lists made %d calls", n)
	}
	if again := f.list(t, b); again[0] != first[0] {
		t.Fatal("a NodeClass with the same settings rebuilt its types")
	}
	f.clock.Step(DefaultTTL - time.Second)
	if n := calls(func() { f.list(t, a) }); n != 0 {
		t.Fatalf("%d calls before the TTL", n)
	}
	f.clock.Step(time.Second)
	if n := calls(func() { f.list(t, a); f.list(t, c) }); n != cold {
		t.Fatalf("%d calls after the TTL, want %d", n, cold)
	}
}

func TestSpotPriceChangesReachTheListedOfferings(t *testing.T) {
	f := newFixture(t, nil, Options{})
	nc := f.nodeClass("spot")
	spot := func() float64 {
		for _, o := range find(t, f.list(t, nc), "c5.xlarge").Offerings {
			if o.Zone == "us-east-1b" && o.CapacityType == apisv1.CapacityTypeSpot {
				return o.Price
			}
		}
		t.Fatal("no spot offering of c5.xlarge in us-east-1b")
		return 0
	}
	before := spot()
	f.Server.SetSpotPrice("c5.xlarge", "us-east-1b", 0.0042)
	if err := f.prices.RefreshSpot(ctx); err != nil {
		t.Fatal(err)
	}
	if got := spot(); got != 0.0042 || got == before {
		t.Fatalf("spot price %g after the refresh, want 0.0042", got)
	}
}

// With EC2 down and nothing cached, List serves the embedded catalog in the NodeClass's zones
// and says so once; when EC2 is back it serves the API's types again.
func TestEC2DownServesTheEmbeddedCatalogOnceLoggedAndRecovers(t *testing.T) {
	f := newFixture(t, nil, Options{})
	nc := f.nodeClass("fallback", "us-east-1a", "us-east-1c")
	want, err := catalog.Load("us-east-1", catalog.WithZones("us-east-1a", "us-east-1c"))
	if err != nil {
		t.Fatal(err)
	}
	f.Down()
	got := f.list(t, nc)
	if diffs := sameTypes(got, want.Types); len(diffs) > 0 {
		t.Fatalf("fallback differs from the embedded catalog:\n%s", strings.Join(diffs, "\n"))
	}
	f.clock.Step(DefaultRetryInterval)
	f.list(t, nc)
	if n := f.log.Count("serving the embedded catalog"); n != 1 {
		t.Fatalf("%d log lines about the fallback after two Lists, want 1", n)
	}
	f.Up()
	f.list(t, nc) // within the retry interval: no call yet
	if n := f.log.Count("reachable again"); n != 0 {
		t.Fatal("tried EC2 before the retry interval")
	}
	f.clock.Step(DefaultRetryInterval)
	got = f.list(t, nc)
	if n := f.log.Count("reachable again"); n != 1 {
		t.Fatalf("%d log lines about recovery", n)
	}
	if diffs := sameTypes(got, want.Types); len(diffs) > 0 {
		t.Fatalf("after recovery:\n%s", strings.Join(diffs, "\n"))
	}
	// Down again with results cached: they are served past the TTL, logged once.
	f.Down()
	f.clock.Step(DefaultTTL)
	if len(f.list(t, nc)) != len(want.Types) {
		t.Fatal("stale results not served")
	}
	if n := f.log.Count("serving the instance types it last described"); n != 1 {
		t.Fatalf("%d log lines about serving stale results", n)
	}
}

func TestAccessDeniedIsReturnedNotMasked(t *testing.T) {
	f := newFixture(t, nil, Options{})
	f.Server.InjectFault(awsapi.Fault{Service: awsapi.ServiceEC2, Action: "DescribeInstanceTypes", Kind: awsapi.FaultAccessDenied})
	_, err := f.p.List(ctx, f.nodeClass("denied"))
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "UnauthorizedOperation" {
		t.Fatalf("List: %v, want UnauthorizedOperation", err)
	}
	if n := f.log.Count("cannot be reached"); n != 0 {
		t.Fatal("a refusal was taken for an outage")
	}
	// Throttling past the SDK's retries is an outage: the embedded catalog is served.
	f.Server.ClearFaults()
	f.Server.InjectFault(awsapi.Fault{Service: awsapi.ServiceEC2, Action: "DescribeInstanceTypes", Kind: awsapi.FaultThrottle})
	if _, err := f.p.List(ctx, f.nodeClass("throttled")); err != nil {
		t.Fatalf("throttled: %v", err)
	}
	if n := f.log.Count("serving the embedded catalog"); n != 1 {
		t.Fatalf("throttling: %d fallback log lines", n)
	}
}

func strp(s string) *string { return &s }

func qty(s string) *resource.Quantity { q := resource.MustParse(s); return &q }

// --vm-memory-overhead-percent reaches the listed types: a larger hypervisor share leaves less
// allocatable memory, and nothing else changes.
func TestVMMemoryOverheadPercentChangesAllocatableMemory(t *testing.T) {
	def := newFixture(t, nil, Options{})
	more := newFixture(t, nil, Options{VMMemoryOverheadPercent: 0.15})
	a := find(t, def.list(t, def.nodeClass("default")), "m5.large")
	b := find(t, more.list(t, more.nodeClass("more")), "m5.large")
	am, bm := a.Allocatable()[scheduling.Memory], b.Allocatable()[scheduling.Memory]
	if bm >= am {
		t.Fatalf("allocatable memory %d with 15%% VM overhead, %d with the default 7.5%%: want less", bm, am)
	}
	if a.Allocatable()[scheduling.CPU] != b.Allocatable()[scheduling.CPU] || a.Capacity[scheduling.Memory] != b.Capacity[scheduling.Memory] {
		t.Fatal("the VM memory overhead changed more than allocatable memory")
	}
}

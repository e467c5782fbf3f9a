package solver

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// genTypes is a small catalog: types of 1, 2, 4, 8 and 16 vCPU in zones a–c, one of them with a
// GPU, spot and on-demand.
func genTypes() []*catalog.InstanceType {
	var out []*catalog.InstanceType
	for i, vcpu := range []int64{1, 2, 4, 8, 16} {
		for _, gpu := range []int64{0, 1} {
			if gpu == 1 && vcpu < 4 {
				continue
			}
			name := fmt.Sprintf("t%d-g%d", vcpu, gpu)
			price := 0.05*float64(vcpu) + 0.9*float64(gpu) + 0.001*float64(i)
			var offers []catalog.Offering
			for _, z := range []string{"a", "b", "c"} {
				offers = append(offers,
					catalog.Offering{Zone: "zone-" + z, CapacityType: apisv1.CapacityTypeOnDemand, Price: price, Available: true},
					catalog.Offering{Zone: "zone-" + z, CapacityType: apisv1.CapacityTypeSpot, Price: price * 0.4, Available: z != "c"})
			}
			var cap scheduling.Resources
			cap[scheduling.CPU] = vcpu * 1000
			cap[scheduling.Memory] = vcpu * 4 << 30
			cap[scheduling.Pods] = 8 * vcpu
			cap[scheduling.NvidiaGPU] = gpu
			gpuReq := scheduling.DoesNotExist(apisv1.LabelInstanceGPUCount)
			if gpu > 0 {
				gpuReq = scheduling.In(apisv1.LabelInstanceGPUCount, "1")
			}
			reqs := scheduling.NewRequirements(
				scheduling.In(apisv1.LabelInstanceType, name),
				scheduling.In(apisv1.LabelInstanceCPU, fmt.Sprint(vcpu)),
				gpuReq,
				scheduling.In(apisv1.LabelZone, "zone-a", "zone-b", "zone-c"),
				scheduling.In(apisv1.CapacityTypeLabelKey, apisv1.CapacityTypeSpot, apisv1.CapacityTypeOnDemand),
			)
			var kube scheduling.Resources
			kube[scheduling.CPU] = 50
			out = append(out, &catalog.InstanceType{Name: name, Requirements: reqs, Capacity: cap, Overhead: catalog.Overhead{KubeReserved: kube}, Offerings: offers})
		}
	}
	return out
}

var genZones = []string{"zone-a", "zone-b", "zone-c"}

// extremeCPU and extremeMemory are quantities at and beyond what an int64 counts, as
// millicores and as bytes, alone or once summed.
var (
	extremeCPU    = []string{"99999999999999999999999", "1e16", "9223372036854775", "4611686018427387", "1e15"}
	extremeMemory = []string{"6Ei", "8Ei", "1e30", "4611686018427387904", "1e18"}
)

func drawPod(t *rapid.T, i int) *corev1.Pod {
	cpu := rapid.SampledFrom([]string{"100m", "500m", "1", "2", "3", "5"}).Draw(t, "cpu")
	mem := rapid.SampledFrom([]string{"128Mi", "1Gi", "3Gi", "8Gi"}).Draw(t, "mem")
	extreme := rapid.IntRange(0, 15).Draw(t, "extreme")
	switch extreme {
	case 1:
		cpu = rapid.SampledFrom(extremeCPU).Draw(t, "hugeCPU")
	case 2:
		mem = rapid.SampledFrom(extremeMemory).Draw(t, "hugeMem")
	}
	app := rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "app")
	p := pod(cpu, mem, named(fmt.Sprintf("p%d", i)), labelled("app", app))
	sel := map[string]string{"app": app}
	switch rapid.IntRange(0, 11).Draw(t, "kind") {
	case 1:
		spread(apisv1.LabelZone, int32(rapid.IntRange(1, 2).Draw(t, "skew")), corev1.DoNotSchedule, sel)(p)
	case 2:
		spread(apisv1.LabelHostname, 1, corev1.DoNotSchedule, sel)(p)
	case 3:
		antiAffinity(apisv1.LabelHostname, sel)(p)
	case 4:
		podAffinity(apisv1.LabelZone, sel)(p)
	case 5:
		nodeSelector(apisv1.LabelZone, rapid.SampledFrom(genZones).Draw(t, "zone"))(p)
	case 6:
		gpus(1)(p)
		tolerate("gpu")(p)
	case 7:
		hostPort(int32(rapid.IntRange(80, 81).Draw(t, "port")))(p)
	case 8:
		antiAffinity(apisv1.LabelZone, sel)(p)
	case 9:
		preferredAntiAffinity(apisv1.LabelHostname, 5, sel)(p)
		preferredNode(3, apisv1.LabelZone, rapid.SampledFrom(genZones).Draw(t, "pzone"))(p)
	case 10:
		spread(apisv1.LabelZone, 1, corev1.ScheduleAnyway, sel)(p)
	}
	if extreme == 3 {
		// A second container as large as the first, and an overhead: sums that overflow.
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "twin", Resources: *p.Spec.Containers[0].Resources.DeepCopy()})
		p.Spec.Overhead = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(rapid.SampledFrom(extremeMemory).Draw(t, "overhead"))}
	}
	return p
}

func drawSnapshot(t *rapid.T) *Snapshot {
	its := genTypes()
	snap := &Snapshot{}
	nPools := rapid.IntRange(0, 3).Draw(t, "pools")
	for i := 0; i < nPools; i++ {
		reqs := scheduling.Requirements{}
		if rapid.Bool().Draw(t, "zoned") {
			reqs = reqs.Add(scheduling.In(apisv1.LabelZone, rapid.SliceOfNDistinct(rapid.SampledFrom(genZones), 1, 3, rapid.ID[string]).Draw(t, "zones")...))
		}
		if rapid.Bool().Draw(t, "odOnly") {
			reqs = reqs.Add(scheduling.In(apisv1.CapacityTypeLabelKey, apisv1.CapacityTypeOnDemand))
		}
		np := nodePool(fmt.Sprintf("pool%d", i), its, reqs, func(p *NodePool) {
			p.Weight = int32(rapid.IntRange(0, 2).Draw(t, "weight"))
			if rapid.Bool().Draw(t, "tainted") {
				p.Taints = []corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}}
			}
			if rapid.IntRange(0, 3).Draw(t, "limited") == 0 {
				p.HasLimit[scheduling.CPU] = true
				p.Limits[scheduling.CPU] = int64(rapid.IntRange(4, 40).Draw(t, "cpuLimit")) * 1000
			}
			if rapid.IntRange(0, 3).Draw(t, "nodeLimited") == 0 {
				p.NodeLimit = rapid.IntRange(0, 6).Draw(t, "nodeLimit")
			}
		})
		snap.NodePools = append(snap.NodePools, np)
	}
	nNodes := rapid.IntRange(0, 3).Draw(t, "nodes")
	for i := 0; i < nNodes; i++ {
		it := rapid.SampledFrom(its).Draw(t, "nodeType")
		n := Node{
			Name:        fmt.Sprintf("node-%d", i),
			Labels:      map[string]string{apisv1.LabelZone: rapid.SampledFrom(genZones).Draw(t, "nodeZone"), apisv1.LabelHostname: fmt.Sprintf("node-%d", i)},
			Allocatable: it.Allocatable(),
			Initialized: rapid.Bool().Draw(t, "init"),
			InFlight:    rapid.IntRange(0, 4).Draw(t, "inflight") == 0,
		}
		for j := rapid.IntRange(0, 2).Draw(t, "running"); j > 0; j-- {
			n.Pods = append(n.Pods, drawPod(t, 1000+10*i+j))
		}
		snap.Nodes = append(snap.Nodes, n)
	}
	if rapid.Bool().Draw(t, "daemonset") {
		ds := pod("200m", "256Mi")
		ds.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
		snap.DaemonSets = []DaemonSet{{Namespace: "kube-system", Name: "agent", Pod: ds}}
	}
	for i := rapid.IntRange(0, 2).Draw(t, "moreDaemonsets"); i > 0; i-- {
		// DaemonSets that overfill some types (or all), bind a host port pods ask for too, or run
		// on one pool only.
		cpu := rapid.SampledFrom([]string{"100m", "1500m", "3", "7", "20", "1e16"}).Draw(t, "dsCPU")
		ds := pod(cpu, rapid.SampledFrom([]string{"", "5Gi", "40Gi"}).Draw(t, "dsMem"))
		if rapid.Bool().Draw(t, "dsPort") {
			hostPort(int32(rapid.IntRange(80, 81).Draw(t, "dsPortNumber")))(ds)
		}
		if nPools > 0 && rapid.Bool().Draw(t, "dsOnePool") {
			nodeSelector(apisv1.NodePoolLabelKey, fmt.Sprintf("pool%d", rapid.IntRange(0, nPools-1).Draw(t, "dsPool")))(ds)
		}
		snap.DaemonSets = append(snap.DaemonSets, DaemonSet{Namespace: "kube-system", Name: fmt.Sprintf("ds%d", i), Pod: ds})
	}
	n := rapid.IntRange(0, 25).Draw(t, "pending")
	for i := 0; i < n; i++ {
		snap.Pods = append(snap.Pods, drawPod(t, i))
	}
	return snap
}

// drawPrepared draws a snapshot and prepares it.
func drawPrepared(t *rapid.T) (*Snapshot, *Prepared) {
	snap := drawSnapshot(t)
	prep, err := Prepare(snap)
	if err != nil {
		t.Fatal(err)
	}
	return snap, prep
}

// drawExclude draws the nodes a solve treats as gone.
func drawExclude(t *rapid.T, snap *Snapshot) []string {
	var exclude []string
	for _, n := range snap.Nodes {
		if rapid.Bool().Draw(t, "exclude") {
			exclude = append(exclude, n.Name)
		}
	}
	return exclude
}

// TestPropertyPlansAreValid: on random snapshots, every plan satisfies every hard constraint
// (Verify), costs at least its lower bound, and is the same when solved again.
func TestPropertyPlansAreValid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		snap := drawSnapshot(t)
		plan, err := Solve(snap, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := Verify(snap, plan); err != nil {
			t.Fatalf("invalid plan: %v\n%s", err, describe(plan))
		}
		if plan.Price < plan.LowerBound-1e-9 {
			t.Fatalf("price %.6f below the proven bound %.6f", plan.Price, plan.LowerBound)
		}
		again, _ := Solve(snap, Options{})
		if again.Price != plan.Price || len(again.Claims) != len(plan.Claims) || len(again.Unschedulable) != len(plan.Unschedulable) {
			t.Fatalf("not deterministic")
		}
	})
}

// FuzzSolve drives the same property from fuzzed bytes (rapid decodes them into a snapshot):
// no panic, no constraint violated, never below the bound.
func FuzzSolve(f *testing.F) {
	f.Fuzz(rapid.MakeFuzz(func(t *rapid.T) {
		snap := drawSnapshot(t)
		plan, err := Solve(snap, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := Verify(snap, plan); err != nil {
			t.Fatalf("invalid plan: %v\n%s", err, describe(plan))
		}
		if plan.Price < plan.LowerBound-1e-9 {
			t.Fatalf("price %.6f below the proven bound %.6f", plan.Price, plan.LowerBound)
		}
	}))
}

// TestPropertyPreparedReuse: solving on one Prepared several times, with nodes excluded, gives
// the same plans as fresh solves, so nothing leaks from one solve into the next.
func TestPropertyPreparedReuse(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		snap, prep := drawPrepared(t)
		for round := 0; round < 3; round++ {
			exclude := drawExclude(t, snap)
			opts := Options{ExcludeNodes: exclude}
			got, err := prep.Solve(snap.Pods, opts)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Solve(snap, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got.Price != want.Price || got.LowerBound != want.LowerBound || len(got.Claims) != len(want.Claims) ||
				len(got.Placements) != len(want.Placements) || len(got.Unschedulable) != len(want.Unschedulable) {
				t.Fatalf("round %d (exclude %v): prepared solve %s differs from a fresh one %s", round, exclude, describe(got), describe(want))
			}
			for i := range got.Placements {
				if got.Placements[i] != want.Placements[i] {
					t.Fatalf("round %d: placement %d differs", round, i)
				}
			}
		}
	})
}

// TestPropertyWithNodes: re-preparing with changed nodes (some gone, some with pods moved onto
// them) solves exactly as preparing the changed snapshot from scratch.
func TestPropertyWithNodes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		snap := drawSnapshot(t)
		prep, err := Prepare(snap)
		if err != nil {
			t.Fatal(err)
		}
		for round := 0; round < 3; round++ {
			next := *snap
			next.Nodes = slices.Clone(snap.Nodes)
			for i := range next.Nodes {
				switch rapid.IntRange(0, 3).Draw(t, "change") {
				case 0:
					next.Nodes[i].MarkedForDeletion = true
				case 1:
					if len(snap.Pods) > 0 {
						p := snap.Pods[rapid.IntRange(0, len(snap.Pods)-1).Draw(t, "pod")]
						next.Nodes[i].Pods = append(slices.Clip(next.Nodes[i].Pods), p)
					}
				}
			}
			if prep, err = prep.WithNodes(&next); err != nil {
				t.Fatal(err)
			}
			got, err := prep.Solve(next.Pods, Options{})
			if err != nil {
				t.Fatal(err)
			}
			want, err := Solve(&next, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Price != want.Price || len(got.Claims) != len(want.Claims) ||
				len(got.Placements) != len(want.Placements) || len(got.Unschedulable) != len(want.Unschedulable) {
				t.Fatalf("round %d: re-prepared solve %s differs from a fresh one %s", round, describe(got), describe(want))
			}
			for i := range got.Placements {
				if got.Placements[i] != want.Placements[i] {
					t.Fatalf("round %d: placement %d differs", round, i)
				}
			}
			snap = &next
		}
	})
}

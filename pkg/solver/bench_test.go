package solver

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// syntheticTypes is the instance-type shape of Karpenter's own scheduling benchmark, so figures
// compare: type i has i+1 vCPU, 2(i+1) GiB, 10(i+1) pods, costs 0.1/vCPU + 0.1/GiB per hour, and
// is offered as spot in zones 1–2 and on demand in zones 1–3. Each reserves 100m CPU and 10 MiB.
func syntheticTypes(n int) []*catalog.InstanceType {
	out := make([]*catalog.InstanceType, n)
	for i := range out {
		vcpu := int64(i + 1)
		price := 0.1*float64(vcpu) + 0.1*float64(2*vcpu)
		name := fmt.Sprintf("synthetic-%d", vcpu)
		var offers []catalog.Offering
		for z := 1; z <= 3; z++ {
			zone := fmt.Sprintf("test-zone-%d", z)
			if z <= 2 {
				offers = append(offers, catalog.Offering{Zone: zone, CapacityType: apisv1.CapacityTypeSpot, Price: price, Available: true})
			}
			offers = append(offers, catalog.Offering{Zone: zone, CapacityType: apisv1.CapacityTypeOnDemand, Price: price, Available: true})
		}
		var capacity scheduling.Resources
		capacity[scheduling.CPU] = vcpu * 1000
		capacity[scheduling.Memory] = 2 * vcpu << 30
		capacity[scheduling.Pods] = 10 * vcpu
		capacity[scheduling.EphemeralStorage] = 20 << 30
		var kube scheduling.Resources
		kube[scheduling.CPU] = 100
		kube[scheduling.Memory] = 10 << 20
		reqs := scheduling.NewRequirements(
			scheduling.In(apisv1.LabelInstanceType, name),
			scheduling.In(apisv1.LabelArch, apisv1.ArchitectureAmd64),
			scheduling.In(apisv1.LabelOS, apisv1.OSLinux),
			scheduling.In(apisv1.LabelZone, "test-zone-1", "test-zone-2", "test-zone-3"),
			scheduling.In(apisv1.CapacityTypeLabelKey, apisv1.CapacityTypeSpot, apisv1.CapacityTypeOnDemand),
		)
		out[i] = &catalog.InstanceType{Name: name, Requirements: reqs, Capacity: capacity, Overhead: catalog.Overhead{KubeReserved: kube}, Offerings: offers}
	}
	return out
}

var (
	benchCPU = []string{"100m", "250m", "500m", "1", "1.5"}
	benchMem = []string{"100Mi", "256Mi", "512Mi", "1Gi", "2Gi", "4Gi"}
	groupVal = []string{"a", "b", "c", "d", "e", "f", "g"}
)

// diversePods returns n pods in fifths, labelled and selecting as in Karpenter's scheduling
// benchmark: unconstrained pods labelled my-label: <a–g>; zonal and hostname topology spreads
// (maxSkew 1, DoNotSchedule) whose pods are labelled my-label with one value drawn at random and
// select my-label with another drawn independently (so most spread pods lie outside their own
// selector, and the generic pods and the other spreads' pods count towards it); zonal
// self-affinity on my-affinity; hostname self-anti-affinity.
func diversePods(n int, seed uint64) []*corev1.Pod {
	r := rand.New(rand.NewPCG(seed, 0))
	out := make([]*corev1.Pod, 0, n)
	draw := func() string { return groupVal[r.IntN(len(groupVal))] }
	for i := 0; i < n; i++ {
		cpu, mem := benchCPU[r.IntN(len(benchCPU))], benchMem[r.IntN(len(benchMem))]
		var opts []podOpt
		switch i * 5 / n {
		case 0:
			opts = append(opts, labelled("my-label", draw()))
		case 1:
			own, sel := draw(), draw()
			opts = append(opts, labelled("my-label", own), spread(apisv1.LabelZone, 1, corev1.DoNotSchedule, map[string]string{"my-label": sel}))
		case 2:
			own, sel := draw(), draw()
			opts = append(opts, labelled("my-label", own), spread(apisv1.LabelHostname, 1, corev1.DoNotSchedule, map[string]string{"my-label": sel}))
		case 3:
			g := draw()
			opts = append(opts, labelled("my-affinity", g), podAffinity(apisv1.LabelZone, map[string]string{"my-affinity": g}))
		default:
			opts = append(opts, labelled("app", "anti"), antiAffinity(apisv1.LabelHostname, map[string]string{"app": "anti"}))
		}
		out = append(out, pod(cpu, mem, opts...))
	}
	return out
}

// benchSolve times what the provisioning loop runs (a solve without the proof of its bound),
// then, untimed, solves once more with the bound for cost/bound.
func benchSolve(b *testing.B, snap *Snapshot) {
	b.ReportAllocs()
	var plan *Plan
	for b.Loop() {
		var err error
		if plan, err = Solve(snap, Options{SkipBound: true}); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := b.Elapsed()
	b.StopTimer()
	proved, err := Solve(snap, Options{})
	if err != nil {
		b.Fatal(err)
	}
	if proved.Price != plan.Price {
		b.Fatalf("the solve with its bound priced %.4f, without %.4f", proved.Price, plan.Price)
	}
	b.ReportMetric(float64(len(snap.Pods))/(elapsed.Seconds()/float64(b.N)), "pods/s")
	b.ReportMetric(float64(len(plan.Claims)), "nodes")
	b.ReportMetric(plan.Price, "$/h")
	if proved.LowerBound > 0 {
		b.ReportMetric(plan.Price/proved.LowerBound, "cost/bound")
	}
	b.ReportMetric(float64(len(plan.Unschedulable)), "unschedulable")
}

func BenchmarkSolveDiverse(b *testing.B) {
	its := syntheticTypes(400)
	for _, n := range []int{1, 50, 100, 500, 1000, 2000, 5000, 10000, 20000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			benchSolve(b, &Snapshot{NodePools: []NodePool{nodePool("default", its, scheduling.Requirements{})}, Pods: diversePods(n, 42)})
		})
	}
}

// BenchmarkSolvePreferences: 4,000 identical pods preferring zone 1 (node affinity, weight 1)
// and preferring not to share a zone (weight 10) or a node (weight 1) with each other.
func BenchmarkSolvePreferences(b *testing.B) {
	its := syntheticTypes(400)
	sel := map[string]string{"app": "prefs"}
	ps := pods(4000, "500m", "512Mi", labelled("app", "prefs"),
		preferredNode(1, apisv1.LabelZone, "test-zone-1"),
		preferredAntiAffinity(apisv1.LabelZone, 10, sel),
		preferredAntiAffinity(apisv1.LabelHostname, 1, sel))
	b.Run("pods=4000", func(b *testing.B) {
		benchSolve(b, &Snapshot{NodePools: []NodePool{nodePool("default", its, scheduling.Requirements{})}, Pods: ps})
	})
}

func qty(s string) resource.Quantity { return resource.MustParse(s) }

// awsPools returns the AWS benchmark's NodePools: a general pool (categories c, m, r, generation
// above 4, spot and on-demand) and a GPU pool (families of categories g and p, tainted
// nvidia.com/gpu).
func awsPools(b testing.TB) []NodePool {
	its := aws(b).Types
	general := scheduling.NewRequirements(
		scheduling.In(apisv1.LabelInstanceCategory, "c", "m", "r"),
		scheduling.MustRequirement(apisv1.LabelInstanceGeneration, corev1.NodeSelectorOpGt, "4"),
		scheduling.In(apisv1.CapacityTypeLabelKey, apisv1.CapacityTypeSpot, apisv1.CapacityTypeOnDemand),
	)
	gpu := scheduling.NewRequirements(
		scheduling.In(apisv1.LabelInstanceCategory, "g", "p"),
		scheduling.In(apisv1.CapacityTypeLabelKey, apisv1.CapacityTypeSpot, apisv1.CapacityTypeOnDemand),
	)
	return []NodePool{
		nodePool("general", its, general),
		nodePool("gpu", its, gpu, func(p *NodePool) {
			p.Taints = []corev1.Taint{{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}}
		}),
	}
}

func webPods(n int, r *rand.Rand) []*corev1.Pod {
	cpus := []string{"100m", "250m", "500m", "1", "1500m", "2"}
	mems := []string{"128Mi", "256Mi", "512Mi", "1Gi", "2Gi", "4Gi"}
	out := make([]*corev1.Pod, n)
	for i := range out {
		out[i] = pod(cpus[r.IntN(len(cpus))], mems[r.IntN(len(mems))], labelled("app", fmt.Sprintf("web-%d", i%20)))
	}
	return out
}

// awsMix returns the pods of one AWS benchmark mix.
func awsMix(mix string) []*corev1.Pod {
	r := rand.New(rand.NewPCG(7, 0))
	switch mix {
	case "web":
		return webPods(2000, r)
	case "memory":
		mems := []string{"8Gi", "12Gi", "16Gi", "24Gi", "32Gi"}
		out := make([]*corev1.Pod, 1000)
		for i := range out {
			out[i] = pod("500m", mems[r.IntN(len(mems))], labelled("app", fmt.Sprintf("cache-%d", i%10)))
		}
		return out
	case "gpu":
		var out []*corev1.Pod
		for i := 0; i < 400; i++ {
			g := []int{1, 2, 4, 8}[r.IntN(4)]
			out = append(out, pod(fmt.Sprintf("%d", 3*g), fmt.Sprintf("%dGi", 12*g), gpus(g), tolerate("nvidia.com/gpu"), labelled("app", fmt.Sprintf("train-%d", g))))
		}
		return append(out, webPods(1000, r)...)
	case "spread":
		var out []*corev1.Pod
		for d := 0; d < 10; d++ {
			app := fmt.Sprintf("svc-%d", d)
			cpu, mem := []string{"500m", "1"}[d%2], []string{"1Gi", "2Gi"}[d%2]
			for i := 0; i < 100; i++ {
				if d < 5 {
					out = append(out, pod(cpu, mem, labelled("app", app), spread(apisv1.LabelZone, 1, corev1.DoNotSchedule, map[string]string{"app": app})))
				} else {
					out = append(out, pod(cpu, mem, labelled("app", app), antiAffinity(apisv1.LabelHostname, map[string]string{"app": app})))
				}
			}
		}
		return out
	}
	panic(mix)
}

func BenchmarkSolveAWS(b *testing.B) {
	pools := awsPools(b)
	for _, mix := range []string{"web", "memory", "gpu", "spread"} {
		b.Run("mix="+mix, func(b *testing.B) {
			benchSolve(b, &Snapshot{NodePools: pools, Pods: awsMix(mix)})
		})
	}
	// The same web mix with both pools zone-balanced (tenon.sh/zone-balance-max-skew=1): what
	// pinning every claim to a zone adds to the solve.
	balanced := slices.Clone(pools)
	for i := range balanced {
		balanced[i].ZoneMaxSkew = 1
	}
	b.Run("mix=web/zone-balanced", func(b *testing.B) {
		benchSolve(b, &Snapshot{NodePools: balanced, Pods: awsMix("web")})
	})
}

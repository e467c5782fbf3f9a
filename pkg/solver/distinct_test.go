package solver

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// Pods of real-world diversity: every pod its own (cpu, memory) shape, as vertical autoscaling
// and per-team defaults make them. Each mix draws its requests log-uniformly and redraws any
// shape already taken.

// logUniform draws an integer log-uniformly from [lo, hi].
func logUniform(r *rand.Rand, lo, hi int64) int64 {
	return int64(math.Round(float64(lo) * math.Exp(r.Float64()*math.Log(float64(hi)/float64(lo)))))
}

// distinctShapes draws n distinct (millicores, MiB) shapes.
func distinctShapes(n int, r *rand.Rand, cpuLo, cpuHi, memLo, memHi int64) [][2]int64 {
	seen := make(map[[2]int64]bool, n)
	out := make([][2]int64, 0, n)
	for len(out) < n {
		s := [2]int64{logUniform(r, cpuLo, cpuHi), logUniform(r, memLo, memHi)}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// distinctPods returns n pods of the mix, every one a shape of its own:
//
//	web     cpu 100m–2, memory 128Mi–4Gi
//	memory  cpu 250m–2, memory 4Gi–32Gi
//	gpu     a fifth ask for 1–8 GPUs (cpu 2–24, memory 8Gi–96Gi, tolerating the GPU taint); the
//	        rest are web pods
func distinctPods(mix string, n int, seed uint64) []*corev1.Pod {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]*corev1.Pod, 0, n)
	add := func(shapes [][2]int64, opts ...podOpt) {
		for i, s := range shapes {
			o := append([]podOpt{labelled("app", fmt.Sprintf("%s-%d", mix, i%20))}, opts...)
			out = append(out, pod(fmt.Sprintf("%dm", s[0]), fmt.Sprintf("%dMi", s[1]), o...))
		}
	}
	switch mix {
	case "web":
		add(distinctShapes(n, r, 100, 2000, 128, 4096))
	case "memory":
		add(distinctShapes(n, r, 250, 2000, 4096, 32768))
	case "gpu":
		g := n / 5
		shapes := distinctShapes(g, r, 2000, 24000, 8192, 98304)
		for i, s := range shapes {
			out = append(out, pod(fmt.Sprintf("%dm", s[0]), fmt.Sprintf("%dMi", s[1]), gpus(1+r.IntN(8)),
				tolerate("nvidia.com/gpu"), labelled("app", fmt.Sprintf("train-%d", i%10))))
		}
		add(distinctShapes(n-g, r, 100, 2000, 128, 4096))
	default:
		panic(mix)
	}
	return out
}

// distinctPools is the setup: one on-demand pool of categories c, m, r, generation
// above 4; and for the GPU mix, an on-demand pool of g and p families tainted nvidia.com/gpu.
func distinctPools(t testing.TB, mix string) []NodePool {
	its := aws(t).Types
	general := onDemand(
		scheduling.In(apisv1.LabelInstanceCategory, "c", "m", "r"),
		scheduling.MustRequirement(apisv1.LabelInstanceGeneration, corev1.NodeSelectorOpGt, "4"),
	)
	pools := []NodePool{nodePool("general", its, general)}
	if mix == "gpu" {
		pools = append(pools, nodePool("gpu", its, onDemand(scheduling.In(apisv1.LabelInstanceCategory, "g", "p")), func(p *NodePool) {
			p.Taints = []corev1.Taint{{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}}
		}))
	}
	return pools
}

// BenchmarkSolveDistinct: every pod a distinct shape, on the AWS catalog.
func BenchmarkSolveDistinct(b *testing.B) {
	for _, mix := range []string{"web", "memory", "gpu"} {
		for _, n := range []int{2000, 20000} {
			b.Run(fmt.Sprintf("mix=%s/pods=%d", mix, n), func(b *testing.B) {
				benchSolve(b, &Snapshot{NodePools: distinctPools(b, mix), Pods: distinctPods(mix, n, 12)})
			})
		}
	}
}

var distinctManifest = flag.String("distinct-manifest", "", "write the issue's 2,000 distinct web pods and their NodePool as a manifest for `tenon plan` to this file")

// TestWriteDistinctManifest writes, with -distinct-manifest FILE, the web mix of distinctPods as
// bare Pods with an on-demand c/m/r NodePool of generation above 4, to reproduce a solve with
// `go run ./cmd/tenon plan -f FILE`.
func TestWriteDistinctManifest(t *testing.T) {
	if *distinctManifest == "" {
		t.Skip("no -distinct-manifest")
	}
	var b strings.Builder
	b.WriteString(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {group: sim.tenon.sh, kind: SimNodeClass, name: default}
      requirements:
      - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}
      - {key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["4"]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
`)
	for i, p := range distinctPods("web", 2000, 12) {
		req := p.Spec.Containers[0].Resources.Requests
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: web-%d, namespace: default, labels: {app: %s}}\n"+
			"spec: {containers: [{name: c, image: x, resources: {requests: {cpu: %q, memory: %q}}}]}\n",
			i, p.Labels["app"], req.Cpu().String(), req.Memory().String())
	}
	if err := os.WriteFile(*distinctManifest, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

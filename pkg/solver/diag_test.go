package solver

import (
	"fmt"
	"os"
	"sort"
	"testing"

	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver/bound"
)

// TestDiagnoseDiverse prints where the diverse plan's money goes (run with TENON_DIAG=1).
func TestDiagnoseDiverse(t *testing.T) {
	if os.Getenv("TENON_DIAG") == "" {
		t.Skip("diagnostics only: set TENON_DIAG=1")
	}
	n := 1000
	fmt.Sscan(os.Getenv("TENON_DIAG"), &n)
	its := syntheticTypes(400)
	snap := &Snapshot{NodePools: []NodePool{nodePool("default", its, scheduling.Requirements{})}, Pods: diversePods(n, 42)}
	plan, err := Solve(snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var req, alloc scheduling.Resources
	sizes := map[string]int{}
	for _, c := range plan.Claims {
		req = req.Add(c.Requests)
		alloc = alloc.Add(c.InstanceType.Allocatable())
		sizes[c.InstanceType.Name]++
	}
	t.Logf("claims %d price %.2f bound %.2f ratio %.3f", len(plan.Claims), plan.Price, plan.LowerBound, plan.Price/plan.LowerBound)
	t.Logf("cpu %d/%d (%.2f) mem %d/%d GiB (%.2f) pods %d/%d", req[0], alloc[0], float64(req[0])/float64(alloc[0]), req[1]>>30, alloc[1]>>30, float64(req[1])/float64(alloc[1]), req[2], alloc[2])
	var names []string
	for k := range sizes {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		t.Logf("  %s × %d", k, sizes[k])
	}
	if os.Getenv("TENON_DIAG_CLAIMS") != "" {
		for _, c := range plan.Claims {
			a := c.InstanceType.Allocatable()
			kinds := map[string]int{}
			for _, p := range c.Pods {
				for k := range p.Labels {
					kinds[k]++
				}
			}
			t.Logf("%s cpu %.2f mem %.2f pods %d %v", c.InstanceType.Name, float64(c.Requests[0])/float64(a[0]), float64(c.Requests[1])/float64(a[1]), len(c.Pods), kinds)
		}
	}
	// Fractional cost of the requests at the synthetic price (0.3 per vCPU-equivalent).
	cpuCost := float64(req[0]) / 1000 * 0.3
	memCost := float64(req[1]) / float64(2<<30) * 0.3
	t.Logf("fractional cost by cpu %.2f by memory %.2f", cpuCost, memCost)
}

func TestDiagnoseBound(t *testing.T) {
	if os.Getenv("TENON_DIAG") == "" {
		t.Skip("diagnostics only: set TENON_DIAG=1")
	}
	its := syntheticTypes(400)
	snap := &Snapshot{NodePools: []NodePool{nodePool("default", its, scheduling.Requirements{})}, Pods: diversePods(1000, 42)}
	s, err := newSolve(snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.run()
	prob := s.boundProblem()
	r := bound.Lower(prob)
	t.Logf("classes %d types %d groups %d: %+v", len(prob.Classes), len(prob.Types), len(prob.Groups), r)
}

func TestDiagnoseAWS(t *testing.T) {
	mix := os.Getenv("TENON_DIAG_AWS")
	if mix == "" {
		t.Skip("diagnostics only: set TENON_DIAG_AWS=web|memory|gpu|spread")
	}
	snap := &Snapshot{NodePools: awsPools(t), Pods: awsMix(mix)}
	plan, err := Solve(snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("claims %d price %.2f bound %.2f ratio %.3f", len(plan.Claims), plan.Price, plan.LowerBound, plan.Price/plan.LowerBound)
	counts := map[string]int{}
	for _, c := range plan.Claims {
		a := c.InstanceType.Allocatable()
		apps := map[string]int{}
		for _, p := range c.Pods {
			apps[p.Labels["app"]]++
		}
		key := fmt.Sprintf("%s %s %s $%.4f cpu %.2f mem %.2f %v", c.InstanceType.Name, c.Offering.CapacityType, c.Offering.Zone, c.Price, float64(c.Requests[0])/float64(a[0]), float64(c.Requests[1])/float64(a[1]), apps)
		counts[key]++
	}
	var keys []string
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%4d × %s", counts[k], k)
	}
}

package disruption

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// genCluster draws a small cluster: one or two NodePools with random budgets and policies, a
// few nodes of assorted sizes and capacity types, each with some pods; some nodes and pods are
// protected, some drifted or expired.
func genCluster(t *rapid.T) *Snapshot {
	w := newFixture(t)
	types := []string{"m5.large", "m5.xlarge", "m5.2xlarge", "m5.4xlarge", "c5.xlarge", "r5.xlarge"}
	pools := []string{"a"}
	if rapid.Bool().Draw(t, "twoPools") {
		pools = append(pools, "b")
	}
	for _, name := range pools {
		budget := rapid.SampledFrom([]string{"0", "1", "2", "50%", "100%"}).Draw(t, "budget-"+name)
		policy := rapid.SampledFrom([]apisv1.ConsolidationPolicy{apisv1.ConsolidationPolicyWhenEmpty, apisv1.ConsolidationPolicyWhenEmptyOrUnderutilized}).Draw(t, "policy-"+name)
		w.pool(name, append(families("m5", "c5", "r5"), onDemandOnly()), func(np *apisv1.NodePool) {
			np.Spec.Disruption.Budgets = []apisv1.Budget{{Nodes: budget}}
			np.Spec.Disruption.ConsolidationPolicy = policy
		})
	}
	n := rapid.IntRange(1, 8).Draw(t, "nodes")
	for i := 0; i < n; i++ {
		var pods []*corev1.Pod
		for k := rapid.IntRange(0, 4).Draw(t, fmt.Sprintf("pods-%d", i)); k > 0; k-- {
			p := pod(rapid.SampledFrom([]string{"100m", "250m", "500m", "1", "2"}).Draw(t, "cpu"),
				rapid.SampledFrom([]string{"128Mi", "512Mi", "1Gi", "4Gi"}).Draw(t, "mem"))
			if rapid.IntRange(0, 9).Draw(t, "protect") == 0 {
				p.Annotations = map[string]string{apisv1.DoNotDisruptAnnotationKey: "true"}
			}
			pods = append(pods, p)
		}
		node := w.node(rapid.SampledFrom(pools).Draw(t, "pool"), rapid.SampledFrom(types).Draw(t, "type"), "us-east-1a", "on-demand", pods...)
		switch rapid.IntRange(0, 9).Draw(t, "state") {
		case 0:
			node.DoNotDisrupt = true
		case 1:
			node.Drifted = "NodePoolDrift"
		case 2:
			node.ExpireAt = now.Add(-time.Minute)
		case 3:
			node.Nominated = true
		case 4:
			node.Initialized = false
		}
	}
	// Some pools are capped: their cpu limit leaves a drawn room above their nodes' capacity.
	var capped []string
	for _, name := range pools {
		room := rapid.SampledFrom([]int64{-1, 0, 2000, 4000, 8000, 16000}).Draw(t, "limit-room-"+name)
		if room < 0 {
			continue
		}
		var used int64
		for _, sn := range w.sn {
			if sn.NodePool == name {
				it, _ := aws(t).Get(sn.Labels[corev1.LabelInstanceTypeStable])
				used += it.Capacity[scheduling.CPU]
			}
		}
		w.pools[name].Spec.Limits = apisv1.Limits{corev1.ResourceCPU: *resource.NewMilliQuantity(used+room, resource.DecimalSI)}
		capped = append(capped, name)
	}
	s := w.snapshot()
	for i := range s.Solver.NodePools {
		np := &s.Solver.NodePools[i]
		if !slices.Contains(capped, np.Name) {
			continue
		}
		for _, sn := range w.sn {
			if sn.NodePool == np.Name {
				it, _ := aws(t).Get(sn.Labels[corev1.LabelInstanceTypeStable])
				np.Usage = np.Usage.Add(it.Capacity)
				np.Nodes++
			}
		}
	}
	return s
}

func TestPropertiesOfDecisions(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genCluster(t)
		d, err := Decide(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]*Node{}
		for i := range s.Nodes {
			byName[s.Nodes[i].Name] = &s.Nodes[i]
		}
		seen := map[string]bool{}
		perPool := map[string]int{}
		for _, cmd := range d.Commands {
			for _, name := range cmd.Candidates {
				if seen[name] {
					t.Fatalf("node %s is in two commands", name)
				}
				seen[name] = true
				n := byName[name]
				if cmd.Method == MethodExpiration {
					continue
				}
				perPool[n.NodePool]++
				if n.DoNotDisrupt || n.Nominated || !n.Initialized {
					t.Fatalf("%s command took protected node %s: %+v", cmd.Method, name, n)
				}
				for _, p := range podsOn(s, name) {
					if _, ok := p.Annotations[apisv1.DoNotDisruptAnnotationKey]; ok {
						t.Fatalf("%s command evicts do-not-disrupt pod %s from %s", cmd.Method, p.Name, name)
					}
				}
				if cmd.Method == MethodConsolidation && s.NodePools[n.NodePool].Spec.Disruption.ConsolidationPolicy == apisv1.ConsolidationPolicyWhenEmpty {
					t.Fatalf("consolidated %s of a WhenEmpty pool", name)
				}
			}
			if cmd.Method == MethodConsolidation && (cmd.ReplacementPrice >= cmd.Price || cmd.Savings <= 0) {
				t.Fatalf("consolidation does not lower the price: %.4f → %.4f", cmd.Price, cmd.ReplacementPrice)
			}
			// Whatever option each replacement launches as (the cheap ones may have no capacity
			// by then), a consolidation still lowers the price.
			if cmd.Method == MethodConsolidation && len(cmd.Replacements) > 0 {
				worst := 0.0
				for _, r := range cmd.Replacements {
					dearest := 0.0
					for _, it := range r.InstanceTypes {
						if o, ok := it.CheapestOffering(r.Requirements); ok {
							dearest = max(dearest, o.Price)
						}
					}
					worst += dearest
				}
				if worst >= cmd.Price {
					t.Fatalf("consolidation of %v at $%.4f/h could launch its replacements for $%.4f/h", cmd.Candidates, cmd.Price, worst)
				}
			}
			placed := len(cmd.Moves)
			for _, r := range cmd.Replacements {
				placed += len(r.Pods)
			}
			if placed != len(cmd.Pods) {
				t.Fatalf("command places %d of its %d pods", placed, len(cmd.Pods))
			}
		}
		for pool, k := range perPool {
			total := 0
			for _, n := range s.Nodes {
				if n.NodePool == pool {
					total++
				}
			}
			allowed := s.NodePools[pool].AllowedDisruptions(s.Now, total, apisv1.DisruptionReasonUnderutilized)
			if k > allowed {
				t.Fatalf("nodepool %s: %d nodes disrupted, budgets allow %d", pool, k, allowed)
			}
		}
		// Every replacement of the pass together stays within its NodePool's limits.
		added := map[string]scheduling.Resources{}
		for _, cmd := range d.Commands {
			for _, r := range cmd.Replacements {
				added[r.NodePool] = added[r.NodePool].Add(r.InstanceType.Capacity)
			}
		}
		for _, np := range s.Solver.NodePools {
			if !np.HasLimit[scheduling.CPU] {
				continue
			}
			if room := np.Limits[scheduling.CPU] - np.Usage[scheduling.CPU]; added[np.Name][scheduling.CPU] > room {
				t.Fatalf("nodepool %s: the pass's replacements add %dm cpu, its limit leaves %dm", np.Name, added[np.Name][scheduling.CPU], room)
			}
		}
		verifyAfter(t, s, d)
	})
}

// verifyAfter checks, with the solver's independent checker, that the cluster left by the
// commands holds every evicted pod on a node that fits it.
func verifyAfter(t *rapid.T, s *Snapshot, d *Decision) {
	gone := map[string]bool{}
	var evicted []*corev1.Pod
	plan := &solver.Plan{}
	claims := map[string]*solver.Claim{}
	for _, cmd := range d.Commands {
		for _, n := range cmd.Candidates {
			gone[n] = true
		}
		evicted = append(evicted, cmd.Pods...)
		for _, r := range cmd.Replacements {
			c := *r
			plan.Claims = append(plan.Claims, &c)
			claims[c.Hostname] = &c
		}
	}
	for _, cmd := range d.Commands {
		for _, m := range cmd.Moves {
			if c, ok := claims[m.Node]; ok {
				c.Pods = append(c.Pods, m.Pod)
				continue
			}
			plan.Placements = append(plan.Placements, m)
		}
	}
	snap := *s.Solver
	snap.Nodes = nil
	for _, n := range s.Solver.Nodes {
		if gone[n.Name] {
			n.MarkedForDeletion = true
		}
		snap.Nodes = append(snap.Nodes, n)
	}
	snap.Pods = evicted
	if err := solver.Verify(&snap, plan); err != nil {
		t.Fatalf("the cluster after the commands breaks a constraint: %v", err)
	}
}

func podsOn(s *Snapshot, node string) []*corev1.Pod {
	for _, n := range s.Solver.Nodes {
		if n.Name == node {
			return n.Pods
		}
	}
	return nil
}

package disruption

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/snapshot"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// staticSnapshot is the fixture's snapshot as the controller builds it for static NodePools:
// they are in NodePools (policy, budgets) and Static (what they launch), not in the solver's
// pools, which only the provisioner launches from.
func staticSnapshot(t *testing.T, w *fixture, launchable bool) *Snapshot {
	t.Helper()
	s := w.snapshot()
	s.Solver.NodePools = slices.DeleteFunc(s.Solver.NodePools, func(p solver.NodePool) bool { return w.pools[p.Name].IsStatic() })
	s.Static = map[string]*solver.Claim{}
	for name, np := range w.pools {
		if !np.IsStatic() || !launchable {
			continue
		}
		cl, err := snapshot.StaticClaim(np, aws(t).Types)
		if err != nil || cl == nil {
			t.Fatalf("static claim of %s: %v, %v", name, cl, err)
		}
		s.Static[name] = cl
	}
	return s
}

func TestStaticNodePoolsOnlyDriftAndExpire(t *testing.T) {
	replicas := func(np *apisv1.NodePool) { n := int64(2); np.Spec.Replicas = &n }
	noBudget := func(np *apisv1.NodePool) { np.Spec.Disruption.Budgets = []apisv1.Budget{{Nodes: "0"}} }
	for _, tc := range []struct {
		name       string
		pool       []func(*apisv1.NodePool)
		node       func(n *Node)
		pods       int
		doNotEvict bool
		noTypes    bool
		method     Method     // the command wanted, "" for none
		skip       SkipReason // the skip wanted when there is no command
	}{
		{name: "drifted node is replaced by one claim of its pool", pool: []func(*apisv1.NodePool){replicas}, pods: 2,
			node: func(n *Node) { n.Drifted = "NodePoolDrift" }, method: MethodDrift},
		{name: "drifted empty node is replaced, not deleted", pool: []func(*apisv1.NodePool){replicas},
			node: func(n *Node) { n.Drifted = "NodePoolDrift" }, method: MethodDrift},
		{name: "expired node is replaced by one claim of its pool", pool: []func(*apisv1.NodePool){replicas}, pods: 1,
			node: func(n *Node) { n.ExpireAt = now.Add(-time.Minute) }, method: MethodExpiration},
		{name: "empty node is not removed", pool: []func(*apisv1.NodePool){replicas}, node: func(*Node) {}, skip: SkipStatic},
		{name: "underutilized node is not consolidated", pool: []func(*apisv1.NodePool){replicas}, pods: 1, node: func(*Node) {}, skip: SkipStatic},
		{name: "drift waits for the budgets", pool: []func(*apisv1.NodePool){replicas, noBudget},
			node: func(n *Node) { n.Drifted = "NodePoolDrift" }, skip: SkipBudget},
		{name: "drift honours do-not-disrupt pods", pool: []func(*apisv1.NodePool){replicas}, pods: 1, doNotEvict: true,
			node: func(n *Node) { n.Drifted = "NodePoolDrift" }, skip: SkipDoNotDisruptPod},
		{name: "drift without a type to launch leaves the node", pool: []func(*apisv1.NodePool){replicas}, noTypes: true,
			node: func(n *Node) { n.Drifted = "NodePoolDrift" }, skip: SkipStatic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newFixture(t)
			w.pool("fixed", append(families("m5"), onDemandOnly()), tc.pool...)
			w.pool("general", append(families("m5"), onDemandOnly()))
			w.node("general", "m5.4xlarge", "us-east-1a", "on-demand", pod("2", "4Gi")) // room for the static node's pods
			var pods []*corev1.Pod
			for range tc.pods {
				p := pod("1", "1Gi")
				if tc.doNotEvict {
					p.Annotations = map[string]string{apisv1.DoNotDisruptAnnotationKey: "true"}
				}
				pods = append(pods, p)
			}
			n := w.node("fixed", "m5.2xlarge", "us-east-1b", "on-demand", pods...)
			name := n.Name
			tc.node(n)
			s := staticSnapshot(t, w, !tc.noTypes)
			d := decide(t, s, Options{})
			var mine []Command
			for _, c := range d.Commands {
				if slices.Contains(c.Candidates, name) {
					mine = append(mine, c)
				}
			}
			if tc.method == "" {
				if len(mine) > 0 {
					t.Fatalf("static node disrupted: %+v", mine)
				}
				if got := skipOf(d, name); got != tc.skip {
					t.Fatalf("skip %q, want %q (skips %+v)", got, tc.skip, d.Skips)
				}
				return
			}
			if len(mine) != 1 {
				t.Fatalf("want one command for %s, got %+v (skips %+v)", name, d.Commands, d.Skips)
			}
			cmd := mine[0]
			if cmd.Method != tc.method || cmd.Action != ActionReplace || len(cmd.Candidates) != 1 || len(cmd.Replacements) != 1 {
				t.Fatalf("want one %s replacement of %s alone, got %+v", tc.method, name, cmd)
			}
			checkStaticReplacement(t, s, cmd, tc.pods)
			// Re-validated on the same cluster, the command keeps its one template claim.
			v, err := Validate(s, cmd, Options{})
			if err != nil {
				t.Fatalf("validate: %v", err)
			}
			checkStaticReplacement(t, s, v, tc.pods)
		})
	}
}

func checkStaticReplacement(t *testing.T, s *Snapshot, cmd Command, pods int) {
	t.Helper()
	if len(cmd.Replacements) != 1 {
		t.Fatalf("want exactly one replacement, got %d", len(cmd.Replacements))
	}
	r, tmpl := cmd.Replacements[0], s.Static["fixed"]
	if r.NodePool != "fixed" || len(r.Pods) != 0 || len(cmd.Moves) != 0 {
		t.Fatalf("replacement of nodepool %s with %d pods and %d moves; want an empty claim of fixed", r.NodePool, len(r.Pods), len(cmd.Moves))
	}
	if r.InstanceType.Name != tmpl.InstanceType.Name || len(r.InstanceTypes) != len(tmpl.InstanceTypes) || r.Price != tmpl.Price {
		t.Fatalf("replacement launches %s ($%.4f) of %d types; want the template's %s ($%.4f) of %d",
			r.InstanceType.Name, r.Price, len(r.InstanceTypes), tmpl.InstanceType.Name, tmpl.Price, len(tmpl.InstanceTypes))
	}
	for i := 1; i < len(r.InstanceTypes); i++ {
		if a, b := cheapest(r.InstanceTypes[i-1]), cheapest(r.InstanceTypes[i]); a > b {
			t.Fatalf("instance types not cheapest first: %s $%.4f before %s $%.4f", r.InstanceTypes[i-1].Name, a, r.InstanceTypes[i].Name, b)
		}
	}
	if r.InstanceType.Name != "m5.large" {
		t.Fatalf("replacement is %s; the pool's cheapest type is m5.large", r.InstanceType.Name)
	}
	if len(cmd.Pods) != pods {
		t.Fatalf("command evicts %d pods, want the node's %d", len(cmd.Pods), pods)
	}
}

// cheapest is the lowest on-demand price of an instance type.
func cheapest(it *catalog.InstanceType) float64 {
	p := -1.0
	for _, o := range it.Offerings {
		if o.CapacityType == apisv1.CapacityTypeOnDemand && (p < 0 || o.Price < p) {
			p = o.Price
		}
	}
	return p
}

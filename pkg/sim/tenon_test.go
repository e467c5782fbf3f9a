package sim

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/tenon-sh/tenon/pkg/solver"
)

// TestTenonSolvesAsTheSolverWould checks the shortcuts the tenon policy takes to call the
// solver cheaply (types cut to those that can hold the pods, requirements cut to the keys
// some requirement reads, nodes without room left out, a pools-only snapshot prepared once
// when no node has room) against a plain solve of the whole cluster: the plans must be equal.
func TestTenonSolvesAsTheSolverWould(t *testing.T) {
	env := philly(t, 3000)
	opts := phillyOptions().withDefaults()
	checked, withRoom := 0, 0
	// Cluster states from every policy: tenon's own are tight, the others leave room.
	for i, name := range PolicyNames {
		opts.Until = env.Workload.Jobs[len(env.Workload.Jobs)*(i+1)/4].Submit
		r, _ := runPolicy(t, env, opts, name)
		v, tn := r.view, TenonPolicy(env).Provisioner.(*tenon)
		for s := range env.Workload.Shapes {
			for _, n := range []int{1, 3, 9} {
				pods := make([]*corev1.Pod, n)
				for i := range pods {
					cp := *env.Workload.Shapes[s].Pod
					cp.Name = fmt.Sprintf("probe-%d-%d", s, i)
					pods[i] = &cp
				}
				got, err := tn.solve(v, pods, []int{s})
				if err != nil {
					t.Fatal(err)
				}
				want, err := solver.Solve(plainSnapshot(v, pods), solver.Options{SkipBound: true})
				if err != nil {
					t.Fatal(err)
				}
				if g, w := planString(got), planString(want); g != w {
					t.Fatalf("at %s, %d pods of shape %d (room elsewhere: %v):\n got %s\nwant %s", r.now, n, s, tn.roomFor(v, []int{s}, NoNode), g, w)
				}
				checked++
				if tn.roomFor(v, []int{s}, NoNode) {
					withRoom++
				}
			}
		}
	}
	t.Logf("%d plans compared, %d with room on nodes", checked, withRoom)
	if withRoom == 0 || withRoom == checked {
		t.Errorf("the comparisons must cover both the pools-only and the full snapshot")
	}
}

// plainSnapshot is the cluster as the solver takes it with no shortcut: every pool with every
// type on sale, every node not disrupting.
func plainSnapshot(v *View, pods []*corev1.Pod) *solver.Snapshot {
	env := v.Env()
	snap := &solver.Snapshot{DaemonSets: env.Workload.DaemonSets, Pods: pods}
	for _, p := range env.Pools {
		sp := p.Solver
		sp.InstanceTypes = v.InstanceTypes(p.Index)
		sp.Usage, sp.Nodes = v.Usage(p.Index)
		snap.NodePools = append(snap.NodePools, sp)
	}
	for _, n := range v.Nodes() {
		if !n.Disrupting {
			sn := v.SolverNode(n)
			sn.Labels = n.Labels()
			snap.Nodes = append(snap.Nodes, sn)
		}
	}
	return snap
}

func planString(p *solver.Plan) string {
	var parts []string
	for _, pl := range p.Placements {
		parts = append(parts, fmt.Sprintf("place %s on %s", pl.Pod.Name, pl.Node))
	}
	for _, c := range p.Claims {
		var names []string
		for _, it := range c.InstanceTypes {
			names = append(names, it.Name)
		}
		var pods []string
		for _, pod := range c.Pods {
			pods = append(pods, pod.Name)
		}
		slices.Sort(pods)
		parts = append(parts, fmt.Sprintf("claim %s %s %s $%.4f pods %v options %v", c.NodePool, c.InstanceType.Name, c.Offering.Zone, c.Price, pods, names))
	}
	for _, u := range p.Unschedulable {
		parts = append(parts, "unschedulable "+u.Pod.Name)
	}
	return strings.Join(parts, "; ")
}

package disruption

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// member makes a pod a member of PodGroup default/group.
func member(p *corev1.Pod, group string) *corev1.Pod {
	p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &group}
	return p
}

// wholeFixture is two underutilized m5.2xlarge nodes running the two pods of PodGroup
// default/train, and a third node running an ordinary pod. The nodes returned are the
// fixture's own (later nodes are appended after them, so they are looked up again).
func wholeFixture(t *testing.T, mutate ...func(*apisv1.NodePool)) (*fixture, *Node, *Node, *Node) {
	w := newFixture(t)
	w.pool("general", append(families("m5"), onDemandOnly()), mutate...)
	w.node("general", "m5.2xlarge", "us-east-1a", "on-demand", member(pod("500m", "1Gi"), "train"))
	w.node("general", "m5.2xlarge", "us-east-1a", "on-demand", member(pod("500m", "1Gi"), "train"))
	w.node("general", "m5.2xlarge", "us-east-1a", "on-demand", pod("500m", "1Gi"))
	return w, &w.nodes[0], &w.nodes[1], &w.nodes[2]
}

func whole(s *Snapshot) *Snapshot {
	s.WholeGroups = []string{"default/train"}
	return s
}

// commandWith returns the command whose candidates include node, or nil.
func commandWith(d *Decision, node string) *Command {
	for i := range d.Commands {
		if slices.Contains(d.Commands[i].Candidates, node) {
			return &d.Commands[i]
		}
	}
	return nil
}

func TestWholeGroupConsolidatedTogether(t *testing.T) {
	// A budget of one node at a time: an ordinary node is consolidated alone, the group's two
	// nodes never are; with a budget of two they go in one command.
	w, a, b, c := wholeFixture(t, func(np *apisv1.NodePool) { np.Spec.Disruption.Budgets = []apisv1.Budget{{Nodes: "1"}} })
	d := decide(t, whole(w.snapshot()), Options{})
	if commandWith(d, a.Name) != nil || commandWith(d, b.Name) != nil {
		t.Fatalf("a budget of 1 took a node of a group disrupted whole: %+v", d.Commands)
	}
	if commandWith(d, c.Name) == nil {
		t.Fatalf("the ordinary node should be consolidated, got %+v, skips %+v", d.Commands, d.Skips)
	}
	if r := skipOf(d, a.Name); r != SkipBudget && r != SkipPodGroup {
		t.Errorf("the group's node is skipped for %q, want the budget", r)
	}

	// Without the group's mode the same budget moves one of its nodes: the test would see it.
	d = decide(t, w.snapshot(), Options{})
	if commandWith(d, a.Name) == nil && commandWith(d, b.Name) == nil && commandWith(d, c.Name) == nil {
		t.Fatalf("without disruptionMode All a node should be consolidated: %+v", d.Skips)
	}

	w, a, b, _ = wholeFixture(t, func(np *apisv1.NodePool) { np.Spec.Disruption.Budgets = []apisv1.Budget{{Nodes: "2"}} })
	d = decide(t, whole(w.snapshot()), Options{NoRepack: true})
	cmd := commandWith(d, a.Name)
	if cmd == nil || !slices.Contains(cmd.Candidates, b.Name) {
		t.Fatalf("the group's nodes must go in one command, got %+v, skips %+v", d.Commands, d.Skips)
	}
	if cmd.Savings <= 0 || !strings.Contains(cmd.Message, "podgroup default/train") {
		t.Errorf("command %q saves %.4f", cmd.Message, cmd.Savings)
	}
}

func TestWholeGroupHeldByOneNode(t *testing.T) {
	for name, hold := range map[string]func(b *Node){
		"do-not-disrupt":  func(b *Node) { b.DoNotDisrupt = true },
		"not initialized": func(b *Node) { b.Initialized = false },
		"nominated":       func(b *Node) { b.Nominated = true },
	} {
		t.Run(name, func(t *testing.T) {
			w, a, b, _ := wholeFixture(t)
			hold(b)
			d := decide(t, whole(w.snapshot()), Options{})
			if cmd := commandWith(d, a.Name); cmd != nil {
				t.Fatalf("node %s went while its group's node %s is held: %s", a.Name, b.Name, cmd.Message)
			}
			if r := skipOf(d, a.Name); r != SkipPodGroup {
				t.Errorf("skip of %s = %q, want %q", a.Name, r, SkipPodGroup)
			}
		})
	}
}

func TestWholeGroupOnANodeTenonDoesNotManage(t *testing.T) {
	w, a, b, _ := wholeFixture(t)
	s := whole(w.snapshot())
	// b is another autoscaler's: listed for the solver, not among the nodes tenon manages.
	own, other := a.Name, b.Name
	s.Nodes = slices.DeleteFunc(s.Nodes, func(n Node) bool { return n.Name == other })
	d := decide(t, s, Options{})
	if commandWith(d, own) != nil {
		t.Fatalf("a node of a group that also runs outside tenon went: %+v", d.Commands)
	}
	if r := skipOf(d, own); r != SkipPodGroup {
		t.Errorf("skip of %s = %q, want %q", own, r, SkipPodGroup)
	}
	for _, sk := range d.Skips {
		if sk.Node == own && !strings.Contains(sk.Message, other) {
			t.Errorf("skip %+v should name the unmanaged node %s", sk, other)
		}
	}
}

func TestWholeGroupDriftsAndExpiresTogether(t *testing.T) {
	for name, mark := range map[string]func(a *Node){
		"drift":      func(a *Node) { a.Drifted = "NodePoolDrift" },
		"expiration": func(a *Node) { a.ExpireAt = now.Add(-time.Minute) },
	} {
		t.Run(name, func(t *testing.T) {
			w, a, b, _ := wholeFixture(t, func(np *apisv1.NodePool) {
				np.Spec.Disruption.ConsolidateAfter = apisv1.NillableDuration{} // Never: only drift or expiration acts
			})
			mark(a)
			s := whole(w.snapshot())
			d := decide(t, s, Options{})
			cmd := commandWith(d, a.Name)
			if cmd == nil || !slices.Contains(cmd.Candidates, b.Name) || len(cmd.Candidates) != 2 {
				t.Fatalf("want one command for %s and %s, got %+v, skips %+v", a.Name, b.Name, d.Commands, d.Skips)
			}
			v, err := Validate(s, *cmd, Options{})
			if err != nil {
				t.Fatalf("the command does not validate: %v", err)
			}
			if v.Why != cmd.Why || len(v.Candidates) != 2 {
				t.Errorf("validated %+v, decided %+v", v, cmd)
			}
		})
	}
}

func TestWholeGroupDriftWaitsForTheBudget(t *testing.T) {
	w, a, b, _ := wholeFixture(t, func(np *apisv1.NodePool) { np.Spec.Disruption.Budgets = []apisv1.Budget{{Nodes: "1"}} })
	a.Drifted = "NodePoolDrift"
	d := decide(t, whole(w.snapshot()), Options{})
	if commandWith(d, a.Name) != nil || commandWith(d, b.Name) != nil {
		t.Fatalf("drift took part of a group disrupted whole within a budget of 1: %+v", d.Commands)
	}
	if r := skipOf(d, a.Name); r != SkipBudget {
		t.Errorf("skip of %s = %q, want %q", a.Name, r, SkipBudget)
	}
}

func TestValidateRefusesPartOfAWholeGroup(t *testing.T) {
	w, a, _, _ := wholeFixture(t)
	a.Drifted = "NodePoolDrift"
	plain := w.snapshot()
	d := decide(t, plain, Options{})
	cmd := commandWith(d, a.Name)
	if cmd == nil || len(cmd.Candidates) != 1 {
		t.Fatalf("without the mode, drift replaces %s alone: %+v", a.Name, d.Commands)
	}
	// The PodGroup became All between the decision and its execution.
	_, err := Validate(whole(w.snapshot()), *cmd, Options{})
	var inv *Invalid
	if !errors.As(err, &inv) || inv.Reason != SkipPodGroup {
		t.Fatalf("validation of part of a group disrupted whole: %v", err)
	}
}

// TestWholeGroupKeepsItsGang: the pods of a gang in one zone, disrupted whole, are planned
// into one zone again.
func TestWholeGroupKeepsItsGang(t *testing.T) {
	w, a, b, _ := wholeFixture(t, func(np *apisv1.NodePool) { np.Spec.Disruption.Budgets = []apisv1.Budget{{Nodes: "2"}} })
	s := whole(w.snapshot())
	s.Solver.Gangs = []solver.Gang{{Namespace: "default", Name: "train", MinCount: 2, TopologyKey: corev1.LabelTopologyZone}}
	d := decide(t, s, Options{NoRepack: true})
	cmd := commandWith(d, a.Name)
	if cmd == nil || !slices.Contains(cmd.Candidates, b.Name) {
		t.Fatalf("want the gang's nodes in one command: %+v, skips %+v", d.Commands, d.Skips)
	}
	zones := map[string]bool{}
	for _, r := range cmd.Replacements {
		if len(r.Pods) > 0 {
			zones[r.Offering.Zone] = true
		}
	}
	for _, m := range cmd.Moves {
		for _, n := range s.Solver.Nodes {
			if n.Name == m.Node {
				zones[n.Labels[corev1.LabelTopologyZone]] = true
			}
		}
	}
	if len(zones) != 1 {
		t.Errorf("the gang is planned across zones %v", zones)
	}
}

// TestPropertyWholeGroupsMoveWhole: on random clusters whose pods belong to PodGroups disrupted
// whole or singly, no command of a pass takes part of a whole group's nodes, and the cluster
// after the commands still holds every evicted pod.
func TestPropertyWholeGroupsMoveWhole(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genCluster(t)
		groups := []string{"g0", "g1", "g2"}
		for _, g := range groups {
			if rapid.Bool().Draw(t, "all-"+g) {
				s.WholeGroups = append(s.WholeGroups, "default/"+g)
			}
		}
		for i := range s.Solver.Nodes {
			for j, p := range s.Solver.Nodes[i].Pods {
				if k := rapid.IntRange(-1, len(groups)-1).Draw(t, fmt.Sprintf("group-%d-%d", i, j)); k >= 0 {
					member(p, groups[k])
				}
			}
		}
		d, err := Decide(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range s.WholeGroups {
			var nodes []string
			for _, n := range s.Solver.Nodes {
				if slices.ContainsFunc(n.Pods, func(p *corev1.Pod) bool { return solver.GangOf(p) == g }) {
					nodes = append(nodes, n.Name)
				}
			}
			for _, cmd := range d.Commands {
				in := 0
				for _, n := range nodes {
					if slices.Contains(cmd.Candidates, n) {
						in++
					}
				}
				if in > 0 && in < len(nodes) {
					t.Fatalf("%s command %q takes %d of the %d nodes %v of %s, disrupted only whole", cmd.Method, cmd.Message, in, len(nodes), nodes, g)
				}
			}
		}
		verifyAfter(t, s, d)
	})
}

package disruption

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func expendable(p *corev1.Pod, priority int32) *corev1.Pod {
	p.Spec.Priority = &priority
	return p
}

// A node whose only pods are expendable (priority below the cutoff) is empty: emptiness removes
// it and evicts them. With the cutoff lowered below their priority, the same node is not empty.
func TestANodeOfExpendablePodsIsEmpty(t *testing.T) {
	w := newFixture(t)
	w.pool("general", append(families("m5"), onDemandOnly()))
	n := w.node("general", "m5.large", "us-east-1a", "on-demand", expendable(pod("500m", "1Gi"), -100), expendable(pod("500m", "1Gi"), -11))
	d := decide(t, w.snapshot(), Options{})
	if len(d.Commands) != 1 || d.Commands[0].Method != MethodEmptiness || d.Commands[0].Candidates[0] != n.Name {
		t.Fatalf("want %s removed as empty, got commands %+v skips %+v", n.Name, d.Commands, d.Skips)
	}
	if got := len(d.Commands[0].Pods); got != 2 {
		t.Errorf("the command evicts %d pods, want the 2 expendable ones", got)
	}
	lowest := int32(-1 << 31)
	d = decide(t, w.snapshot(), Options{ExpendablePriorityCutoff: &lowest})
	for _, c := range d.Commands {
		if c.Method == MethodEmptiness {
			t.Errorf("with no pod expendable the node is not empty: %+v", c)
		}
	}
}

// An expendable pod that would fit nowhere does not hold its node: consolidation moves the
// others and evicts it. A pod at the cutoff is not expendable and holds it.
func TestAnExpendablePodNeedsNoPlaceElsewhere(t *testing.T) {
	for _, c := range []struct {
		name     string
		priority int32
		moves    bool
	}{
		{"expendable", -11, true},
		{"at the cutoff", -10, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newFixture(t)
			w.pool("general", append(families("m5"), onDemandOnly()))
			// The big pod fits only on an m5.4xlarge like its own node; the small one fits on the
			// other node, which has room for it alone.
			n := w.node("general", "m5.4xlarge", "us-east-1a", "on-demand", expendable(pod("12", "8Gi"), c.priority), pod("500m", "512Mi"))
			w.node("general", "m5.large", "us-east-1a", "on-demand", pod("1", "2Gi"))
			d := decide(t, w.snapshot(), Options{})
			var got *Command
			for i := range d.Commands {
				for _, name := range d.Commands[i].Candidates {
					if name == n.Name {
						got = &d.Commands[i]
					}
				}
			}
			if c.moves {
				if got == nil || len(got.Replacements) != 0 || len(got.Pods) != 2 {
					t.Fatalf("want %s deleted with its expendable pod evicted and no replacement, got %+v skips %+v", n.Name, d.Commands, d.Skips)
				}
				return
			}
			if got != nil && len(got.Replacements) == 0 {
				t.Errorf("a pod at the cutoff needs a place, yet %s is deleted with no replacement: %+v", n.Name, got)
			}
		})
	}
}

// PodDisruptionBudgets still protect expendable pods.
func TestAPDBHoldsANodeOfExpendablePods(t *testing.T) {
	w := newFixture(t)
	w.pool("general", append(families("m5"), onDemandOnly()))
	n := w.node("general", "m5.large", "us-east-1a", "on-demand", expendable(pod("500m", "1Gi", "app", "web"), -100))
	s := w.snapshot()
	s.PDBs = webPDB(0)
	if d := decide(t, s, Options{}); len(d.Commands) != 0 || skipOf(d, n.Name) != SkipPDB {
		t.Errorf("a PDB allowing no disruption must hold the node: %+v %+v", d.Commands, d.Skips)
	}
}

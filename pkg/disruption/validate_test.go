package disruption

import (
	"errors"
	"testing"
)

func invalidReason(t *testing.T, err error) SkipReason {
	t.Helper()
	var inv *Invalid
	if !errors.As(err, &inv) {
		t.Fatalf("want an *Invalid error, got %v", err)
	}
	return inv.Reason
}

func TestValidateKeepsACommandThatStillHolds(t *testing.T) {
	w := newFixture(t)
	w.pool("general", append(families("m5"), onDemandOnly()))
	w.node("general", "m5.4xlarge", "us-east-1a", "on-demand", pod("500m", "1Gi"))
	s := w.snapshot()
	d := decide(t, s, Options{})
	if len(d.Commands) != 1 {
		t.Fatalf("want one command, got %+v", d.Commands)
	}
	got, err := Validate(s, d.Commands[0], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Action != ActionReplace || len(got.Replacements) != 1 || got.Replacements[0].InstanceType.Name != "m5.large" {
		t.Fatalf("the revalidated command differs: %+v", got)
	}
}

func TestValidateRejectsWhatChanged(t *testing.T) {
	t.Run("an empty node got a pod", func(t *testing.T) {
		w := newFixture(t)
		w.pool("general", append(families("m5"), onDemandOnly()))
		w.node("general", "m5.large", "us-east-1a", "on-demand")
		d := decide(t, w.snapshot(), Options{})
		w.sn[0].Pods = append(w.sn[0].Pods, pod("100m", "128Mi"))
		_, err := Validate(w.snapshot(), d.Commands[0], Options{})
		if r := invalidReason(t, err); r != SkipNotEmpty {
			t.Fatalf("reason %s", r)
		}
	})
	t.Run("the node was annotated do-not-disrupt", func(t *testing.T) {
		w := newFixture(t)
		w.pool("general", append(families("m5"), onDemandOnly()))
		w.node("general", "m5.4xlarge", "us-east-1a", "on-demand", pod("500m", "1Gi"))
		d := decide(t, w.snapshot(), Options{})
		w.nodes[0].DoNotDisrupt = true
		_, err := Validate(w.snapshot(), d.Commands[0], Options{})
		if r := invalidReason(t, err); r != SkipDoNotDisruptNode {
			t.Fatalf("reason %s", r)
		}
	})
	t.Run("the node is gone", func(t *testing.T) {
		w := newFixture(t)
		w.pool("general", append(families("m5"), onDemandOnly()))
		w.node("general", "m5.4xlarge", "us-east-1a", "on-demand", pod("500m", "1Gi"))
		d := decide(t, w.snapshot(), Options{})
		w.nodes, w.sn = nil, nil
		_, err := Validate(w.snapshot(), d.Commands[0], Options{})
		if r := invalidReason(t, err); r != SkipNodeGone {
			t.Fatalf("reason %s", r)
		}
	})
	t.Run("pending pods took the room the pods would move to", func(t *testing.T) {
		w := newFixture(t)
		w.pool("general", append(families("m5"), onDemandOnly()))
		w.node("general", "m5.xlarge", "us-east-1a", "on-demand", pod("1", "1Gi"))
		w.node("general", "m5.xlarge", "us-east-1a", "on-demand", pod("1", "1Gi"))
		d := decide(t, w.snapshot(), Options{})
		if len(d.Commands) != 1 || d.Commands[0].Action != ActionDelete {
			t.Fatalf("want a delete, got %+v", d.Commands)
		}
		// The survivor fills up: the evicted pod would now need a new node, which costs more
		// than keeping the one it is on.
		for i := range w.sn {
			if w.sn[i].Name != d.Commands[0].Candidates[0] {
				w.sn[i].Pods = append(w.sn[i].Pods, pod("2500m", "1Gi"))
			}
		}
		_, err := Validate(w.snapshot(), d.Commands[0], Options{})
		if r := invalidReason(t, err); r != SkipNotCheaper && r != SkipSavingsFloor {
			t.Fatalf("reason %s", r)
		}
	})
	t.Run("a budget closed", func(t *testing.T) {
		w := newFixture(t)
		np := w.pool("general", append(families("m5"), onDemandOnly()))
		w.node("general", "m5.4xlarge", "us-east-1a", "on-demand", pod("500m", "1Gi"))
		d := decide(t, w.snapshot(), Options{})
		np.Spec.Disruption.Budgets[0].Nodes = "0"
		_, err := Validate(w.snapshot(), d.Commands[0], Options{})
		if r := invalidReason(t, err); r != SkipBudget {
			t.Fatalf("reason %s", r)
		}
	})
}

package disruption

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
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

// Every method's command, validated on the snapshot it was decided on, is computed again the
// same: Validate is the method's own compute, not a second encoding of its rules.
func TestValidateComputesEachMethodAgain(t *testing.T) {
	cases := map[Method]func(w *fixture){
		MethodEmptiness: func(w *fixture) {
			w.node("general", "m5.large", "us-east-1a", "on-demand")
		},
		MethodDrift: func(w *fixture) {
			n := w.node("general", "m5.large", "us-east-1a", "on-demand", pod("1", "1Gi"))
			n.Drifted = "the nodepool's requirements changed"
		},
		MethodExpiration: func(w *fixture) {
			n := w.node("general", "m5.large", "us-east-1a", "on-demand", pod("1", "1Gi"))
			n.ExpireAt = now.Add(-time.Minute)
		},
		MethodConsolidation: func(w *fixture) {
			w.node("general", "m5.4xlarge", "us-east-1a", "on-demand", pod("500m", "1Gi"))
		},
	}
	for m, build := range cases {
		t.Run(string(m), func(t *testing.T) {
			w := newFixture(t)
			w.pool("general", append(families("m5"), onDemandOnly()))
			build(w)
			s := w.snapshot()
			d := decide(t, s, Options{})
			if len(d.Commands) != 1 || d.Commands[0].Method != m {
				t.Fatalf("want one %s command, got %+v", m, d.Commands)
			}
			was := d.Commands[0]
			got, err := Validate(s, was, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Action != was.Action || got.Message != was.Message || got.Savings != was.Savings ||
				!slices.Equal(got.Candidates, was.Candidates) || len(got.Replacements) != len(was.Replacements) {
				t.Fatalf("computed again differs:\n got %+v\nwant %+v", got, was)
			}
		})
	}
}

func TestValidateRefusesAnExpirationThatNoLongerExpires(t *testing.T) {
	w := newFixture(t)
	w.pool("general", append(families("m5"), onDemandOnly()))
	n := w.node("general", "m5.large", "us-east-1a", "on-demand", pod("1", "1Gi"))
	n.ExpireAt = now.Add(-time.Minute)
	d := decide(t, w.snapshot(), Options{})
	if len(d.Commands) != 1 || d.Commands[0].Method != MethodExpiration {
		t.Fatalf("want an expiration, got %+v", d.Commands)
	}
	// expireAfter was raised before the command ran.
	n.ExpireAt = now.Add(time.Hour)
	_, err := Validate(w.snapshot(), d.Commands[0], Options{})
	if r := invalidReason(t, err); r != SkipNotExpired {
		t.Fatalf("reason %s", r)
	}
}

func TestValidateRefusesAnUnknownMethod(t *testing.T) {
	w := newFixture(t)
	w.pool("general", append(families("m5"), onDemandOnly()))
	w.node("general", "m5.large", "us-east-1a", "on-demand")
	_, err := Validate(w.snapshot(), Command{Method: "Defragmentation", Candidates: []string{"node-1"}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "Defragmentation") {
		t.Fatalf("want an error naming the method, got %v", err)
	}
}

package disruption

import (
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func webPDB(allowed int32) []*policyv1.PodDisruptionBudget {
	return []*policyv1.PodDisruptionBudget{{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptrIntStr(1), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	}}
}

// A PDB that allows one disruption does not hold a node holding two of its pods: the drain
// evicts them one at a time, each once the PDB allows it.
func TestPDBAllowingOneDoesNotHoldANodeWithTwoOfItsPods(t *testing.T) {
	w := newFixture(t)
	w.pool("general", append(families("m5"), onDemandOnly()))
	n := w.node("general", "m5.4xlarge", "us-east-1a", "on-demand", pod("500m", "1Gi", "app", "web"), pod("500m", "1Gi", "app", "web"))
	s := w.snapshot()
	s.PDBs = webPDB(1)
	d := decide(t, s, Options{})
	if len(d.Commands) != 1 || d.Commands[0].Candidates[0] != n.Name || len(d.Commands[0].Pods) != 2 {
		t.Fatalf("want %s consolidated, got commands %+v skips %+v", n.Name, d.Commands, d.Skips)
	}
	s.PDBs = webPDB(0)
	if d := decide(t, s, Options{}); len(d.Commands) != 0 || skipOf(d, n.Name) != SkipPDB {
		t.Errorf("a PDB allowing no disruption must hold the node: %+v", d.Skips)
	}
}

// Once a command of the pass has used a PDB's allowance, the next node holding its pods waits
// for a later pass.
func TestPDBAllowanceIsTakenWithinAPass(t *testing.T) {
	w := newFixture(t)
	w.pool("general", append(families("m5"), onDemandOnly()))
	w.node("general", "m5.large", "us-east-1a", "on-demand", pod("500m", "1Gi", "app", "web"), pod("500m", "1Gi", "app", "web"))
	w.node("general", "m5.large", "us-east-1a", "on-demand", pod("1500m", "1Gi", "app", "web")) // no room for the others
	w.nodes[0].Drifted, w.nodes[1].Drifted = "NodePoolDrift", "NodePoolDrift"
	first, second := w.nodes[0].Name, w.nodes[1].Name
	s := w.snapshot()
	s.PDBs = webPDB(1)
	d := decide(t, s, Options{})
	if len(d.Commands) != 1 || d.Commands[0].Method != MethodDrift || d.Commands[0].Candidates[0] != first {
		t.Fatalf("want one drift command for %s, got %+v", first, d.Commands)
	}
	if got := skipOf(d, second); got != SkipPDB {
		t.Errorf("%s: skip %q, want %q once the PDB's allowance is taken", second, got, SkipPDB)
	}
}

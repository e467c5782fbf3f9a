package disruption

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenon-sh/tenon/pkg/solver"
)

// TestConsolidationSkipsTypesTheDaemonSetsOverfill: with a 2.5-cpu DaemonSet on every m5 node,
// an m5.4xlarge holding two small pods is replaced by the cheapest type the DaemonSet fits
// beside it (m5.xlarge), never by an m5.large it overfills, and nothing panics.
func TestConsolidationSkipsTypesTheDaemonSetsOverfill(t *testing.T) {
	w := newFixture(t)
	w.pool("general", append(families("m5"), onDemandOnly()))
	agent := pod("2500m", "256Mi")
	big := w.node("general", "m5.4xlarge", "us-east-1a", "on-demand", pod("500m", "1Gi"), pod("500m", "1Gi"), agentOn(agent))
	s := w.snapshot()
	s.Solver.DaemonSets = []solver.DaemonSet{{Namespace: "kube-system", Name: "agent", Pod: agent}}
	d := decide(t, s, Options{})
	if len(d.Commands) != 1 || d.Commands[0].Action != ActionReplace || d.Commands[0].Candidates[0] != big.Name {
		t.Fatalf("want the big node replaced, got %+v", d.Commands)
	}
	for _, r := range d.Commands[0].Replacements {
		for _, it := range r.InstanceTypes {
			if it.Name == "m5.large" {
				t.Errorf("replacement offers m5.large, which the daemonset overfills")
			}
		}
		if r.InstanceType.Name != "m5.xlarge" {
			t.Errorf("replacement launches %s, want m5.xlarge", r.InstanceType.Name)
		}
	}
}

// agentOn is a copy of the DaemonSet's pod as bound to a node: owned by the DaemonSet.
func agentOn(template *corev1.Pod) *corev1.Pod {
	p := template.DeepCopy()
	p.Name = template.Name + "-bound"
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent"}}
	return p
}

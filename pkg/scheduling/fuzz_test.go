package scheduling

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// FuzzNodeSelectorTerm parses arbitrary node-selector terms. It must never panic, and wherever
// Kubernetes' own node-affinity matcher accepts the term, both must agree on whether a node with
// the fuzzed label matches.
func FuzzNodeSelectorTerm(f *testing.F) {
	f.Add("topology.kubernetes.io/zone", uint8(0), "us-east-1a,us-east-1b", "us-east-1a", true, "")
	f.Add("karpenter.k8s.aws/instance-cpu", uint8(4), "8", "16", true, "")
	f.Add("team", uint8(1), "a", "", false, "")
	f.Add("team", uint8(3), "", "x", true, "node-1")
	f.Add("k", uint8(5), "-3", "0", true, "")
	f.Add("", uint8(9), ",,", "", false, "")
	f.Fuzz(func(t *testing.T, key string, opByte uint8, values string, labelValue string, present bool, nodeName string) {
		ops := []corev1.NodeSelectorOperator{
			corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists,
			corev1.NodeSelectorOpDoesNotExist, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt, OpGte, OpLte, "Bogus",
		}
		op := ops[int(opByte)%len(ops)]
		var vals []string
		if values != "" {
			vals = strings.Split(values, ",")
		}
		term := corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: vals}}}
		if nodeName != "" {
			term.MatchFields = []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{nodeName}}}
		}
		reqs, ok, err := FromNodeSelectorTerm(term)
		if err != nil || !ok {
			return
		}
		_ = reqs.String()
		_ = reqs.NodeSelectorRequirements()
		_ = reqs.Labels()

		if op == OpGte || op == OpLte || NormalizeKey(key) != key {
			return // not in Kubernetes' vocabulary, or rewritten on purpose
		}
		if present && len(validation.IsValidLabelValue(labelValue)) > 0 {
			return // the API server would never store such a node
		}
		sel, err := nodeaffinity.NewNodeSelector(&corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{term}})
		if err != nil {
			return
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{}}}
		labels := map[string]string{FieldNodeName: node.Name}
		if present {
			node.Labels[key] = labelValue
			labels[key] = labelValue
		}
		want := sel.Match(node)
		got := reqs.Matches(labels) == nil
		if got != want {
			t.Fatalf("term %+v on node labels %v: tenon matches=%v, kube-scheduler matches=%v (%s)", term, node.Labels, got, want, reqs)
		}
	})
}

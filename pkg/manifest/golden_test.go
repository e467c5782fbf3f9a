package manifest_test

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

var update = flag.Bool("update", false, "rewrite testdata/valid.pods.golden")

// TestPodsGolden lists the pods of testdata/valid, one line each, against a golden file that
// -update rewrites: a change in naming, ownership, defaulting or order shows as a diff.
func TestPodsGolden(t *testing.T) {
	var b strings.Builder
	for _, p := range loadValid(t).Pods() {
		owner := "-"
		if refs := p.OwnerReferences; len(refs) == 1 {
			owner = refs[0].Kind + "/" + refs[0].Name
		}
		fmt.Fprintf(&b, "%s/%s owner=%s priority=%d requests=%s labels=%s\n",
			p.Namespace, p.Name, owner, *p.Spec.Priority, requests(p), labels(p.Labels))
	}
	const golden = "testdata/valid.pods.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("pods differ from %s (go test -update to rewrite):\n got:\n%s\nwant:\n%s", golden, b.String(), want)
	}
}

// requests sums the requests of the regular containers.
func requests(p *corev1.Pod) string {
	sum := corev1.ResourceList{}
	for _, c := range p.Spec.Containers {
		for name, q := range c.Resources.Requests {
			total := sum[name]
			total.Add(q)
			sum[name] = total
		}
	}
	var parts []string
	for name, q := range sum {
		parts = append(parts, fmt.Sprintf("%s:%s", name, q.String()))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

func labels(m map[string]string) string {
	var parts []string
	for k, v := range m {
		if strings.Contains(k, "controller-uid") {
			v = "<uid>"
		}
		parts = append(parts, k+"="+v)
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

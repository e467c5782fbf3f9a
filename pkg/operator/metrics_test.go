package operator

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/tenon-sh/tenon/pkg/metrics"
)

// documented reads the metric tables of docs/metrics.md: every row whose second column is a
// metric type. Labels are sorted; "—" is none.
func documented(t *testing.T) map[string]metrics.Metric {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]metrics.Metric{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		cols := strings.Split(sc.Text(), "|")
		if len(cols) < 6 {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cols[1]), "`")
		typ := strings.TrimSpace(cols[2])
		if !slices.Contains([]string{"counter", "gauge", "histogram", "summary"}, typ) {
			continue
		}
		if _, dup := out[name]; dup {
			t.Errorf("docs/metrics.md:%d lists %s twice", line, name)
		}
		var labels []string
		if l := strings.TrimSpace(cols[3]); l != "—" && l != "" {
			for _, s := range strings.Split(l, ",") {
				labels = append(labels, strings.TrimSpace(s))
			}
		}
		sort.Strings(labels)
		if strings.TrimSpace(cols[4]) == "" {
			t.Errorf("docs/metrics.md:%d: %s has no meaning", line, name)
		}
		out[name] = metrics.Metric{Name: name, Type: typ, Labels: labels}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// exported lists every metric tenon registers (through metrics.MustRegister; this package
// imports every controller, so all of them), after checking that nothing named karpenter_* or
// tenon_* reached the registry another way.
func exported(t *testing.T) map[string]metrics.Metric {
	t.Helper()
	out := map[string]metrics.Metric{}
	for _, m := range metrics.Described() {
		out[m.Name] = m
	}
	mfs, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		n := mf.GetName()
		if _, ok := out[n]; !ok && (strings.HasPrefix(n, "karpenter_") || strings.HasPrefix(n, "tenon_")) {
			t.Errorf("%s is registered without metrics.MustRegister, so nothing checks it is documented", n)
		}
	}
	return out
}

func TestMetricsDocMatchesRegistry(t *testing.T) {
	docs, live := documented(t), exported(t)
	if len(live) < 40 {
		t.Fatalf("only %d metrics registered; the controllers' metrics are missing", len(live))
	}
	for name, m := range live {
		d, ok := docs[name]
		switch {
		case !ok:
			t.Errorf("%s (%s %v) is exported but not in docs/metrics.md", name, m.Type, m.Labels)
		case d.Type != m.Type:
			t.Errorf("%s is a %s, docs/metrics.md says %s", name, m.Type, d.Type)
		case !slices.Equal(d.Labels, m.Labels):
			t.Errorf("%s has labels %v, docs/metrics.md says %v", name, m.Labels, d.Labels)
		}
	}
	for name := range docs {
		if _, ok := live[name]; !ok {
			t.Errorf("docs/metrics.md lists %s, which tenon does not export", name)
		}
	}
	for _, want := range []string{"karpenter_nodeclaims_created_total", "karpenter_nodeclaims_terminated_total", "karpenter_nodeclaims_disrupted_total",
		"karpenter_nodes_created_total", "karpenter_nodes_terminated_total", "karpenter_nodes_allocatable", "karpenter_pods_state",
		"karpenter_pods_startup_duration_seconds", "karpenter_provisioner_scheduling_duration_seconds", "karpenter_voluntary_disruption_decisions_total",
		"karpenter_voluntary_disruption_eligible_nodes", "karpenter_voluntary_disruption_decision_evaluation_duration_seconds",
		"karpenter_nodepools_usage", "karpenter_nodepools_limit", "karpenter_nodepools_allowed_disruptions", "karpenter_cloudprovider_duration_seconds",
		"karpenter_cloudprovider_errors_total", "karpenter_cluster_state_synced", "karpenter_build_info"} {
		if _, ok := live[want]; !ok {
			t.Errorf("%s, which Karpenter users watch, is not exported", want)
		}
	}
}

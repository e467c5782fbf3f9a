package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tenon-sh/tenon/pkg/sim"
)

func runTenon(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestSimulateTrace(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.csv")
	rows := "submit_s,duration_s,replicas,cpu_milli,memory_mib,gpu,gpu_type\n0,3600,2,,,1,\n600,1800,1,,,4,V100\n900,60,1,,,1,P100\n"
	if err := os.WriteFile(trace, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	html, js := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.json")
	out, err := runTenon(t, "simulate", "--trace", trace, "-f", "../../examples/simulate/gpu-nodepools.yaml", "--out", html, "--json", js, "--seed", "3")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"2 jobs (3 pods)", "tenon", "karpenter-like", "node-groups", "bound", "unknown GPU type: 1 (first on line 4", "filled with 3 CPU and 12Gi memory per GPU", "wrote " + html} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	page, err := os.ReadFile(html)
	if err != nil || !bytes.Contains(page, []byte("<svg")) {
		t.Errorf("no HTML report: %v", err)
	}
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var rep sim.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Settings.Seed != 3 || len(rep.Policies) != 3 || rep.Bound.CostUSD <= 0 {
		t.Errorf("JSON report: %+v", rep.Settings)
	}
}

func TestSimulateReportsBadRows(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "trace.csv")
	if err := os.WriteFile(trace, []byte("submit_s,duration_s,replicas,cpu_milli,memory_mib,gpu,gpu_type\n0,60,1,,,1,\n5,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := runTenon(t, "simulate", "--trace", trace, "-f", "../../examples/simulate/gpu-nodepools.yaml", "--out", "")
	if err == nil || !strings.Contains(err.Error(), "trace line 3") {
		t.Errorf("got %v, want an error naming line 3", err)
	}
	_, err = runTenon(t, "simulate", "--trace", trace, "--boot-delay", "gamma:1s")
	if err == nil || !strings.Contains(err.Error(), "--boot-delay") {
		t.Errorf("got %v, want a --boot-delay error", err)
	}
}

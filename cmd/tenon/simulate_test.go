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

// readReport reads the JSON report simulate wrote.
func readReport(t *testing.T, path string) sim.Report {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no JSON report: %v", err)
	}
	var rep sim.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
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
	rep := readReport(t, js)
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

// A trace replayed with no -f gets a GPU pool and a CPU pool: its CPU-only jobs run (before,
// the default was one tainted GPU pool, and they never ran), and with nothing left that cannot
// run, every policy's cost is comparable with the bound.
func TestSimulateTraceDefaultsRunCPUJobsToo(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.csv")
	rows := "submit_s,duration_s,replicas,cpu_milli,memory_mib,gpu,gpu_type\n0,3600,2,,,1,\n60,1800,3,2000,4096,0,\n120,600,1,500,512,0,\n"
	if err := os.WriteFile(trace, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(dir, "r.json")
	out, err := runTenon(t, "simulate", "--trace", trace, "--out", "", "--json", js, "--spot-interruptions", "none")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(out, "not comparable") || strings.Contains(out, "fit no instance type") {
		t.Errorf("every pod of the trace can run on the default NodePools:\n%s", out)
	}
	rep := readReport(t, js)
	if len(rep.Input.NodePools) != 2 {
		t.Errorf("default NodePools %v; want a GPU pool and a CPU pool", rep.Input.NodePools)
	}
	for _, p := range rep.Policies {
		if p.PodsStarted != 6 || p.PodsNeverStarted != 0 {
			t.Errorf("%s: %d of 6 pods started, %d never", p.Policy, p.PodsStarted, p.PodsNeverStarted)
		}
		if p.EndHours > 2.5 {
			t.Errorf("%s: the replay of a 1-hour trace ended at %.2f h", p.Policy, p.EndHours)
		}
	}
}

// --timeout stops the replay, writes the report of what it reached marked incomplete, and
// fails the command saying so.
func TestSimulateTimeoutWritesAnIncompleteReport(t *testing.T) {
	js := filepath.Join(t.TempDir(), "r.json")
	out, err := runTenon(t, "simulate", "--trace", "../../pkg/sim/testdata/philly_pollux.csv.gz", "--timeout", "1ns", "--out", "", "--json", js)
	if err == nil || !strings.Contains(err.Error(), "--timeout") {
		t.Fatalf("got %v, want an error naming --timeout\n%s", err, out)
	}
	if !strings.Contains(out, "INCOMPLETE") {
		t.Errorf("the summary does not say the replay is incomplete:\n%s", out)
	}
	rep := readReport(t, js)
	if !rep.Incomplete {
		t.Error("the JSON report is not marked incomplete")
	}
}

// --gpu-shares serves fractions of a GPU from shared GPUs: without -f the default NodePools
// gain a gpu-shared NodePool, every pod runs, and the report gives the shares' utilisation;
// without the flag a fraction is an error that names the flag. NodeOverlays are read, not
// called ignored.
func TestSimulateSharedGPUs(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.csv")
	rows := "submit_s,duration_s,replicas,cpu_milli,memory_mib,gpu,gpu_type\n0,3600,4,,,0.25,T4\n0,3600,2,,,0.5,\n60,7200,1,,,1,V100\n"
	if err := os.WriteFile(trace, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	js, html := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html")
	out, err := runTenon(t, "simulate", "--trace", trace, "--gpu-shares", "4", "--out", html, "--json", js)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if page, err := os.ReadFile(html); err != nil || !bytes.Contains(page, []byte("Allocated ÷ provisioned shares of shared GPUs")) {
		t.Errorf("the HTML report has no chart of the shares' utilisation (%v)", err)
	}
	for _, want := range []string{"2 trace rows ask for a fraction of a GPU: served from GPUs shared 4 ways", "shares of shared GPUs allocated"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "ignored NodeOverlay") {
		t.Errorf("NodeOverlays called ignored:\n%s", out)
	}
	for _, p := range readReport(t, js).Policies {
		if p.PodsNeverStarted != 0 || p.Utilisation.GPUShares <= 0 {
			t.Errorf("%s: %d pods never started, shares utilisation %.2f", p.Policy, p.PodsNeverStarted, p.Utilisation.GPUShares)
		}
	}
	if out, err := runTenon(t, "simulate", "--trace", trace, "--out", ""); err == nil || !strings.Contains(out+err.Error(), "--gpu-shares") {
		t.Errorf("a fractional GPU without --gpu-shares: %v\n%s", err, out)
	}
}

// --gpu-mig serves fractions of a GPU from MIG instances: without -f the default NodePools gain
// a gpu-mig NodePool in MIG layout all-<profile>, the fractional pods run on its partitioned
// A100/H100 types (a fraction of a V100, which has no MIG, cannot), and the report gives the
// instances' utilisation; a profile no GPU has, or both --gpu-mig and --gpu-shares, is an error.
func TestSimulateMIG(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.csv")
	rows := "submit_s,duration_s,replicas,cpu_milli,memory_mib,gpu,gpu_type\n0,3600,4,,,0.25,\n0,3600,2,,,0.5,A100\n60,7200,1,,,1,V100\n120,600,1,,,0.5,V100\n"
	if err := os.WriteFile(trace, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(dir, "r.json")
	out, err := runTenon(t, "simulate", "--trace", trace, "--gpu-mig", "1g.10gb", "--out", "", "--json", js)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"3 trace rows ask for a fraction of a GPU: served from MIG instances 1g.10gb", "MIG instances (nvidia.com/mig-1g.10gb) allocated", "1 pods fit no instance type"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	for _, p := range readReport(t, js).Policies {
		if p.PodsNeverStarted != 1 || p.Utilisation.GPUShares <= 0 {
			t.Errorf("%s: %d pods never started (want the V100 fraction's alone), MIG utilisation %.2f", p.Policy, p.PodsNeverStarted, p.Utilisation.GPUShares)
		}
	}
	for _, args := range [][]string{{"--gpu-mig", "5g.33gb"}, {"--gpu-mig", "1g.10gb", "--gpu-shares", "4"}} {
		out, err := runTenon(t, append([]string{"simulate", "--trace", trace, "--out", ""}, args...)...)
		if err == nil {
			t.Errorf("%v: no error\n%s", args, out)
		}
	}
}

// --commitments bills every policy with the file's Commitments and adds tenon at list prices;
// a file without a Commitment, or with another kind, is an error naming it.
func TestSimulateCommitments(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.csv")
	if err := os.WriteFile(trace, []byte("submit_s,duration_s,replicas,cpu_milli,memory_mib,gpu,gpu_type\n0,3600,4,,,1,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sp := filepath.Join(dir, "sp.yaml")
	if err := os.WriteFile(sp, []byte("apiVersion: tenon.sh/v1alpha1\nkind: Commitment\nmetadata: {name: sp}\nspec:\n  computeSavingsPlan: {hourlyCommitment: \"1\", defaultDiscount: \"28\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(dir, "r.json")
	out, err := runTenon(t, "simulate", "--trace", trace, "--commitments", sp, "--out", filepath.Join(dir, "r.html"), "--json", js)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"bill with commitments", "tenon-list-prices"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	rep := readReport(t, js)
	if len(rep.Policies) != 4 {
		t.Fatalf("%d policies; want the three and tenon-list-prices", len(rep.Policies))
	}
	for _, p := range rep.Policies {
		if p.Bill == nil || p.Bill.CommitmentUSD <= 0 {
			t.Errorf("%s: bill %+v", p.Policy, p.Bill)
		}
	}
	page, err := os.ReadFile(filepath.Join(dir, "r.html"))
	if err != nil || !bytes.Contains(page, []byte("Bill with commitments")) {
		t.Errorf("the HTML report lacks the bill: %v", err)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := runTenon(t, "simulate", "--trace", trace, "--commitments", bad, "--out", ""); err == nil || !strings.Contains(err.Error(), "no tenon.sh/v1alpha1 Commitment") {
		t.Errorf("a file without a Commitment: %v\n%s", err, out)
	}
}

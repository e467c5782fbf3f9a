package sim

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

var gpuModelsSold = []GPUModel{{"a100", 40960}, {"a100", 81920}, {"a10g", 22888}, {"k80", 12288}, {"t4", 16384}, {"v100", 16384}, {"v100", 32768}}

func readTrace(t *testing.T, csv string, opts TraceOptions) (*Trace, []Skip, error) {
	t.Helper()
	if opts.GPUModels == nil {
		opts.GPUModels = gpuModelsSold
	}
	return ReadTrace(strings.NewReader(csv), opts)
}

func TestReadTraceRows(t *testing.T) {
	csv := "submit_s,duration_s,replicas,cpu_milli,memory_mib,gpu,gpu_type\n" +
		"0,3600,1,,,2,\n" +
		"10.5,60,3,500,1024,0,\n" +
		"20,0,1,,,1,V100\n" +
		"\n" +
		"30,100,2,,,8,Tesla K80\n"
	tr, skips, err := readTrace(t, csv, TraceOptions{CPUPerGPU: 3000, MemoryPerGPU: 12 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if len(skips) != 0 {
		t.Fatalf("skips: %v", skips)
	}
	want := []TraceRow{
		{Line: 2, Submit: 0, Duration: time.Hour, Replicas: 1, CPUMilli: 6000, MemoryBytes: 24 << 30, GPU: 2},
		{Line: 3, Submit: 10500 * time.Millisecond, Duration: time.Minute, Replicas: 3, CPUMilli: 500, MemoryBytes: 1 << 30},
		{Line: 4, Submit: 20 * time.Second, Replicas: 1, CPUMilli: 3000, MemoryBytes: 12 << 30, GPU: 1, GPUModels: []GPUModel{{Name: "v100"}}, GPUType: "V100"},
		{Line: 6, Submit: 30 * time.Second, Duration: 100 * time.Second, Replicas: 2, CPUMilli: 24000, MemoryBytes: 96 << 30, GPU: 8, GPUModels: []GPUModel{{Name: "k80"}}, GPUType: "Tesla K80"},
	}
	if len(tr.Rows) != len(want) {
		t.Fatalf("got %d rows, want %d: %+v", len(tr.Rows), len(want), tr.Rows)
	}
	for i := range want {
		if !reflect.DeepEqual(tr.Rows[i], want[i]) {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, tr.Rows[i], want[i])
		}
	}
	if tr.Filled != 3 {
		t.Errorf("filled %d rows, want 3", tr.Filled)
	}
}

func TestReadTraceErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct {
		name, csv string
		line      int
		want      string
	}{
		{"no header", "", 1, "empty trace"},
		{"missing column", "submit_s,duration_s,replicas,cpu_milli,memory_mib,gpu\n0,1,1,,,1\n", 1, "gpu_type"},
		{"short row", "submit_s,duration_s,replicas,cpu_milli,memory_mib,gpu,gpu_type\n0,1,1,,,1,\n5,1,1\n", 3, "3 fields"},
		{"not a number", "submit_s,duration_s,replicas,cpu_milli,memory_mib,gpu,gpu_type\n0,1,1,,,1,\n0,abc,1,,,1,\n", 3, `duration_s "abc"`},
		{"blank duration", "submit_s,duration_s,replicas,cpu_milli,memory_mib,gpu,gpu_type\n0,,1,,,1,\n", 2, "duration_s is blank"},
		{"fractional gpu", "submit_s,duration_s,replicas,cpu_milli,memory_mib,gpu,gpu_type\n0,1,1,,,1.5,\n", 2, "--gpu-shares"},
		{"fractional replicas", "submit_s,duration_s,replicas,cpu_milli,memory_mib,gpu,gpu_type\n0,1,1.5,,,1,\n", 2, "whole number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := readTrace(t, tc.csv, TraceOptions{CPUPerGPU: 1000, MemoryPerGPU: 1 << 30})
			var te *TraceError
			if !errors.As(err, &te) {
				t.Fatalf("got %v, want a *TraceError", err)
			}
			if te.Line != tc.line || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got line %d %q, want line %d containing %q", te.Line, err, tc.line, tc.want)
			}
		})
	}
}

func TestReadTraceSkipsAreCounted(t *testing.T) {
	csv := "submit_s,duration_s,replicas,cpu_milli,memory_mib,gpu,gpu_type\n" +
		"0,3600,1,,,1,\n" +
		"1,-5,1,,,1,\n" + // negative duration
		"2,60,1,,,1,P100\n" + // not sold
		"3,60,1,,,1,H9000\n" + // unknown
		"4,60,0,,,1,\n" + // no replicas
		"5,60,1,,,0,\n" + // no GPU, blank CPU, no --cpu-per-pod
		"6,60,1,,,0,V100\n" + // a GPU type without GPUs
		"7,60,1,-1,,1,\n" + // negative CPU
		"8,60,1,,,1,v100\n"
	tr, skips, err := readTrace(t, csv, TraceOptions{CPUPerGPU: 1000, MemoryPerGPU: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Rows) != 2 || tr.Rows[0].Line != 2 || tr.Rows[1].Line != 10 {
		t.Fatalf("rows: %+v", tr.Rows)
	}
	wantLines := []int{3, 4, 5, 6, 7, 8, 9}
	if len(skips) != len(wantLines) {
		t.Fatalf("skips: %v", skips)
	}
	for i, s := range skips {
		if s.Line != wantLines[i] {
			t.Errorf("skip %d on line %d, want %d: %v", i, s.Line, wantLines[i], s)
		}
	}
	// Every data row is a row or a skip: nothing is dropped.
	if got := len(tr.Rows) + len(skips); got != 9 {
		t.Errorf("rows + skips = %d, want the 9 data rows", got)
	}
	counts := SkipCounts(skips)
	byReason := map[string]int{}
	for _, c := range counts {
		byReason[c.Reason] = c.Count
	}
	want := map[string]int{SkipDuration: 1, SkipGPUType: 2, SkipReplicas: 1, SkipNoRequests: 1, SkipGPUTypeNo: 1, SkipNegative: 1}
	for r, n := range want {
		if byReason[r] != n {
			t.Errorf("%s: %d skips, want %d (%v)", r, byReason[r], n, counts)
		}
	}
	if _, _, err := readTrace(t, csv, TraceOptions{CPUPerGPU: 1000, MemoryPerGPU: 1 << 30, Strict: true}); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("strict: got %v, want an error on line 3", err)
	}
}

func TestParseGPUType(t *testing.T) {
	type want struct {
		name string
		gib  int64
		ok   bool
	}
	for in, w := range map[string]want{
		"V100": {"v100", 0, true}, "K80": {"k80", 0, true}, "A100": {"a100", 0, true}, "Tesla K80": {"k80", 0, true},
		"NVIDIA-A10G": {"a10g", 0, true}, " t4 ": {"t4", 0, true}, "T4G": {"t4g", 0, true},
		"V100M32": {"v100", 32, true}, "V100M16": {"v100", 16, true}, "A10": {"a10g", 0, true},
		"A100-SXM4-80GB": {"a100", 80, true}, "NVIDIA A100-SXM4-40GB": {"a100", 40, true}, "Tesla V100-SXM2-16GB": {"v100", 16, true},
		"NVIDIA H100 80GB HBM3": {"h100", 80, true}, "H100 NVL": {"h100", 0, true}, "L40S": {"l40s", 0, true}, "L4": {"l4", 0, true},
		"a100 40g": {"a100", 40, true},
		// Not sold on AWS, or not GPU models at all: unmapped, not guessed.
		"RTX PRO 6000": {"rtx-pro-server-6000", 0, true}, "NVIDIA RTX PRO 6000 Blackwell Server Edition": {"rtx-pro-server-6000", 0, true},
		"P100": {}, "L40": {}, "G2": {}, "MISC": {}, "GeForce GTX 1080 Ti": {}, "RTX 6000 Ada": {}, "V100X": {}, "": {}, "A100M99999999999999999999": {},
	} {
		name, gib, ok := ParseGPUType(in)
		if (want{name, gib, ok}) != w {
			t.Errorf("ParseGPUType(%q) = %q, %d, %v; want %q, %d, %v", in, name, gib, ok, w.name, w.gib, w.ok)
		}
	}
}

func TestMapGPUType(t *testing.T) {
	for _, tc := range []struct {
		cell     string
		models   []GPUModel
		unmapped []string
	}{
		{"V100", []GPUModel{{"v100", 0}}, nil},
		{"V100M32", []GPUModel{{"v100", 32768}}, nil},
		{"V100M16", []GPUModel{{"v100", 16384}}, nil},
		{"A100-SXM4-80GB", []GPUModel{{"a100", 81920}}, nil},
		{"A10", []GPUModel{{"a10g", 0}}, nil},
		{"A10 24GB", []GPUModel{{"a10g", 22888}}, nil}, // 24 GiB is within 10% of the A10G's 22,888 MiB
		{"V100M32|T4", []GPUModel{{"v100", 32768}, {"t4", 0}}, nil},
		{"P100|T4", []GPUModel{{"t4", 0}}, []string{"P100"}},
		{"P100", nil, []string{"P100"}},
		{"V100M64", nil, []string{"V100M64"}}, // no V100 of 64 GiB is sold
		{"H100", nil, []string{"H100"}},       // not in this catalog
		{"T4|T4", []GPUModel{{"t4", 0}}, nil},
		{"P100|P100", nil, []string{"P100"}}, // one row, one unmapped name
	} {
		models, unmapped := MapGPUType(tc.cell, gpuModelsSold)
		if !reflect.DeepEqual(models, tc.models) || !reflect.DeepEqual(unmapped, tc.unmapped) {
			t.Errorf("MapGPUType(%q) = %v, %q; want %v, %q", tc.cell, models, unmapped, tc.models, tc.unmapped)
		}
	}
}

// A trace's GPU types that map to nothing sold are counted by name, and a job whose
// alternatives include one that maps runs on it.
func TestTraceCountsUnmappedGPUTypes(t *testing.T) {
	csv := "submit_s,duration_s,replicas,cpu_milli,memory_mib,gpu,gpu_type\n" +
		"0,60,1,,,1,P100\n1,60,1,,,1,P100\n2,60,1,,,1,P100|V100M32\n3,60,1,,,2,G2\n4,60,1,,,1,V100M32\n"
	tr, skips, err := readTrace(t, csv, TraceOptions{CPUPerGPU: 1000, MemoryPerGPU: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tr.Unmapped, map[string]int{"P100": 3, "G2": 1}) {
		t.Errorf("unmapped %v; want P100 on 3 rows, G2 on 1", tr.Unmapped)
	}
	if len(skips) != 3 || len(tr.Rows) != 2 {
		t.Fatalf("%d rows kept, %d skipped (%v); want 2 and 3", len(tr.Rows), len(skips), skips)
	}
	w, err := tr.Workload(skips)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Shapes) != 1 {
		t.Errorf("%d shapes; the two V100M32 jobs are one", len(w.Shapes))
	}
	aff := w.Shapes[0].Pod.Spec.Affinity
	if aff == nil || len(aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) != 1 {
		t.Fatalf("the V100M32 shape needs one node affinity term: %+v", w.Shapes[0].Pod.Spec)
	}
	term := aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0]
	if len(term.MatchExpressions) != 2 || term.MatchExpressions[1].Values[0] != "32768" {
		t.Errorf("the term must ask for v100 with 32768 MiB: %+v", term)
	}
	found := false
	for _, a := range w.Assumptions {
		found = found || strings.Contains(a, `"P100" (3 rows), "G2" (1 rows)`)
	}
	if !found {
		t.Errorf("no assumption names the unmapped types with their rows: %q", w.Assumptions)
	}
}

func TestTraceWorkloadShapes(t *testing.T) {
	csv := "submit_s,duration_s,replicas,cpu_milli,memory_mib,gpu,gpu_type\n" +
		"5,60,2,,,1,\n0,60,1,,,1,\n1,60,1,,,1,V100\n"
	tr, skips, err := readTrace(t, csv, TraceOptions{CPUPerGPU: 1000, MemoryPerGPU: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	w, err := tr.Workload(skips)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Shapes) != 2 || w.Pods() != 4 {
		t.Fatalf("%d shapes, %d pods", len(w.Shapes), w.Pods())
	}
	if w.Jobs[0].Submit != 0 || w.Jobs[2].Submit != 5*time.Second {
		t.Errorf("jobs not in submission order: %+v", w.Jobs)
	}
	sh := w.Shapes[w.Jobs[1].Shape]
	if sh.Pod.Spec.NodeSelector["karpenter.k8s.aws/instance-gpu-name"] != "v100" || len(sh.Pod.Spec.Tolerations) != 1 {
		t.Errorf("V100 shape: %+v", sh.Pod.Spec)
	}
	if !sh.Simple() {
		t.Errorf("trace shapes are simple")
	}
}

func TestReadSchedule(t *testing.T) {
	s, err := ReadSchedule(strings.NewReader("# scale\ndeployment web replicas 4 at 1h\n\nsts db/cache replicas 2 at 90\nend at 3h\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Changes) != 2 || s.End != 3*time.Hour {
		t.Fatalf("%+v", s)
	}
	if c := s.Changes[0]; c.Kind != "StatefulSet" || c.Namespace != "db" || c.At != 90*time.Second || c.Line != 4 {
		t.Errorf("first change %+v", c)
	}
	if c := s.Changes[1]; c.Kind != "Deployment" || c.Namespace != "default" || c.Replicas != 4 || c.At != time.Hour {
		t.Errorf("second change %+v", c)
	}
	for _, bad := range []string{"deployment web replicas four at 1h", "deployment web at 1h", "daemonset x replicas 1 at 0", "deployment web replicas 1 at -5m"} {
		if _, err := ReadSchedule(strings.NewReader("\n" + bad)); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%q: got %v, want an error on line 2", bad, err)
		}
	}
}

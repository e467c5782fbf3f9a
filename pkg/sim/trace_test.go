package sim

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var gpuNames = []string{"a100", "k80", "t4", "v100"}

func readTrace(t *testing.T, csv string, opts TraceOptions) (*Trace, []Skip, error) {
	t.Helper()
	if opts.GPUNames == nil {
		opts.GPUNames = gpuNames
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
		{Line: 4, Submit: 20 * time.Second, Replicas: 1, CPUMilli: 3000, MemoryBytes: 12 << 30, GPU: 1, GPUName: "v100", GPUType: "V100"},
		{Line: 6, Submit: 30 * time.Second, Duration: 100 * time.Second, Replicas: 2, CPUMilli: 24000, MemoryBytes: 96 << 30, GPU: 8, GPUName: "k80", GPUType: "Tesla K80"},
	}
	if len(tr.Rows) != len(want) {
		t.Fatalf("got %d rows, want %d: %+v", len(tr.Rows), len(want), tr.Rows)
	}
	for i := range want {
		if tr.Rows[i] != want[i] {
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
		{"fractional gpu", "submit_s,duration_s,replicas,cpu_milli,memory_mib,gpu,gpu_type\n0,1,1,,,1.5,\n", 2, "whole numbers"},
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

func TestGPUName(t *testing.T) {
	for in, want := range map[string]string{"V100": "v100", "P100": "p100", "K80": "k80", "A100": "a100", "Tesla K80": "k80", "NVIDIA-A10G": "a10g", " t4 ": "t4", "RTX PRO 6000": "rtx-pro-6000"} {
		if got := GPUName(in); got != want {
			t.Errorf("GPUName(%q) = %q, want %q", in, got, want)
		}
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

package sim

import (
	"strings"
	"testing"
)

// FuzzReadTrace: the reader never panics, and a trace it accepts accounts for every data row,
// as a row or as a skip.
func FuzzReadTrace(f *testing.F) {
	f.Add("0,3600,1,,,1,\n1,-5,1,,,1,\n2,60,1,,,1,P100\n")
	f.Add("0,1,2,500,1024,0,\n\n3,4,1,,,8,V100\n")
	f.Add("1e3,NaN,1,,,1,\n")
	f.Add(`0,1,1,,,1,"a,b"` + "\n")
	f.Add("0,1,1,,,1,V100M32|P100\n1,1,1,,,2,NVIDIA A100-SXM4-80GB\n2,1,1,,,1,A10 24GB\n")
	f.Fuzz(func(t *testing.T, body string) {
		csv := "submit_s,duration_s,replicas,cpu_milli,memory_mib,gpu,gpu_type\n" + body
		tr, skips, err := ReadTrace(strings.NewReader(csv), TraceOptions{CPUPerGPU: 1000, MemoryPerGPU: 1 << 30, GPUModels: gpuModelsSold})
		if err != nil {
			return
		}
		for _, r := range tr.Rows {
			if r.Duration < 0 || r.Replicas < 1 || r.GPU < 0 || r.CPUMilli < 0 || r.MemoryBytes < 0 {
				t.Fatalf("accepted a row it should have skipped: %+v", r)
			}
		}
		lines := map[int]bool{}
		for _, r := range tr.Rows {
			lines[r.Line] = true
		}
		for _, s := range skips {
			if lines[s.Line] {
				t.Fatalf("line %d is both a row and a skip", s.Line)
			}
			lines[s.Line] = true
		}
		if len(lines) != len(tr.Rows)+len(skips) {
			t.Fatalf("rows and skips overlap")
		}
	})
}

package sim

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tenon-sh/tenon/pkg/catalog"
)

// TraceColumns are the columns a trace must have (in any order; others are ignored).
var TraceColumns = []string{"submit_s", "duration_s", "replicas", "cpu_milli", "memory_mib", "gpu", "gpu_type"}

// TraceOptions say how to read a trace.
type TraceOptions struct {
	// CPUPerGPU (millicores) and MemoryPerGPU (bytes) fill blank cpu_milli and memory_mib cells
	// of rows that ask for GPUs: a pod with g GPUs asks for g times as much.
	CPUPerGPU    int64
	MemoryPerGPU int64
	// CPUPerPod (millicores) and MemoryPerPod (bytes) fill blank cells of rows without GPUs;
	// when zero, such rows are skipped.
	CPUPerPod    int64
	MemoryPerPod int64
	// GPUModels are the GPU models the catalog sells (GPUModels of the manifests). A gpu_type
	// none of whose names maps to one of them (MapGPUType) is skipped. Nil accepts any model
	// MapGPUType can read.
	GPUModels []GPUModel
	// GPUShares, when positive, serves a fraction of a GPU (gpu below 1) from GPUs shared
	// GPUShares ways (time-slicing: the device plugin advertises each GPU as GPUShares
	// replicas of ResourceGPUShared): such a pod asks for ceil(gpu × GPUShares) shares. A
	// fraction above 1 is rounded up to whole GPUs. Zero refuses fractional GPUs.
	GPUShares int64
	// MIGProfile, when set ("1g.10gb"), serves a fraction of a GPU from MIG instances of that
	// profile instead (NodePools in layout all-<profile>, whose nodes advertise
	// nvidia.com/mig-<profile>): such a pod asks for ceil(gpu × N) instances, N the profile's
	// instances per GPU (MIGShares). Exclusive with GPUShares.
	MIGProfile string
	// Strict turns every skip into an error.
	Strict bool
}

// MaxGPUShares is the most ways a GPU may be shared (TraceOptions.GPUShares).
const MaxGPUShares = 1024

// MIGShares returns how many instances of a MIG profile one GPU holds (the most any GPU
// that has the profile holds: 7 of 1g.10gb on an H100 or an A100 80 GB), or an error naming
// the profile when no GPU tenon knows has it.
func MIGShares(profile string) (int64, error) {
	n := catalog.MaxMIGPerGPU(profile)
	if n == 0 {
		return 0, fmt.Errorf("MIG profile %q: no A100, H100, H200 or B200 has a profile of that name (1g.10gb, 2g.20gb, 3g.40gb, …)", profile)
	}
	return int64(n), nil
}

// ResourceGPUShared is the resource of a shared GPU's replicas: the NVIDIA device plugin's
// time-slicing advertises it (with renameByDefault) on nodes whose GPUs are shared, each GPU
// as GPUShares of them.
const ResourceGPUShared corev1.ResourceName = "nvidia.com/gpu.shared"

// Trace is a job trace as read: one row per job, in file order.
type Trace struct {
	Rows []TraceRow
	// Filled counts the rows whose CPU or memory came from the options.
	Filled int
	// Unmapped counts, by name, the rows whose gpu_type named a GPU that maps to no model the
	// catalog sells (a row whose every alternative is unmapped is also skipped).
	Unmapped map[string]int
	// Shared counts the rows served by GPU shares (TraceOptions.GPUShares); RoundedUp the rows
	// whose fraction above one GPU was rounded up to whole GPUs.
	Shared, RoundedUp int
	options           TraceOptions
}

// TraceRow is one job of a trace.
type TraceRow struct {
	Line     int
	Submit   time.Duration
	Duration time.Duration
	Replicas int
	// CPUMilli and MemoryBytes are per pod (per replica), after filling blanks.
	CPUMilli    int64
	MemoryBytes int64
	GPU         int64
	// GPUShares is the shares of a shared GPU the pod asks for instead of whole GPUs
	// (TraceOptions.GPUShares; GPU is then 0).
	GPUShares int64
	// GPUModels are the GPU models the job may run on (none: any NVIDIA GPU); GPUType is the
	// trace's own name for them.
	GPUModels []GPUModel
	GPUType   string
}

// Skip is a row left out of a trace, and why.
type Skip struct {
	Line int
	// Reason is the kind of problem ("negative duration", "unknown GPU type", ...), Detail the
	// specifics.
	Reason string
	Detail string
}

func (s Skip) String() string { return fmt.Sprintf("line %d: %s: %s", s.Line, s.Reason, s.Detail) }

// Skip reasons.
const (
	SkipNegative   = "negative value"
	SkipDuration   = "negative duration"
	SkipReplicas   = "no replicas"
	SkipGPUType    = "unknown GPU type"
	SkipNoRequests = "no CPU or memory request"
	SkipGPUTypeNo  = "GPU type without GPUs"
)

// TraceError is an error about one line of a trace.
type TraceError struct {
	Line int
	Err  error
}

func (e *TraceError) Error() string { return fmt.Sprintf("trace line %d: %v", e.Line, e.Err) }
func (e *TraceError) Unwrap() error { return e.Err }

// ReadTrace reads a CSV trace with the columns of TraceColumns (a header line first). A row
// that cannot be read (missing columns, a number that does not parse) is an error naming its
// line. A row that reads but cannot be simulated (a negative duration or count, a GPU type the
// catalog does not sell, no replicas, no requests and nothing to fill them with) is skipped and
// returned as a Skip, or is an error with Strict. Nothing is dropped silently: every data row
// is either in the Trace or in the skips.
func ReadTrace(r io.Reader, opts TraceOptions) (*Trace, []Skip, error) {
	if opts.GPUShares < 0 || opts.GPUShares > MaxGPUShares {
		return nil, nil, fmt.Errorf("GPU shares %d: a GPU is shared between 1 and %d ways (0: no sharing)", opts.GPUShares, MaxGPUShares)
	}
	if opts.MIGProfile != "" {
		if opts.GPUShares > 0 {
			return nil, nil, errors.New("fractions of a GPU are served either from shared GPUs (GPU shares) or from MIG instances (a MIG profile), not both")
		}
		n, err := MIGShares(opts.MIGProfile)
		if err != nil {
			return nil, nil, err
		}
		opts.GPUShares = n // a fraction of a GPU asks for its share of the GPU's instances
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, nil, &TraceError{Line: 1, Err: errors.New("empty trace: no header")}
	}
	if err != nil {
		return nil, nil, &TraceError{Line: 1, Err: err}
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	idx := make([]int, len(TraceColumns))
	var missing []string
	for i, name := range TraceColumns {
		j, ok := col[name]
		if !ok {
			missing = append(missing, name)
		}
		idx[i] = j
	}
	if len(missing) > 0 {
		return nil, nil, &TraceError{Line: 1, Err: fmt.Errorf("the header lacks column(s) %s (want %s)", strings.Join(missing, ", "), strings.Join(TraceColumns, ","))}
	}
	width := slices.Max(idx) + 1
	var sold []GPUModel
	if len(opts.GPUModels) > 0 {
		sold = opts.GPUModels
	}
	t := &Trace{options: opts, Unmapped: map[string]int{}}
	var skips []Skip
	line := 1
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, nil, &TraceError{Line: pe.Line, Err: pe.Err}
			}
			return nil, nil, &TraceError{Line: line + 1, Err: err}
		}
		line, _ = cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue // a blank line
		}
		if len(rec) < width {
			return nil, nil, &TraceError{Line: line, Err: fmt.Errorf("%d fields, want at least %d (%s)", len(rec), width, strings.Join(TraceColumns, ","))}
		}
		row, skip, err := parseRow(rec, idx, line, &opts, sold)
		if err != nil {
			return nil, nil, &TraceError{Line: line, Err: err}
		}
		for _, u := range row.unmapped {
			t.Unmapped[u]++
		}
		if skip != nil {
			if opts.Strict {
				return nil, nil, &TraceError{Line: line, Err: fmt.Errorf("%s: %s", skip.Reason, skip.Detail)}
			}
			skips = append(skips, *skip)
			continue
		}
		if row.filled {
			t.Filled++
		}
		if row.GPUShares > 0 {
			t.Shared++
		}
		if row.roundedUp {
			t.RoundedUp++
		}
		t.Rows = append(t.Rows, row.TraceRow)
	}
	return t, skips, nil
}

type parsedRow struct {
	TraceRow
	filled    bool
	roundedUp bool     // a fraction of a GPU above one, rounded up
	unmapped  []string // names of its gpu_type that map to no model sold
}

// parseRow reads one record; the columns are TraceColumns through idx.
func parseRow(rec []string, idx []int, line int, opts *TraceOptions, sold []GPUModel) (parsedRow, *Skip, error) {
	field := func(i int) string { return strings.TrimSpace(rec[idx[i]]) }
	num := func(i int, blankOK bool) (float64, bool, error) {
		s := field(i)
		if s == "" {
			if blankOK {
				return 0, false, nil
			}
			return 0, false, fmt.Errorf("%s is blank", TraceColumns[i])
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, false, fmt.Errorf("%s %q is not a number", TraceColumns[i], s)
		}
		return v, true, nil
	}
	var vals [6]float64
	var present [6]bool
	for i := range 6 {
		blankOK := i == 3 || i == 4 || i == 5 // cpu, memory, gpu may be blank
		v, ok, err := num(i, blankOK)
		if err != nil {
			return parsedRow{}, nil, err
		}
		vals[i], present[i] = v, ok
	}
	skip := func(reason, format string, args ...any) (parsedRow, *Skip, error) {
		return parsedRow{}, &Skip{Line: line, Reason: reason, Detail: fmt.Sprintf(format, args...)}, nil
	}
	submit, duration, replicas, cpu, mem, gpu := vals[0], vals[1], vals[2], vals[3], vals[4], vals[5]
	switch {
	case duration < 0:
		return skip(SkipDuration, "duration_s %s", field(1))
	case submit < 0 || cpu < 0 || mem < 0 || gpu < 0 || replicas < 0:
		return skip(SkipNegative, "submit_s, replicas, cpu_milli, memory_mib and gpu must not be negative")
	case replicas < 1:
		return skip(SkipReplicas, "replicas %s", field(2))
	case replicas != math.Trunc(replicas):
		return parsedRow{}, nil, fmt.Errorf("replicas %s must be a whole number", field(2))
	case gpu != math.Trunc(gpu) && opts.GPUShares <= 0:
		return parsedRow{}, nil, fmt.Errorf("gpu %s is a fraction of a GPU: give GPU shares (tenon simulate --gpu-shares N) to serve fractions from GPUs shared N ways, or a MIG profile (--gpu-mig 1g.10gb) to serve them from MIG instances", field(5))
	case gpu > float64(math.MaxInt32):
		return parsedRow{}, nil, fmt.Errorf("gpu %s is more GPUs than any instance has", field(5))
	}
	row := parsedRow{TraceRow: TraceRow{
		Line:     line,
		Submit:   seconds(submit),
		Duration: seconds(duration),
		Replicas: int(replicas),
		GPU:      int64(math.Ceil(gpu)),
		GPUType:  field(6),
	}}
	switch {
	case gpu == math.Trunc(gpu):
	case gpu < 1:
		row.GPU, row.GPUShares = 0, max(int64(math.Ceil(gpu*float64(opts.GPUShares)-1e-9)), 1)
	default:
		row.roundedUp = true
	}
	if row.GPUType != "" {
		if row.GPU == 0 && row.GPUShares == 0 {
			return skip(SkipGPUTypeNo, "gpu_type %q on a row with no GPUs", row.GPUType)
		}
		models, unmapped := MapGPUType(row.GPUType, sold)
		if len(models) == 0 {
			out, sk, err := skip(SkipGPUType, "%q is no GPU model the catalog sells", row.GPUType)
			out.unmapped = unmapped
			return out, sk, err
		}
		row.GPUModels, row.unmapped = models, unmapped
	}
	row.CPUMilli, row.MemoryBytes = int64(math.Ceil(cpu)), int64(math.Ceil(mem*(1<<20)))
	if !present[3] || !present[4] {
		perCPU, perMem := opts.CPUPerPod, opts.MemoryPerPod
		switch {
		case row.GPU > 0:
			perCPU, perMem = opts.CPUPerGPU*row.GPU, opts.MemoryPerGPU*row.GPU
		case row.GPUShares > 0: // its share of a GPU's CPU and memory, at least a tenth
			perCPU = max(opts.CPUPerGPU*row.GPUShares/opts.GPUShares, opts.CPUPerGPU/10)
			perMem = max(opts.MemoryPerGPU*row.GPUShares/opts.GPUShares, opts.MemoryPerGPU/10)
		}
		if !present[3] {
			row.CPUMilli = perCPU
		}
		if !present[4] {
			row.MemoryBytes = perMem
		}
		row.filled = true
	}
	if row.CPUMilli == 0 && row.MemoryBytes == 0 && row.GPU == 0 && row.GPUShares == 0 {
		return skip(SkipNoRequests, "the row asks for nothing (give --cpu-per-pod and --memory-per-pod to fill blank cells)")
	}
	return row, nil, nil
}

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }

// SkipCounts returns how many rows were skipped per reason, in the order reasons first appear.
func SkipCounts(skips []Skip) []SkipCount {
	var out []SkipCount
	at := map[string]int{}
	for _, s := range skips {
		i, ok := at[s.Reason]
		if !ok {
			i = len(out)
			at[s.Reason] = i
			out = append(out, SkipCount{Reason: s.Reason, FirstLine: s.Line, Example: s.Detail})
		}
		out[i].Count++
	}
	return out
}

// SkipCount is how many rows one reason skipped, with the first of them.
type SkipCount struct {
	Reason    string `json:"reason"`
	Count     int    `json:"count"`
	FirstLine int    `json:"firstLine"`
	Example   string `json:"example"`
}

// shareResource is the resource a pod asking for a fraction of a GPU asks for: the MIG
// profile's instances, or a shared GPU's replicas.
func (o TraceOptions) shareResource() corev1.ResourceName {
	if o.MIGProfile != "" {
		return catalog.MIG{Profile: o.MIGProfile}.Resource()
	}
	return ResourceGPUShared
}

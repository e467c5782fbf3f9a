package sim

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// TraceNamespace is the namespace of the pods of a trace.
const TraceNamespace = "trace"

// Workload turns the trace into jobs of pod shapes. Every row becomes one job of Replicas
// identical pods (its pods arrive together; each is scheduled on its own unless
// Options.Gangs makes the job a gang). A pod asks for the row's CPU and memory and, with GPUs,
// as many nvidia.com/gpu (with a fraction of a GPU and TraceOptions.GPUShares, its shares of
// ResourceGPUShared, tolerating that taint too); it tolerates the nvidia.com/gpu taint, as the ExtendedResourceToleration
// admission plugin makes GPU pods do; a named GPU type becomes a node selector on
// karpenter.k8s.aws/instance-gpu-name (and karpenter.k8s.aws/instance-gpu-memory for a memory
// variant), alternatives ("A|B") required node affinity terms, one per model, and a blank one
// allows any NVIDIA GPU.
func (t *Trace) Workload(skips []Skip) (*Workload, error) {
	w := &Workload{Skips: skips}
	type key struct {
		cpu, mem, gpu, shares int64
		models                string
	}
	shapes := map[key]int{}
	named := 0
	for _, r := range t.Rows {
		k := key{r.CPUMilli, r.MemoryBytes, r.GPU, r.GPUShares, fmt.Sprint(r.GPUModels)}
		si, ok := shapes[k]
		if !ok {
			si = len(w.Shapes)
			shapes[k] = si
			w.Shapes = append(w.Shapes, traceShape(si, r, t.options.GPUShares, t.options.shareResource()))
		}
		if len(r.GPUModels) > 0 {
			named++
		}
		w.Jobs = append(w.Jobs, Job{Line: r.Line, Submit: r.Submit, Duration: r.Duration, Replicas: r.Replicas, Shape: si})
	}
	if t.Shared > 0 {
		w.GPUShares, w.ShareResource = t.options.GPUShares, t.options.shareResource()
	}
	w.sortJobs()
	if err := w.compile(); err != nil {
		return nil, err
	}
	o := t.options
	if t.Filled > 0 {
		fill := fmt.Sprintf("%d of %d trace rows had blank cpu_milli or memory_mib: filled with %s CPU and %s memory per GPU",
			t.Filled, len(t.Rows), milliString(o.CPUPerGPU), bytesString(o.MemoryPerGPU))
		if o.CPUPerPod > 0 || o.MemoryPerPod > 0 {
			fill += fmt.Sprintf(", and %s CPU and %s memory per pod without GPUs", milliString(o.CPUPerPod), bytesString(o.MemoryPerPod))
		}
		w.Assumptions = append(w.Assumptions, fill)
	}
	w.Assumptions = append(w.Assumptions,
		"GPU pods request nvidia.com/gpu and tolerate the nvidia.com/gpu taint (as the ExtendedResourceToleration admission plugin adds)",
		fmt.Sprintf("gpu_type maps to karpenter.k8s.aws/instance-gpu-name and, for a memory variant, instance-gpu-memory (V100 → v100, V100M32 → v100 with 32 GiB, A100-SXM4-80GB → a100 with 80 GiB, Tesla K80 → k80; A|B is either), by the table of pkg/sim/gpunames.go; the A10, which AWS does not sell, maps to its sibling the A10G; %d jobs name a type, the others allow any NVIDIA GPU", named),
		"a job with replicas > 1 is that many identical pods submitted together, each scheduled on its own unless --gangs makes the job a gang")
	switch {
	case t.options.MIGProfile != "" && (t.Shared > 0 || t.RoundedUp > 0):
		w.Assumptions = append(w.Assumptions, fmt.Sprintf(
			"%d trace rows ask for a fraction of a GPU: served from MIG instances %s (%d per GPU where the GPU has that many): each asks for ceil(gpu × %d) of %s, which only NodePools whose GPUs are in MIG layout all-%s offer (A100, H100, H200, B200), and tolerates their %s taint; a row naming another GPU model cannot run; %d rows asking for more than one GPU but not a whole number were rounded up to whole GPUs",
			t.Shared, t.options.MIGProfile, t.options.GPUShares, t.options.GPUShares, t.options.shareResource(), t.options.MIGProfile, t.options.shareResource(), t.RoundedUp))
	case t.Shared > 0 || t.RoundedUp > 0:
		w.Assumptions = append(w.Assumptions, fmt.Sprintf(
			"%d trace rows ask for a fraction of a GPU: served from GPUs shared %d ways (time-slicing: each asks for ceil(gpu × %d) of %s, which only NodePools whose GPUs are shared offer, and tolerates their %s taint; blank CPU and memory are its share of a GPU's); %d rows asking for more than one GPU but not a whole number were rounded up to whole GPUs",
			t.Shared, t.options.GPUShares, t.options.GPUShares, ResourceGPUShared, ResourceGPUShared, t.RoundedUp))
	}
	if len(t.Unmapped) > 0 {
		names := slices.SortedFunc(maps.Keys(t.Unmapped), func(a, b string) int {
			return cmp.Or(cmp.Compare(t.Unmapped[b], t.Unmapped[a]), cmp.Compare(a, b))
		})
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = fmt.Sprintf("%q (%d rows)", n, t.Unmapped[n])
		}
		w.Assumptions = append(w.Assumptions, "gpu_type names that map to no GPU model the catalog sells (a row with no other alternative is skipped): "+strings.Join(parts, ", "))
	}
	if len(skips) > 0 {
		w.Assumptions = append(w.Assumptions, fmt.Sprintf("%d trace rows were skipped (see the skipped rows)", len(skips)))
	}
	return w, nil
}

func traceShape(i int, r TraceRow, shares int64, shareRes corev1.ResourceName) Shape {
	req := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(r.CPUMilli, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(r.MemoryBytes, resource.BinarySI),
	}
	var lim corev1.ResourceList
	var tol []corev1.Toleration
	var sel map[string]string
	var affinity *corev1.Affinity
	name := fmt.Sprintf("%s cpu, %s", milliString(r.CPUMilli), bytesString(r.MemoryBytes))
	if r.GPU > 0 || r.GPUShares > 0 {
		gpuRes, count := scheduling.ResourceNvidiaGPU, r.GPU
		tol = []corev1.Toleration{{Key: string(scheduling.ResourceNvidiaGPU), Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
		if r.GPUShares > 0 {
			gpuRes, count = shareRes, r.GPUShares
			tol = append(tol, corev1.Toleration{Key: string(shareRes), Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
		}
		q := *resource.NewQuantity(count, resource.DecimalSI)
		req[gpuRes] = q
		lim = corev1.ResourceList{gpuRes: q}
		gpu := "any"
		switch {
		case len(r.GPUModels) == 1 && r.GPUModels[0].MemoryMiB == 0:
			sel = map[string]string{apisv1.LabelInstanceGPUName: r.GPUModels[0].Name}
			gpu = r.GPUModels[0].Name
		case len(r.GPUModels) > 0:
			var terms []corev1.NodeSelectorTerm
			names := make([]string, len(r.GPUModels))
			for i, m := range r.GPUModels {
				exprs := []corev1.NodeSelectorRequirement{{Key: apisv1.LabelInstanceGPUName, Operator: corev1.NodeSelectorOpIn, Values: []string{m.Name}}}
				names[i] = m.Name
				if m.MemoryMiB > 0 {
					exprs = append(exprs, corev1.NodeSelectorRequirement{Key: apisv1.LabelInstanceGPUMemory, Operator: corev1.NodeSelectorOpIn, Values: []string{strconv.FormatInt(m.MemoryMiB, 10)}})
					names[i] += fmt.Sprintf(" %dGi", m.MemoryMiB>>10)
				}
				terms = append(terms, corev1.NodeSelectorTerm{MatchExpressions: exprs})
			}
			affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
			gpu = strings.Join(names, "|")
		}
		if r.GPUShares > 0 {
			name = fmt.Sprintf("%d/%d of a %s GPU, %s", r.GPUShares, shares, gpu, name)
		} else {
			name = fmt.Sprintf("%d×%s GPU, %s", r.GPU, gpu, name)
		}
	}
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: TraceNamespace,
			Labels:    map[string]string{"sim.tenon.sh/shape": fmt.Sprint(i)},
		},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			NodeSelector:  sel,
			Affinity:      affinity,
			Tolerations:   tol,
			Containers:    []corev1.Container{{Name: "job", Image: "trace", Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}},
		},
	}
	return Shape{Name: name, Pod: pod}
}

func milliString(m int64) string {
	return resource.NewMilliQuantity(m, resource.DecimalSI).String()
}

func bytesString(b int64) string {
	return resource.NewQuantity(b, resource.BinarySI).String()
}

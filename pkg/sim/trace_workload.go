package sim

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// TraceNamespace is the namespace of the pods of a trace.
const TraceNamespace = "trace"

// Workload turns the trace into jobs of pod shapes. Every row becomes one job of Replicas
// identical pods (a multi-replica job is gang-like: its pods arrive together, each is
// scheduled on its own). A pod asks for the row's CPU and memory and, with GPUs, as many
// nvidia.com/gpu; it tolerates the nvidia.com/gpu taint, as the ExtendedResourceToleration
// admission plugin makes GPU pods do; a named GPU type becomes a node selector on
// karpenter.k8s.aws/instance-gpu-name, and a blank one allows any NVIDIA GPU.
func (t *Trace) Workload(skips []Skip) (*Workload, error) {
	w := &Workload{Skips: skips}
	type key struct {
		cpu, mem, gpu int64
		name          string
	}
	shapes := map[key]int{}
	named := 0
	for _, r := range t.Rows {
		k := key{r.CPUMilli, r.MemoryBytes, r.GPU, r.GPUName}
		si, ok := shapes[k]
		if !ok {
			si = len(w.Shapes)
			shapes[k] = si
			w.Shapes = append(w.Shapes, traceShape(si, r))
		}
		if r.GPUName != "" {
			named++
		}
		w.Jobs = append(w.Jobs, Job{Line: r.Line, Submit: r.Submit, Duration: r.Duration, Replicas: r.Replicas, Shape: si})
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
		fmt.Sprintf("gpu_type maps to karpenter.k8s.aws/instance-gpu-name (V100 → v100, K80 → k80, A100 → a100); %d jobs name a type, the others allow any NVIDIA GPU", named),
		"a job with replicas > 1 is that many identical pods submitted together, each scheduled on its own")
	if len(skips) > 0 {
		w.Assumptions = append(w.Assumptions, fmt.Sprintf("%d trace rows were skipped (see the skipped rows)", len(skips)))
	}
	return w, nil
}

func traceShape(i int, r TraceRow) Shape {
	req := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(r.CPUMilli, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(r.MemoryBytes, resource.BinarySI),
	}
	var lim corev1.ResourceList
	var tol []corev1.Toleration
	var sel map[string]string
	name := fmt.Sprintf("%s cpu, %s", milliString(r.CPUMilli), bytesString(r.MemoryBytes))
	if r.GPU > 0 {
		q := *resource.NewQuantity(r.GPU, resource.DecimalSI)
		req[scheduling.ResourceNvidiaGPU] = q
		lim = corev1.ResourceList{scheduling.ResourceNvidiaGPU: q}
		tol = []corev1.Toleration{{Key: string(scheduling.ResourceNvidiaGPU), Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
		gpu := "any"
		if r.GPUName != "" {
			sel = map[string]string{apisv1.LabelInstanceGPUName: r.GPUName}
			gpu = r.GPUName
		}
		name = fmt.Sprintf("%d×%s GPU, %s", r.GPU, gpu, name)
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

package sim

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// Forever is the Duration of a job that runs until the simulation ends.
const Forever time.Duration = -1

// Workload is what a simulation replays: jobs that arrive over time, each made of identical
// pods of one Shape. A trace (ReadTrace) and manifests with a scaling schedule
// (ScheduleWorkload) both become a Workload.
type Workload struct {
	// Shapes are the kinds of pod the jobs are made of.
	Shapes []Shape
	// Jobs are ordered by Submit (stable: equal times keep the input's order).
	Jobs []Job
	// DaemonSets run on every node they tolerate; the solver reserves their requests.
	DaemonSets []solver.DaemonSet
	// End, when positive, is when the workload stops (a schedule's horizon): jobs that run
	// Forever end there.
	End time.Duration
	// GPUShares is how many shares each shared GPU is split into (TraceOptions.GPUShares; 0:
	// no pod asks for shares).
	GPUShares int64
	// ShareResource is what a pod asking for shares asks for: ResourceGPUShared, or a MIG
	// profile's nvidia.com/mig-<profile> (TraceOptions.MIGProfile).
	ShareResource corev1.ResourceName
	// Assumptions are the choices made reading the input (requests filled in, requirements
	// added), for the report.
	Assumptions []string
	// Skipped counts the input rows left out, by reason; Skips lists them (line numbers).
	Skips []Skip

	least scheduling.Resources // element-wise minimum of the shapes' requests
}

// Job is Replicas pods of shape Shape submitted at Submit that each run for Duration (Forever:
// until the workload's end).
type Job struct {
	// Line is the job's line in its trace (0 when it did not come from a trace).
	Line     int
	Submit   time.Duration
	Duration time.Duration
	Replicas int
	Shape    int
}

// Shape is a kind of pod: what it requests and where it may run. Pod is the template the solver
// sees (every pod of the shape is a shallow copy with its own name).
type Shape struct {
	Name     string
	Requests scheduling.Resources // with the Pods slot at 1
	Pod      *corev1.Pod

	alts        []scheduling.Requirements
	tolerations []corev1.Toleration
}

// compile reads the template's requests and node requirements.
func (s *Shape) compile() error {
	req, err := scheduling.PodRequests(s.Pod)
	if err != nil {
		return fmt.Errorf("shape %s: %w", s.Name, err)
	}
	s.Requests = req
	if s.alts, err = scheduling.PodNodeRequirements(s.Pod); err != nil {
		return fmt.Errorf("shape %s: %w", s.Name, err)
	}
	s.tolerations = s.Pod.Spec.Tolerations
	return nil
}

// Simple reports whether the shape's pods carry no constraint beyond resources, node
// requirements and tolerations: no topology spread, pod affinity or anti-affinity, preferred
// node affinity or host port. Packing simple pods onto free room is a first fit.
func (s *Shape) Simple() bool {
	spec := &s.Pod.Spec
	if len(spec.TopologySpreadConstraints) > 0 {
		return false
	}
	if a := spec.Affinity; a != nil {
		if a.PodAffinity != nil || a.PodAntiAffinity != nil {
			return false
		}
		if a.NodeAffinity != nil && len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
			return false
		}
	}
	return len(scheduling.PodHostPorts(s.Pod)) == 0
}

// Pods returns the number of pods the workload submits.
func (w *Workload) Pods() int {
	n := 0
	for i := range w.Jobs {
		n += w.Jobs[i].Replicas
	}
	return n
}

// Span returns when the last job would end if every job started at its submission; jobs that
// run Forever end at End (or at their submission when End is unset).
func (w *Workload) Span() time.Duration {
	var end time.Duration
	for i := range w.Jobs {
		j := &w.Jobs[i]
		e := j.Submit + j.Duration
		if j.Duration == Forever {
			e = max(w.End, j.Submit)
		}
		end = max(end, e)
	}
	return max(end, w.End)
}

// Prefix returns the workload cut to its first n jobs (n ≤ 0: all of them).
func (w *Workload) Prefix(n int) *Workload {
	if n <= 0 || n >= len(w.Jobs) {
		return w
	}
	out := *w
	out.Jobs = w.Jobs[:n:n]
	return &out
}

func (w *Workload) sortJobs() {
	slices.SortStableFunc(w.Jobs, func(a, b Job) int {
		switch {
		case a.Submit < b.Submit:
			return -1
		case a.Submit > b.Submit:
			return 1
		}
		return 0
	})
}

// compile prepares every shape.
func (w *Workload) compile() error {
	for i := range w.Shapes {
		if err := w.Shapes[i].compile(); err != nil {
			return err
		}
		if i == 0 {
			w.least = w.Shapes[0].Requests
		}
		for r, v := range w.Shapes[i].Requests {
			w.least[r] = min(w.least[r], v)
		}
	}
	return nil
}

package sim

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tenon-sh/tenon/pkg/manifest"
)

// Schedule is a scaling schedule: replica counts of workloads over time, and when it ends.
type Schedule struct {
	Changes []Change
	// End is the horizon ("end at T"); zero when the schedule does not say.
	End time.Duration
}

// Change sets the replicas of a Deployment, ReplicaSet or StatefulSet at a time.
type Change struct {
	Line      int
	Kind      string // "Deployment", "ReplicaSet", "StatefulSet"
	Namespace string
	Name      string
	Replicas  int
	At        time.Duration
}

var scheduleKinds = map[string]string{
	"deployment": "Deployment", "deploy": "Deployment", "replicaset": "ReplicaSet", "rs": "ReplicaSet",
	"statefulset": "StatefulSet", "sts": "StatefulSet",
}

// ReadSchedule reads a scaling schedule, one change per line:
//
//	deployment web replicas 10 at 0s
//	deployment demo/api replicas 40 at 2h30m
//	statefulset db replicas 3 at 90m
//	end at 12h
//
// Kinds are deployment, replicaset and statefulset (or deploy, rs, sts); a name without a
// namespace is in "default"; times are Go durations or seconds. Blank lines and lines starting
// with # are ignored. Errors name the line.
func ReadSchedule(r io.Reader) (*Schedule, error) {
	s := &Schedule{}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) == 3 && f[0] == "end" && f[1] == "at" {
			at, err := parseAt(f[2])
			if err != nil {
				return nil, fmt.Errorf("schedule line %d: %w", line, err)
			}
			s.End = at
			continue
		}
		kind, ok := scheduleKinds[strings.ToLower(f[0])]
		if len(f) != 6 || !ok || f[2] != "replicas" || f[4] != "at" {
			return nil, fmt.Errorf("schedule line %d: want \"deployment|replicaset|statefulset [NAMESPACE/]NAME replicas N at TIME\" or \"end at TIME\"", line)
		}
		n, err := strconv.Atoi(f[3])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("schedule line %d: replicas %q is not a count", line, f[3])
		}
		at, err := parseAt(f[5])
		if err != nil {
			return nil, fmt.Errorf("schedule line %d: %w", line, err)
		}
		ns, name, found := strings.Cut(f[1], "/")
		if !found {
			ns, name = "default", f[1]
		}
		s.Changes = append(s.Changes, Change{Line: line, Kind: kind, Namespace: ns, Name: name, Replicas: n, At: at})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	slices.SortStableFunc(s.Changes, func(a, b Change) int { return cmp.Compare(a.At, b.At) })
	return s, nil
}

func parseAt(s string) (time.Duration, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil && v >= 0 {
		return seconds(v), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("time %q is not a non-negative duration", s)
	}
	return d, nil
}

// ScheduleWorkload turns manifests and a scaling schedule (nil: none) into a workload. Every
// pod the manifests' workloads create runs from time 0; the schedule scales Deployments,
// ReplicaSets and StatefulSets up (new pods from their template) and down (the newest pods go
// first). Pods run until they are scaled away or until the end: the schedule's "end at", else
// end if positive, else an hour after the last change. Job pods run until the end too: the
// manifests do not say how long they take.
func ScheduleWorkload(set *manifest.Set, sched *Schedule, end time.Duration) (*Workload, error) {
	if sched == nil {
		sched = &Schedule{}
	}
	w := &Workload{}
	switch {
	case sched.End > 0:
		w.End = sched.End
	case end > 0:
		w.End = end
	default:
		last := time.Duration(0)
		for _, c := range sched.Changes {
			last = max(last, c.At)
		}
		w.End = last + time.Hour
	}
	type owned struct {
		kind, ns, name string
		shape          int
		starts         []time.Duration
		replicas       int
	}
	var owners []*owned
	byKey := map[string]*owned{}
	for _, p := range set.Pods() {
		kind, name := podOwner(set, p)
		key := kind + "/" + p.Namespace + "/" + name
		o := byKey[key]
		if o == nil {
			tmpl := p.DeepCopy()
			tmpl.Name = ""
			w.Shapes = append(w.Shapes, Shape{Name: fmt.Sprintf("%s %s/%s", kind, p.Namespace, name), Pod: tmpl})
			o = &owned{kind: kind, ns: p.Namespace, name: name, shape: len(w.Shapes) - 1}
			owners = append(owners, o)
			byKey[key] = o
		}
		o.starts = append(o.starts, 0)
		o.replicas++
	}
	for _, c := range sched.Changes {
		if c.At > w.End {
			continue
		}
		o := byKey[c.Kind+"/"+c.Namespace+"/"+c.Name]
		if o == nil {
			shape, err := scaledShape(set, c)
			if err != nil {
				return nil, err
			}
			w.Shapes = append(w.Shapes, shape)
			o = &owned{kind: c.Kind, ns: c.Namespace, name: c.Name, shape: len(w.Shapes) - 1}
			owners = append(owners, o)
			byKey[c.Kind+"/"+c.Namespace+"/"+c.Name] = o
		}
		for len(o.starts) < c.Replicas {
			o.starts = append(o.starts, c.At)
		}
		for len(o.starts) > c.Replicas {
			start := o.starts[len(o.starts)-1]
			o.starts = o.starts[:len(o.starts)-1]
			w.Jobs = append(w.Jobs, Job{Line: c.Line, Submit: start, Duration: c.At - start, Replicas: 1, Shape: o.shape})
		}
	}
	for _, o := range owners {
		for _, start := range o.starts {
			w.Jobs = append(w.Jobs, Job{Submit: start, Duration: Forever, Replicas: 1, Shape: o.shape})
		}
	}
	w.sortJobs()
	if err := w.compile(); err != nil {
		return nil, err
	}
	w.Assumptions = append(w.Assumptions,
		fmt.Sprintf("the manifests' pods run from time 0; %d scaling changes apply; the workload ends at %s", len(sched.Changes), w.End),
		"scaling down removes the newest pods first; Job pods run until the end")
	return w, nil
}

// podOwner names the workload a pod of the Set belongs to: its Deployment (through the
// ReplicaSet it names), ReplicaSet, StatefulSet, Job, or the pod itself.
func podOwner(set *manifest.Set, p *corev1.Pod) (string, string) {
	for _, ref := range p.OwnerReferences {
		if ref.Controller == nil || !*ref.Controller {
			continue
		}
		if ref.Kind == "ReplicaSet" {
			for _, d := range set.Deployments {
				if d.Namespace == p.Namespace && strings.HasPrefix(ref.Name, d.Name+"-") && p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] != "" {
					return "Deployment", d.Name
				}
			}
		}
		return ref.Kind, ref.Name
	}
	return "Pod", p.Name
}

// scaledShape builds the pod template of a workload the manifests define with no pods (zero
// replicas) by expanding a copy of it with one replica.
func scaledShape(set *manifest.Set, c Change) (Shape, error) {
	one := int32(1)
	var obj runtime.Object
	switch c.Kind {
	case "Deployment":
		for _, d := range set.Deployments {
			if d.Namespace == c.Namespace && d.Name == c.Name {
				cp := d.DeepCopy()
				cp.Spec.Replicas = &one
				obj = cp
			}
		}
	case "ReplicaSet":
		for _, rs := range set.ReplicaSets {
			if rs.Namespace == c.Namespace && rs.Name == c.Name {
				cp := rs.DeepCopy()
				cp.Spec.Replicas = &one
				obj = cp
			}
		}
	case "StatefulSet":
		for _, s := range set.StatefulSets {
			if s.Namespace == c.Namespace && s.Name == c.Name {
				cp := s.DeepCopy()
				cp.Spec.Replicas = &one
				obj = cp
			}
		}
	}
	if obj == nil {
		return Shape{}, fmt.Errorf("schedule line %d: %s %s/%s is not in the manifests", c.Line, strings.ToLower(c.Kind), c.Namespace, c.Name)
	}
	one1 := &manifest.Set{Objects: []manifest.Object{{Object: obj}}, PriorityClasses: set.PriorityClasses, RuntimeClasses: set.RuntimeClasses}
	pods := one1.Pods()
	if len(pods) == 0 {
		return Shape{}, fmt.Errorf("schedule line %d: %s %s/%s creates no pod", c.Line, strings.ToLower(c.Kind), c.Namespace, c.Name)
	}
	tmpl := pods[0]
	tmpl.Name = ""
	tmpl.ObjectMeta = metav1.ObjectMeta{Namespace: tmpl.Namespace, Labels: tmpl.Labels, Annotations: tmpl.Annotations, OwnerReferences: tmpl.OwnerReferences}
	return Shape{Name: fmt.Sprintf("%s %s/%s", c.Kind, c.Namespace, c.Name), Pod: tmpl}, nil
}

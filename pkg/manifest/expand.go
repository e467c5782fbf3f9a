package manifest

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/robfig/cron/v3"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// The unprefixed Job labels the API server still adds beside the batch.kubernetes.io ones.
const (
	legacyJobNameLabel       = "job-name"
	legacyControllerUIDLabel = "controller-uid"
)

// jobLabels are the labels the API server adds to a Job's template unless it sets them.
var jobLabels = map[string]bool{
	legacyJobNameLabel: true, batchv1.JobNameLabel: true, legacyControllerUIDLabel: true, batchv1.ControllerUidLabel: true,
}

var podTypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}

// Pods returns the pods the workloads of the Set would create, in the order of the
// workloads in the manifests and then by replica: bare Pods as written; for a Deployment, the
// pods of the ReplicaSet it would create (<deployment>-<template hash>-<suffix>, labelled
// pod-template-hash); ReplicaSet pods <replicaset>-<suffix>; StatefulSet pods <name>-<ordinal>
// with their hostname, subdomain and volume claims; for a Job, min(parallelism, completions)
// pods (<job>-<suffix>, or <job>-<index>-<suffix> when Indexed) with the job-name and
// controller-uid labels; for a CronJob, the pods of JobForCronJob. Replicas default to 1 and
// suspended Jobs and CronJobs have none. Each pod has a controller owner reference and has
// been through DefaultPod. Suffixes are derived from the owner and the replica index, never
// repeat within a namespace, and do not change between calls. The pods are new objects that
// the caller may modify.
func (s *Set) Pods() []*corev1.Pod {
	n := newNamer()
	for _, o := range s.Objects {
		switch w := o.Object.(type) {
		case *corev1.Pod:
			n.reserve(w.Namespace, w.Name)
		case *appsv1.StatefulSet:
			for _, ord := range ordinals(w) {
				n.reserve(w.Namespace, statefulSetPodName(w, ord))
			}
		}
	}
	pods := make([]*corev1.Pod, 0, s.podCount)
	for _, o := range s.Objects {
		switch w := o.Object.(type) {
		case *corev1.Pod:
			pods = append(pods, w.DeepCopy())
		case *appsv1.Deployment:
			pods = append(pods, deploymentPods(w, n)...)
		case *appsv1.ReplicaSet:
			pods = append(pods, replicaSetPods(w, n)...)
		case *appsv1.StatefulSet:
			pods = append(pods, statefulSetPods(w)...)
		case *batchv1.Job:
			pods = append(pods, jobPods(w, n)...)
		case *batchv1.CronJob:
			if job := JobForCronJob(w); job != nil {
				pods = append(pods, jobPods(job, n)...)
			}
		}
	}
	for _, p := range pods {
		p.TypeMeta = podTypeMeta
		if p.UID == "" {
			p.UID = uidFor("Pod", p.Namespace, p.Name)
		}
		s.DefaultPod(p)
	}
	return pods
}

// DaemonSetPod returns the pod ds would run on a node, through DefaultPod, without a name and
// without the node affinity that pins each daemon pod to its node. It carries the
// tolerations the DaemonSet controller adds (not-ready and unreachable NoExecute, and the node
// condition taints), so a caller can tell which nodes the daemon runs on and what it takes.
func (s *Set) DaemonSetPod(ds *appsv1.DaemonSet) *corev1.Pod {
	hash := templateHash(&ds.Spec.Template)
	pod := fromTemplate(&ds.Spec.Template, ds.Namespace, ownerRef(appsv1.SchemeGroupVersion.WithKind("DaemonSet"), ds.Name, ds.UID),
		map[string]string{appsv1.DefaultDaemonSetUniqueLabelKey: hash})
	daemonTolerations(&pod.Spec)
	pod.TypeMeta = podTypeMeta
	s.DefaultPod(pod)
	return pod
}

// JobForCronJob returns the Job cj creates when it is due, or nil when cj is suspended. The
// CronJob controller names a Job after its scheduled time in minutes since the epoch; without
// a clock, the time taken is the schedule's first at or after the epoch, in UTC.
func JobForCronJob(cj *batchv1.CronJob) *batchv1.Job {
	if cj.Spec.Suspend != nil && *cj.Spec.Suspend {
		return nil
	}
	at := time.Unix(0, 0).UTC()
	if sched, err := cron.ParseStandard(cj.Spec.Schedule); err == nil {
		at = sched.Next(at.Add(-time.Second))
	}
	name := fmt.Sprintf("%s-%d", cj.Name, at.Unix()/60)
	t := cj.Spec.JobTemplate
	annotations := maps.Clone(t.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[batchv1.CronJobScheduledTimestampAnnotation] = at.Format(time.RFC3339)
	job := &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       cj.Namespace,
			UID:             uidFor("Job.batch", cj.Namespace, name),
			Labels:          maps.Clone(t.Labels),
			Annotations:     annotations,
			OwnerReferences: []metav1.OwnerReference{ownerRef(batchv1.SchemeGroupVersion.WithKind("CronJob"), cj.Name, cj.UID)},
		},
		Spec: *t.Spec.DeepCopy(),
	}
	return job
}

func replicaCount(r *int32) int {
	if r == nil {
		return 1
	}
	return max(int(*r), 0)
}

// jobPodCount is the number of pods a Job runs at once: min(parallelism, completions), with
// parallelism defaulting to 1 and no completions meaning a work queue of parallelism pods.
func jobPodCount(j *batchv1.JobSpec) int {
	if j.Suspend != nil && *j.Suspend {
		return 0
	}
	n := 1
	if j.Parallelism != nil {
		n = int(*j.Parallelism)
	}
	if j.Completions != nil {
		n = min(n, int(*j.Completions))
	}
	return max(n, 0)
}

// podCount is the number of pods obj expands to.
func podCount(obj runtime.Object) int {
	switch o := obj.(type) {
	case *corev1.Pod:
		return 1
	case *appsv1.Deployment:
		return replicaCount(o.Spec.Replicas)
	case *appsv1.ReplicaSet:
		return replicaCount(o.Spec.Replicas)
	case *appsv1.StatefulSet:
		return replicaCount(o.Spec.Replicas)
	case *batchv1.Job:
		return jobPodCount(&o.Spec)
	case *batchv1.CronJob:
		if o.Spec.Suspend != nil && *o.Spec.Suspend {
			return 0
		}
		return jobPodCount(&o.Spec.JobTemplate.Spec)
	}
	return 0
}

func ownerRef(gvk schema.GroupVersionKind, name string, uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: name, UID: uid,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}
}

// fromTemplate builds a pod as controllers do: the template's labels (plus extra),
// annotations, finalizers and spec, and a controller reference to its owner.
func fromTemplate(t *corev1.PodTemplateSpec, namespace string, owner metav1.OwnerReference, extra map[string]string) *corev1.Pod {
	labels := maps.Clone(t.Labels)
	if labels == nil && len(extra) > 0 {
		labels = map[string]string{}
	}
	for k, v := range extra {
		if _, set := labels[k]; set && jobLabels[k] {
			continue // the API server keeps a Job's own values
		}
		labels[k] = v
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       namespace,
			Labels:          labels,
			Annotations:     maps.Clone(t.Annotations),
			Finalizers:      slices.Clone(t.Finalizers),
			OwnerReferences: []metav1.OwnerReference{owner},
		},
		Spec: *t.Spec.DeepCopy(),
	}
}

func deploymentPods(d *appsv1.Deployment, n *namer) []*corev1.Pod {
	hash := templateHash(&d.Spec.Template)
	rs := d.Name + "-" + hash
	owner := ownerRef(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), rs, uidFor("ReplicaSet.apps", d.Namespace, rs))
	extra := map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: hash}
	return replicas(&d.Spec.Template, d.Namespace, rs, owner, extra, replicaCount(d.Spec.Replicas), n)
}

func replicaSetPods(rs *appsv1.ReplicaSet, n *namer) []*corev1.Pod {
	owner := ownerRef(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), rs.Name, rs.UID)
	return replicas(&rs.Spec.Template, rs.Namespace, rs.Name, owner, nil, replicaCount(rs.Spec.Replicas), n)
}

// replicas builds count interchangeable pods named <owner>-<suffix>.
func replicas(t *corev1.PodTemplateSpec, namespace, ownerName string, owner metav1.OwnerReference, extra map[string]string, count int, n *namer) []*corev1.Pod {
	pods := make([]*corev1.Pod, count)
	for i := range pods {
		pods[i] = fromTemplate(t, namespace, owner, extra)
		pods[i].Name = n.generate(namespace, ownerName+"-", fmt.Sprintf("%s/%s/%d", namespace, ownerName, i))
	}
	return pods
}

func ordinals(s *appsv1.StatefulSet) []int {
	start := 0
	if s.Spec.Ordinals != nil {
		start = int(s.Spec.Ordinals.Start)
	}
	ords := make([]int, replicaCount(s.Spec.Replicas))
	for i := range ords {
		ords[i] = start + i
	}
	return ords
}

func statefulSetPodName(s *appsv1.StatefulSet, ordinal int) string {
	return fmt.Sprintf("%s-%d", s.Name, ordinal)
}

func statefulSetPods(s *appsv1.StatefulSet) []*corev1.Pod {
	revision := s.Name + "-" + templateHash(&s.Spec.Template)
	owner := ownerRef(appsv1.SchemeGroupVersion.WithKind("StatefulSet"), s.Name, s.UID)
	var pods []*corev1.Pod
	for _, ord := range ordinals(s) {
		name := statefulSetPodName(s, ord)
		pod := fromTemplate(&s.Spec.Template, s.Namespace, owner, map[string]string{
			appsv1.ControllerRevisionHashLabelKey: revision,
			appsv1.StatefulSetPodNameLabel:        name,
			appsv1.PodIndexLabel:                  strconv.Itoa(ord),
		})
		pod.Name = name
		pod.Spec.Hostname = name
		pod.Spec.Subdomain = s.Spec.ServiceName
		claims := map[string]bool{}
		var volumes []corev1.Volume
		for _, c := range s.Spec.VolumeClaimTemplates {
			claims[c.Name] = true
			volumes = append(volumes, corev1.Volume{Name: c.Name, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: fmt.Sprintf("%s-%s-%d", c.Name, s.Name, ord)},
			}})
		}
		for _, v := range pod.Spec.Volumes {
			if !claims[v.Name] {
				volumes = append(volumes, v)
			}
		}
		pod.Spec.Volumes = volumes
		pods = append(pods, pod)
	}
	return pods
}

func jobPods(j *batchv1.Job, n *namer) []*corev1.Pod {
	extra := map[string]string{}
	if j.Spec.ManualSelector == nil || !*j.Spec.ManualSelector {
		// The labels the API server adds to the template of a Job with a generated selector.
		extra[legacyJobNameLabel] = j.Name
		extra[batchv1.JobNameLabel] = j.Name
		extra[legacyControllerUIDLabel] = string(j.UID)
		extra[batchv1.ControllerUidLabel] = string(j.UID)
	}
	owner := ownerRef(batchv1.SchemeGroupVersion.WithKind("Job"), j.Name, j.UID)
	indexed := j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion
	pods := make([]*corev1.Pod, jobPodCount(&j.Spec))
	for i := range pods {
		base := j.Name + "-"
		if !indexed {
			pods[i] = fromTemplate(&j.Spec.Template, j.Namespace, owner, extra)
		} else {
			index := strconv.Itoa(i)
			withIndex := maps.Clone(extra)
			withIndex[batchv1.JobCompletionIndexAnnotation] = index
			pods[i] = fromTemplate(&j.Spec.Template, j.Namespace, owner, withIndex)
			if pods[i].Annotations == nil {
				pods[i].Annotations = map[string]string{}
			}
			pods[i].Annotations[batchv1.JobCompletionIndexAnnotation] = index
			if pods[i].Spec.Hostname == "" {
				pods[i].Spec.Hostname = j.Name + "-" + index
			}
			base = indexedJobPodPrefix(j.Name, i)
		}
		pods[i].Name = n.generate(j.Namespace, base, fmt.Sprintf("%s/%s/%d", j.Namespace, j.Name, i))
	}
	return pods
}

// indexedJobPodPrefix is the job controller's generateName for the pod of an index.
func indexedJobPodPrefix(job string, index int) string {
	suffix := "-" + strconv.Itoa(index) + "-"
	prefix := job + suffix
	if len(prefix) > maxGeneratedNameLength {
		prefix = prefix[:maxGeneratedNameLength-len(suffix)] + suffix
	}
	return prefix
}

// daemonTolerations adds the tolerations the DaemonSet controller gives its pods, replacing
// any with the same key, operator, value and effect.
func daemonTolerations(spec *corev1.PodSpec) {
	add := func(key string, effect corev1.TaintEffect) {
		t := corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: effect}
		for i, existing := range spec.Tolerations {
			if existing.Key == t.Key && existing.Operator == t.Operator && existing.Value == t.Value && existing.Effect == t.Effect {
				spec.Tolerations[i] = t
				return
			}
		}
		spec.Tolerations = append(spec.Tolerations, t)
	}
	add(corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute)
	add(corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute)
	add(corev1.TaintNodeDiskPressure, corev1.TaintEffectNoSchedule)
	add(corev1.TaintNodeMemoryPressure, corev1.TaintEffectNoSchedule)
	add(corev1.TaintNodePIDPressure, corev1.TaintEffectNoSchedule)
	add(corev1.TaintNodeUnschedulable, corev1.TaintEffectNoSchedule)
	if spec.HostNetwork {
		add(corev1.TaintNodeNetworkUnavailable, corev1.TaintEffectNoSchedule)
	}
}

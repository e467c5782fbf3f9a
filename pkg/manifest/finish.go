package manifest

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// finish runs the checks that need every object and returns the Set or the errors.
func (l *loader) finish() (*Set, error) {
	l.crossCheck()
	if len(l.errs) > 0 {
		return nil, l.errs
	}
	return l.set, nil
}

// crossCheck refuses pods of an unknown priority class, pods the RuntimeClass admission plugin
// would refuse, and StatefulSet pods that clash with a bare Pod of the same name.
func (l *loader) crossCheck() {
	classes := map[string]bool{}
	for _, pc := range l.set.PriorityClasses {
		classes[pc.Name] = true
	}
	bare := map[string]Source{}
	for _, p := range l.set.Objects {
		if pod, ok := p.Object.(*corev1.Pod); ok {
			bare[pod.Namespace+"/"+pod.Name] = p.Source
		}
	}
	for _, o := range l.set.Objects {
		spec, path := podSpecOf(o.Object)
		if spec == nil {
			continue
		}
		if name := spec.PriorityClassName; name != "" && !classes[name] {
			if _, system := systemPriorities[name]; !system {
				l.objectError(o, fieldError{field.Invalid(path.Child("priorityClassName"), name, "no PriorityClass of this name: neither a system class nor one in the manifests")})
			}
		}
		for _, err := range l.set.checkRuntimeClassName(spec, path) {
			l.objectError(o, fieldError{err})
		}
		if s, ok := o.Object.(*appsv1.StatefulSet); ok {
			for _, ord := range ordinals(s) {
				name := statefulSetPodName(s, ord)
				if src, clash := bare[s.Namespace+"/"+name]; clash {
					l.objectError(o, fmt.Errorf("its pod %s/%s is also defined as a Pod at %s", s.Namespace, name, src))
				}
			}
		}
	}
}

func (l *loader) objectError(o Object, err error) {
	e := &Error{Source: o.Source, Kind: o.Object.GetObjectKind().GroupVersionKind().Kind, Err: err}
	if a, aErr := meta.Accessor(o.Object); aErr == nil {
		e.Namespace, e.Name = a.GetNamespace(), a.GetName()
	}
	l.errs = append(l.errs, e)
}

// podSpecOf returns the pod spec of a pod or of a workload's template, and its path.
func podSpecOf(obj runtime.Object) (*corev1.PodSpec, *field.Path) {
	template := field.NewPath("spec", "template", "spec")
	switch o := obj.(type) {
	case *corev1.Pod:
		return &o.Spec, field.NewPath("spec")
	case *appsv1.Deployment:
		return &o.Spec.Template.Spec, template
	case *appsv1.ReplicaSet:
		return &o.Spec.Template.Spec, template
	case *appsv1.StatefulSet:
		return &o.Spec.Template.Spec, template
	case *appsv1.DaemonSet:
		return &o.Spec.Template.Spec, template
	case *batchv1.Job:
		return &o.Spec.Template.Spec, template
	case *batchv1.CronJob:
		return &o.Spec.JobTemplate.Spec.Template.Spec, field.NewPath("spec", "jobTemplate", "spec", "template", "spec")
	}
	return nil, nil
}

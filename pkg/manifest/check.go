package manifest

import (
	"strings"

	"github.com/robfig/cron/v3"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxUserPriority is the highest value a PriorityClass not named system-* may have.
const maxUserPriority = 1000000000

func checkDeployment(d *appsv1.Deployment) field.ErrorList {
	return checkReplicated(d.Spec.Replicas, d.Spec.Selector, &d.Spec.Template, "deployment")
}

func checkReplicaSet(rs *appsv1.ReplicaSet) field.ErrorList {
	return checkReplicated(rs.Spec.Replicas, rs.Spec.Selector, &rs.Spec.Template, "replicaset")
}

func checkStatefulSet(s *appsv1.StatefulSet) field.ErrorList {
	errs := checkReplicated(s.Spec.Replicas, s.Spec.Selector, &s.Spec.Template, "statefulset")
	if o := s.Spec.Ordinals; o != nil && o.Start < 0 {
		errs = append(errs, field.Invalid(field.NewPath("spec", "ordinals", "start"), o.Start, "must be greater than or equal to 0"))
	}
	for i, c := range s.Spec.VolumeClaimTemplates {
		if c.Name == "" {
			errs = append(errs, field.Required(field.NewPath("spec", "volumeClaimTemplates").Index(i).Child("metadata", "name"), ""))
		}
	}
	return errs
}

func checkDaemonSet(d *appsv1.DaemonSet) field.ErrorList {
	return checkReplicated(nil, d.Spec.Selector, &d.Spec.Template, "daemonset")
}

// checkReplicated checks the spec shared by the apps/v1 workloads: replicas, a selector that
// selects the template's labels, and a template whose pods restart always.
func checkReplicated(replicas *int32, selector *metav1.LabelSelector, t *corev1.PodTemplateSpec, what string) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if replicas != nil && *replicas < 0 {
		errs = append(errs, field.Invalid(spec.Child("replicas"), *replicas, "must be greater than or equal to 0"))
	}
	errs = append(errs, checkTemplate(t, spec.Child("template"), alwaysRestart)...)
	if selector == nil {
		return append(errs, field.Required(spec.Child("selector"), ""))
	}
	if len(selector.MatchLabels)+len(selector.MatchExpressions) == 0 {
		return append(errs, field.Invalid(spec.Child("selector"), selector, "empty selector is invalid for "+what))
	}
	return append(errs, checkSelects(selector, t, spec)...)
}

// checkSelects checks that a valid selector selects the template's labels.
func checkSelects(selector *metav1.LabelSelector, t *corev1.PodTemplateSpec, spec *field.Path) field.ErrorList {
	if errs := checkSelector(selector, spec.Child("selector")); len(errs) > 0 {
		return errs
	}
	s, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return field.ErrorList{field.Invalid(spec.Child("selector"), selector, err.Error())}
	}
	if !s.Matches(labels.Set(t.Labels)) {
		return field.ErrorList{field.Invalid(spec.Child("template", "metadata", "labels"), t.Labels, "`selector` does not match template `labels`")}
	}
	return nil
}

func checkJobSpec(j *batchv1.JobSpec, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	if j.Parallelism != nil && *j.Parallelism < 0 {
		errs = append(errs, field.Invalid(spec.Child("parallelism"), *j.Parallelism, "must be greater than or equal to 0"))
	}
	if j.Completions != nil && *j.Completions < 0 {
		errs = append(errs, field.Invalid(spec.Child("completions"), *j.Completions, "must be greater than or equal to 0"))
	}
	if mode := j.CompletionMode; mode != nil {
		switch *mode {
		case batchv1.NonIndexedCompletion:
		case batchv1.IndexedCompletion:
			if j.Completions == nil {
				errs = append(errs, field.Required(spec.Child("completions"), "when completion mode is Indexed"))
			}
		default:
			errs = append(errs, field.NotSupported(spec.Child("completionMode"), *mode, []batchv1.CompletionMode{batchv1.NonIndexedCompletion, batchv1.IndexedCompletion}))
		}
	}
	errs = append(errs, checkTemplate(&j.Template, spec.Child("template"), jobRestart)...)
	if j.ManualSelector != nil && *j.ManualSelector {
		if j.Selector == nil {
			return append(errs, field.Required(spec.Child("selector"), "when manualSelector is true"))
		}
		errs = append(errs, checkSelects(j.Selector, &j.Template, spec)...)
	}
	return errs
}

func checkCronJob(c *batchv1.CronJob) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	// The Jobs of a CronJob are named <name>-<minutes>: 11 characters for the suffix.
	if len(c.Name) > 52 {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), c.Name, "must be no more than 52 characters"))
	}
	switch {
	case c.Spec.Schedule == "":
		errs = append(errs, field.Required(spec.Child("schedule"), ""))
	case strings.Contains(c.Spec.Schedule, "TZ"):
		errs = append(errs, field.Invalid(spec.Child("schedule"), c.Spec.Schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
	default:
		if _, err := cron.ParseStandard(c.Spec.Schedule); err != nil {
			errs = append(errs, field.Invalid(spec.Child("schedule"), c.Spec.Schedule, err.Error()))
		}
	}
	errs = append(errs, metav1validation.ValidateLabels(c.Spec.JobTemplate.Labels, spec.Child("jobTemplate", "metadata", "labels"))...)
	return append(errs, checkJobSpec(&c.Spec.JobTemplate.Spec, spec.Child("jobTemplate", "spec"))...)
}

func checkPodDisruptionBudget(p *policyv1.PodDisruptionBudget) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if p.Spec.MinAvailable != nil && p.Spec.MaxUnavailable != nil {
		errs = append(errs, field.Invalid(spec, p.Spec, "minAvailable and maxUnavailable cannot be both set"))
	}
	errs = append(errs, checkIntOrPercent(p.Spec.MinAvailable, spec.Child("minAvailable"))...)
	errs = append(errs, checkIntOrPercent(p.Spec.MaxUnavailable, spec.Child("maxUnavailable"))...)
	return append(errs, checkSelector(p.Spec.Selector, spec.Child("selector"))...)
}

// checkIntOrPercent checks a count that is a non-negative integer or a percentage up to 100%.
func checkIntOrPercent(v *intstr.IntOrString, path *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	if v.Type == intstr.Int {
		if v.IntVal < 0 {
			return field.ErrorList{field.Invalid(path, v.IntVal, "must be greater than or equal to 0")}
		}
		return nil
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, 100, false)
	switch {
	case err != nil || !strings.HasSuffix(v.StrVal, "%"):
		return field.ErrorList{field.Invalid(path, v.StrVal, "must be an integer or percentage (e.g '5%')")}
	case n < 0:
		return field.ErrorList{field.Invalid(path, v.StrVal, "must be greater than or equal to 0")}
	case n > 100:
		return field.ErrorList{field.Invalid(path, v.StrVal, "must not be greater than 100%")}
	}
	return nil
}

func checkPriorityClass(p *schedulingv1.PriorityClass) field.ErrorList {
	var errs field.ErrorList
	if strings.HasPrefix(p.Name, "system-") {
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "name"), "priority class names with 'system-' prefix are reserved"))
	}
	if p.Value > maxUserPriority {
		errs = append(errs, field.Forbidden(field.NewPath("value"), "maximum allowed value of a user defined priority is 1000000000"))
	}
	return errs
}

// checkPodGroup checks what the API server's validation of a PodGroup says of the fields tenon
// reads: exactly one scheduling policy, a gang's minCount of at least one, and at most one
// topology constraint whose key is a label key.
func checkPodGroup(pg *schedulingv1beta1.PodGroup) field.ErrorList {
	var errs field.ErrorList
	policy := field.NewPath("spec", "schedulingPolicy")
	switch sp := pg.Spec.SchedulingPolicy; {
	case sp.Basic != nil && sp.Gang != nil:
		errs = append(errs, field.Invalid(policy, "basic and gang", "exactly one of basic and gang must be set"))
	case sp.Basic == nil && sp.Gang == nil:
		errs = append(errs, field.Required(policy, "exactly one of basic and gang must be set"))
	case sp.Gang != nil && sp.Gang.MinCount < 1:
		errs = append(errs, field.Invalid(policy.Child("gang", "minCount"), sp.Gang.MinCount, "must be at least 1"))
	}
	if c := pg.Spec.SchedulingConstraints; c != nil {
		topo := field.NewPath("spec", "schedulingConstraints", "topology")
		if len(c.Topology) > 1 {
			errs = append(errs, field.TooMany(topo, len(c.Topology), 1))
		}
		for i, t := range c.Topology {
			for _, msg := range validation.IsQualifiedName(t.Key) {
				errs = append(errs, field.Invalid(topo.Index(i).Child("key"), t.Key, msg))
			}
		}
	}
	return errs
}

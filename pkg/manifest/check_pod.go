package manifest

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The restart policies a pod may have in each context, after defaulting ("" means Always).
var (
	anyRestart    = []corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}
	alwaysRestart = []corev1.RestartPolicy{corev1.RestartPolicyAlways}
	jobRestart    = []corev1.RestartPolicy{corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}
)

func checkPod(p *corev1.Pod) field.ErrorList {
	return checkPodSpec(&p.Spec, field.NewPath("spec"), anyRestart)
}

// checkTemplate checks a workload's pod template: its labels and its spec.
func checkTemplate(t *corev1.PodTemplateSpec, path *field.Path, restart []corev1.RestartPolicy) field.ErrorList {
	errs := metav1validation.ValidateLabels(t.Labels, path.Child("metadata", "labels"))
	return append(errs, checkPodSpec(&t.Spec, path.Child("spec"), restart)...)
}

// checkPodSpec checks what decides where and whether a pod can run.
func checkPodSpec(spec *corev1.PodSpec, path *field.Path, restart []corev1.RestartPolicy) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Containers) == 0 {
		errs = append(errs, field.Required(path.Child("containers"), "a pod needs at least one container"))
	}
	names := sets.New[string]()
	errs = append(errs, checkContainers(spec.InitContainers, path.Child("initContainers"), names)...)
	errs = append(errs, checkContainers(spec.Containers, path.Child("containers"), names)...)
	if spec.Resources != nil {
		errs = append(errs, checkResources(spec.Resources, path.Child("resources"))...)
	}
	policy := spec.RestartPolicy
	if policy == "" {
		policy = corev1.RestartPolicyAlways
	}
	if !slices.Contains(restart, policy) {
		errs = append(errs, field.NotSupported(path.Child("restartPolicy"), policy, restart))
	}
	errs = append(errs, metav1validation.ValidateLabels(spec.NodeSelector, path.Child("nodeSelector"))...)
	for i, t := range spec.Tolerations {
		errs = append(errs, checkToleration(t, path.Child("tolerations").Index(i))...)
	}
	for i, c := range spec.TopologySpreadConstraints {
		errs = append(errs, checkSpreadConstraint(c, path.Child("topologySpreadConstraints").Index(i))...)
	}
	if a := spec.Affinity; a != nil {
		errs = append(errs, checkAffinity(a, path.Child("affinity"))...)
	}
	return errs
}

func checkContainers(containers []corev1.Container, path *field.Path, names sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	for i := range containers {
		c := &containers[i]
		p := path.Index(i)
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(p.Child("name"), ""))
		case names.Has(c.Name):
			errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
		}
		names.Insert(c.Name)
		if c.Image == "" {
			errs = append(errs, field.Required(p.Child("image"), ""))
		}
		errs = append(errs, checkResources(&c.Resources, p.Child("resources"))...)
	}
	return errs
}

// checkResources checks resource names and quantities as the API server does: standard or
// extended names, no negative quantities, whole numbers of extended resources, requests no
// greater than limits, and requests equal to limits for resources that cannot be
// overcommitted (extended resources such as nvidia.com/gpu, and huge pages).
func checkResources(r *corev1.ResourceRequirements, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range slices.Sorted(maps.Keys(r.Limits)) {
		errs = append(errs, checkQuantity(name, r.Limits[name], path.Child("limits").Key(string(name)))...)
	}
	for _, name := range slices.Sorted(maps.Keys(r.Requests)) {
		p := path.Child("requests").Key(string(name))
		req := r.Requests[name]
		errs = append(errs, checkQuantity(name, req, p)...)
		limit, ok := r.Limits[name]
		switch {
		case ok && !overcommittable(name) && req.Cmp(limit) != 0:
			errs = append(errs, field.Invalid(p, req.String(), fmt.Sprintf("must be equal to %s limit of %s", name, limit.String())))
		case ok && req.Cmp(limit) > 0:
			errs = append(errs, field.Invalid(p, req.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		case !ok && !overcommittable(name):
			errs = append(errs, field.Required(path.Child("limits").Key(string(name)), "a limit must be set for resources that cannot be overcommitted"))
		}
	}
	return errs
}

func checkQuantity(name corev1.ResourceName, q resource.Quantity, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case !strings.Contains(string(name), "/"):
		if !standardContainerResource(name) {
			errs = append(errs, field.Invalid(path, name, "must be a standard resource for containers"))
		}
	case strings.Contains(string(name), "kubernetes.io/"):
		errs = append(errs, field.Invalid(path, name, "must be a standard resource for containers"))
	default:
		for _, msg := range validation.IsQualifiedName(string(name)) {
			errs = append(errs, field.Invalid(path, name, msg))
		}
	}
	if q.Sign() < 0 {
		errs = append(errs, field.Invalid(path, q.String(), "must be greater than or equal to 0"))
	}
	if extended(name) && !isInteger(q) {
		errs = append(errs, field.Invalid(path, q.String(), "must be an integer"))
	}
	return errs
}

// isInteger reports whether q is a whole number, exactly, however large (its MilliValue wraps
// beyond 9.2e15).
func isInteger(q resource.Quantity) bool {
	c := q.DeepCopy()
	return c.RoundUp(0)
}

func standardContainerResource(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		return true
	}
	return hugePages(name)
}

func hugePages(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// extended reports whether name is an extended resource, such as nvidia.com/gpu.
func extended(name corev1.ResourceName) bool {
	s := string(name)
	return strings.Contains(s, "/") && !strings.Contains(s, "kubernetes.io/") && !strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix)
}

// overcommittable reports whether requests may be below limits.
func overcommittable(name corev1.ResourceName) bool {
	return !extended(name) && !hugePages(name)
}

func checkToleration(t corev1.Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Key != "" {
		errs = append(errs, metav1validation.ValidateLabelName(t.Key, path.Child("key"))...)
	}
	switch t.Operator {
	case corev1.TolerationOpEqual, "":
		if t.Key == "" {
			errs = append(errs, field.Invalid(path.Child("operator"), t.Operator, "operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
	case corev1.TolerationOpExists:
		if t.Value != "" {
			errs = append(errs, field.Invalid(path.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("operator"), t.Operator, []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
	}
	switch t.Effect {
	case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		errs = append(errs, field.NotSupported(path.Child("effect"), t.Effect, []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}))
	}
	return errs
}

func checkSpreadConstraint(c corev1.TopologySpreadConstraint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.MaxSkew <= 0 {
		errs = append(errs, field.Invalid(path.Child("maxSkew"), c.MaxSkew, "must be greater than zero"))
	}
	if c.TopologyKey == "" {
		errs = append(errs, field.Required(path.Child("topologyKey"), "can not be empty"))
	}
	switch c.WhenUnsatisfiable {
	case corev1.DoNotSchedule, corev1.ScheduleAnyway:
	default:
		errs = append(errs, field.NotSupported(path.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, []corev1.UnsatisfiableConstraintAction{corev1.DoNotSchedule, corev1.ScheduleAnyway}))
	}
	return append(errs, checkSelector(c.LabelSelector, path.Child("labelSelector"))...)
}

func checkAffinity(a *corev1.Affinity, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if na := a.NodeAffinity; na != nil {
		p := path.Child("nodeAffinity")
		if r := na.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
			rp := p.Child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
			if len(r.NodeSelectorTerms) == 0 {
				errs = append(errs, field.Required(rp, "must have at least one node selector term"))
			}
			for i, term := range r.NodeSelectorTerms {
				errs = append(errs, checkNodeSelectorTerm(term, rp.Index(i))...)
			}
		}
		for i, term := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			errs = append(errs, checkNodeSelectorTerm(term.Preference, p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i).Child("preference"))...)
		}
	}
	if pa := a.PodAffinity; pa != nil {
		errs = append(errs, checkPodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, path.Child("podAffinity"))...)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		errs = append(errs, checkPodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, path.Child("podAntiAffinity"))...)
	}
	return errs
}

func checkPodAffinityTerms(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range required {
		errs = append(errs, checkPodAffinityTerm(t, path.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i))...)
	}
	for i, t := range preferred {
		errs = append(errs, checkPodAffinityTerm(t.PodAffinityTerm, path.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i).Child("podAffinityTerm"))...)
	}
	return errs
}

func checkPodAffinityTerm(t corev1.PodAffinityTerm, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.TopologyKey == "" {
		errs = append(errs, field.Required(path.Child("topologyKey"), "can not be empty"))
	}
	errs = append(errs, checkSelector(t.LabelSelector, path.Child("labelSelector"))...)
	return append(errs, checkSelector(t.NamespaceSelector, path.Child("namespaceSelector"))...)
}

func checkNodeSelectorTerm(term corev1.NodeSelectorTerm, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, r := range term.MatchExpressions {
		errs = append(errs, checkNodeSelectorRequirement(r, path.Child("matchExpressions").Index(i))...)
	}
	return errs
}

func checkNodeSelectorRequirement(r corev1.NodeSelectorRequirement, path *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabelName(r.Key, path.Child("key"))
	values := path.Child("values")
	switch r.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(r.Values) == 0 {
			errs = append(errs, field.Required(values, "must be specified when `operator` is 'In' or 'NotIn'"))
		}
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(r.Values) > 0 {
			errs = append(errs, field.Forbidden(values, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(r.Values) != 1 {
			errs = append(errs, field.Required(values, "must be specified single value when `operator` is 'Lt' or 'Gt'"))
		} else if _, err := strconv.ParseInt(r.Values[0], 10, 64); err != nil {
			errs = append(errs, field.Invalid(values.Index(0), r.Values[0], "must be an integer"))
		}
	default:
		errs = append(errs, field.Invalid(path.Child("operator"), r.Operator, "not a valid selector operator"))
	}
	return errs
}

// checkSelector checks a label selector that may be nil.
func checkSelector(s *metav1.LabelSelector, path *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	return metav1validation.ValidateLabelSelector(s, metav1validation.LabelSelectorValidationOptions{}, path)
}

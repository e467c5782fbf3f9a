package manifest

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func checkStorageClass(sc *storagev1.StorageClass) field.ErrorList {
	var errs field.ErrorList
	if sc.Provisioner == "" {
		errs = append(errs, field.Required(field.NewPath("provisioner"), ""))
	}
	if m := sc.VolumeBindingMode; m != nil && *m != storagev1.VolumeBindingImmediate && *m != storagev1.VolumeBindingWaitForFirstConsumer {
		errs = append(errs, field.NotSupported(field.NewPath("volumeBindingMode"), *m,
			[]storagev1.VolumeBindingMode{storagev1.VolumeBindingImmediate, storagev1.VolumeBindingWaitForFirstConsumer}))
	}
	for i, t := range sc.AllowedTopologies {
		path := field.NewPath("allowedTopologies").Index(i).Child("matchLabelExpressions")
		if len(t.MatchLabelExpressions) == 0 {
			errs = append(errs, field.Required(path, "a topology term must have at least one expression"))
		}
		for j, e := range t.MatchLabelExpressions {
			if e.Key == "" {
				errs = append(errs, field.Required(path.Index(j).Child("key"), ""))
			}
			if len(e.Values) == 0 {
				errs = append(errs, field.Required(path.Index(j).Child("values"), "must have at least one value"))
			}
		}
	}
	return errs
}

func checkRuntimeClass(rc *nodev1.RuntimeClass) field.ErrorList {
	path := field.NewPath("handler")
	if rc.Handler == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(rc.Handler) {
		errs = append(errs, field.Invalid(path, rc.Handler, msg))
	}
	return errs
}

func (s *Set) runtimeClass(name *string) *nodev1.RuntimeClass {
	if s == nil || name == nil || *name == "" {
		return nil
	}
	for _, rc := range s.RuntimeClasses {
		if rc.Name == *name {
			return rc
		}
	}
	return nil
}

// admitRuntimeClass does to a pod what the RuntimeClass admission plugin does: the overhead of
// the RuntimeClass it names becomes the pod's, the class's scheduling node selector joins the
// pod's, and its tolerations are added to the pod's. (Pods that admission would refuse are
// refused when the manifests are loaded.)
func (s *Set) admitRuntimeClass(spec *corev1.PodSpec) {
	rc := s.runtimeClass(spec.RuntimeClassName)
	if rc == nil {
		return
	}
	if rc.Overhead != nil && len(rc.Overhead.PodFixed) > 0 {
		spec.Overhead = rc.Overhead.PodFixed.DeepCopy()
	}
	if rc.Scheduling == nil {
		return
	}
	if len(rc.Scheduling.NodeSelector) > 0 {
		if spec.NodeSelector == nil {
			spec.NodeSelector = map[string]string{}
		}
		maps.Copy(spec.NodeSelector, rc.Scheduling.NodeSelector)
	}
	for _, t := range rc.Scheduling.Tolerations {
		if !slices.ContainsFunc(spec.Tolerations, func(have corev1.Toleration) bool { return have.MatchToleration(&t) }) {
			spec.Tolerations = append(spec.Tolerations, t)
		}
	}
}

// checkRuntimeClassName refuses what the RuntimeClass admission plugin refuses: a pod naming a
// RuntimeClass that does not exist, one whose overhead differs from its class's, and one whose
// node selector contradicts its class's.
func (s *Set) checkRuntimeClassName(spec *corev1.PodSpec, path *field.Path) field.ErrorList {
	if spec.RuntimeClassName == nil || *spec.RuntimeClassName == "" {
		return nil
	}
	rc := s.runtimeClass(spec.RuntimeClassName)
	if rc == nil {
		return field.ErrorList{field.Invalid(path.Child("runtimeClassName"), *spec.RuntimeClassName, "no RuntimeClass of this name in the manifests")}
	}
	var errs field.ErrorList
	if rc.Overhead != nil && len(spec.Overhead) > 0 && !apiequality.Semantic.DeepEqual(rc.Overhead.PodFixed, spec.Overhead) {
		errs = append(errs, field.Invalid(path.Child("overhead"), spec.Overhead, fmt.Sprintf("differs from the overhead of RuntimeClass %s", rc.Name)))
	}
	if rc.Scheduling != nil {
		for _, k := range slices.Sorted(maps.Keys(rc.Scheduling.NodeSelector)) {
			if v, ok := spec.NodeSelector[k]; ok && v != rc.Scheduling.NodeSelector[k] {
				errs = append(errs, field.Invalid(path.Child("nodeSelector").Key(k), v,
					fmt.Sprintf("conflicts with RuntimeClass %s, which selects %s=%s", rc.Name, k, rc.Scheduling.NodeSelector[k])))
			}
		}
	}
	return errs
}

// VolumeClaims returns the PersistentVolumeClaims of the Set, then those its StatefulSets'
// controllers would create from their volumeClaimTemplates (<template>-<statefulset>-<ordinal>,
// labelled with the StatefulSet's selector) where the Set holds no claim of that name: the
// StatefulSet controller uses a claim that exists.
func (s *Set) VolumeClaims() []*corev1.PersistentVolumeClaim {
	out := slices.Clone(s.PersistentVolumeClaims)
	have := map[string]bool{}
	for _, c := range s.PersistentVolumeClaims {
		have[c.Namespace+"/"+c.Name] = true
	}
	for _, st := range s.StatefulSets {
		for _, ord := range ordinals(st) {
			for _, t := range st.Spec.VolumeClaimTemplates {
				name := fmt.Sprintf("%s-%s-%d", t.Name, st.Name, ord)
				if have[st.Namespace+"/"+name] {
					continue
				}
				c := t.DeepCopy()
				c.Name, c.Namespace = name, st.Namespace
				if st.Spec.Selector != nil {
					c.Labels = maps.Clone(st.Spec.Selector.MatchLabels)
				}
				out = append(out, c)
			}
		}
	}
	return out
}

package snapshot

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// Storage finds the storage objects a pod's volumes name: on a cluster, the API server; offline,
// the manifests. A lookup of an object that does not exist returns nil and no error; an error is
// a failure to read.
type Storage interface {
	PersistentVolumeClaim(namespace, name string) (*corev1.PersistentVolumeClaim, error)
	PersistentVolume(name string) (*corev1.PersistentVolume, error)
	StorageClass(name string) (*storagev1.StorageClass, error)
	// DefaultStorageClass returns the class marked storageclass.kubernetes.io/is-default-class,
	// or nil when none is.
	DefaultStorageClass() (*storagev1.StorageClass, error)
}

// DefaultStorageClassAnnotation marks the StorageClass of claims that name none.
const DefaultStorageClassAnnotation = "storageclass.kubernetes.io/is-default-class"

// VolumeError says which volume of a pod keeps it from being planned for, and why: a claim,
// volume or class it names does not exist.
type VolumeError struct{ msg string }

func (e *VolumeError) Error() string { return e.msg }

func volumeErrorf(format string, args ...any) error {
	return &VolumeError{msg: fmt.Sprintf(format, args...)}
}

// UnplannableReason returns the error of a pod PendingPod refused as the solver's reason: a
// volume reason for a *VolumeError, else the pod's constraints could not be read.
func UnplannableReason(err error) solver.Reason {
	if ve := (*VolumeError)(nil); errors.As(err, &ve) {
		return solver.Reason{Kind: solver.ReasonVolume, Detail: err.Error()}
	}
	return solver.Reason{Kind: solver.ReasonInvalidPod, Detail: err.Error()}
}

// PendingPod returns a pending pod as the solver must see it: where its volumes confine it (the
// node affinity of a bound PersistentVolume, the allowedTopologies of an unbound claim's
// StorageClass) joins its required node affinity, in a copy. A pod whose volumes name a claim,
// volume or class that does not exist cannot be planned for: the error is a *VolumeError. Other
// errors are failures to read st.
//
// An unbound claim confines the pod to its class's allowedTopologies whatever the binding mode:
// with WaitForFirstConsumer the volume is provisioned where the pod lands, within them; with
// Immediate it is provisioned within them without regard to the pod, and once it is bound the
// volume's own node affinity decides.
func PendingPod(pod *corev1.Pod, st Storage) (*corev1.Pod, error) {
	terms, err := VolumeTopology(pod, st)
	if err != nil || len(terms) == 0 {
		return pod, err
	}
	return WithVolumeTopology(pod, terms), nil
}

// zoneAliases are CSI topology keys that mean the zone.
var zoneAliases = map[string]string{
	"topology.ebs.csi.aws.com/zone": apisv1.LabelZone,
	"topology.gke.io/zone":          apisv1.LabelZone,
}

// VolumeTopology returns the node-selector terms a pod's volumes confine it to (ORed), or nil
// when its volumes do not constrain where it runs.
func VolumeTopology(pod *corev1.Pod, st Storage) ([][]corev1.NodeSelectorRequirement, error) {
	var terms [][]corev1.NodeSelectorRequirement
	and := func(more [][]corev1.NodeSelectorRequirement) {
		if len(more) == 0 {
			return
		}
		if terms == nil {
			terms = more
			return
		}
		var out [][]corev1.NodeSelectorRequirement
		for _, a := range terms {
			for _, b := range more {
				out = append(out, append(append([]corev1.NodeSelectorRequirement{}, a...), b...))
			}
		}
		terms = out
	}
	for _, v := range pod.Spec.Volumes {
		more, err := claimTopology(pod, v, st)
		if err != nil {
			return nil, err
		}
		and(more)
	}
	return terms, nil
}

// claimTopology returns the terms one volume confines the pod to.
func claimTopology(pod *corev1.Pod, v corev1.Volume, st Storage) ([][]corev1.NodeSelectorRequirement, error) {
	var name string
	var template *corev1.PersistentVolumeClaimSpec
	switch {
	case v.PersistentVolumeClaim != nil:
		name = v.PersistentVolumeClaim.ClaimName
	case v.Ephemeral != nil && v.Ephemeral.VolumeClaimTemplate != nil:
		name = pod.Name + "-" + v.Name
		template = &v.Ephemeral.VolumeClaimTemplate.Spec
	default:
		return nil, nil
	}
	pvc, err := st.PersistentVolumeClaim(pod.Namespace, name)
	switch {
	case err != nil:
		return nil, err
	case pvc == nil && template != nil:
		pvc = &corev1.PersistentVolumeClaim{Spec: *template} // the ephemeral claim is created with the pod
	case pvc == nil:
		return nil, volumeErrorf("persistentvolumeclaim %s/%s not found", pod.Namespace, name)
	}
	if pvc.Spec.VolumeName != "" {
		pv, err := st.PersistentVolume(pvc.Spec.VolumeName)
		switch {
		case err != nil:
			return nil, fmt.Errorf("persistentvolume %s of claim %s/%s: %w", pvc.Spec.VolumeName, pod.Namespace, name, err)
		case pv == nil:
			return nil, volumeErrorf("persistentvolume %s of claim %s/%s not found", pvc.Spec.VolumeName, pod.Namespace, name)
		}
		if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
			return nil, nil
		}
		var out [][]corev1.NodeSelectorRequirement
		for _, t := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
			out = append(out, normalizeZones(t.MatchExpressions))
		}
		return out, nil
	}
	sc, err := storageClass(st, pvc.Spec.StorageClassName)
	if err != nil {
		return nil, fmt.Errorf("claim %s/%s: %w", pod.Namespace, name, err)
	}
	if sc == nil {
		return nil, nil
	}
	var out [][]corev1.NodeSelectorRequirement
	for _, t := range sc.AllowedTopologies {
		var reqs []corev1.NodeSelectorRequirement
		for _, e := range t.MatchLabelExpressions {
			reqs = append(reqs, corev1.NodeSelectorRequirement{Key: e.Key, Operator: corev1.NodeSelectorOpIn, Values: e.Values})
		}
		out = append(out, normalizeZones(reqs))
	}
	return out, nil
}

func normalizeZones(reqs []corev1.NodeSelectorRequirement) []corev1.NodeSelectorRequirement {
	out := make([]corev1.NodeSelectorRequirement, len(reqs))
	for i, r := range reqs {
		if k, ok := zoneAliases[r.Key]; ok {
			r.Key = k
		}
		out[i] = r
	}
	return out
}

// storageClass returns the named StorageClass, or the default one when name is nil (nil when
// there is none, or when name is "", which asks for no class; an error when a named class does
// not exist).
func storageClass(st Storage, name *string) (*storagev1.StorageClass, error) {
	switch {
	case name == nil:
		return st.DefaultStorageClass()
	case *name == "":
		return nil, nil
	}
	sc, err := st.StorageClass(*name)
	if err == nil && sc == nil {
		err = volumeErrorf("storageclass %s not found", *name)
	}
	return sc, err
}

// WithVolumeTopology returns a copy of the pod whose required node affinity also demands the
// volume topology terms.
func WithVolumeTopology(pod *corev1.Pod, terms [][]corev1.NodeSelectorRequirement) *corev1.Pod {
	out := pod.DeepCopy()
	if out.Spec.Affinity == nil {
		out.Spec.Affinity = &corev1.Affinity{}
	}
	if out.Spec.Affinity.NodeAffinity == nil {
		out.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := out.Spec.Affinity.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil || len(na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) == 0 {
		ns := &corev1.NodeSelector{}
		for _, t := range terms {
			ns.NodeSelectorTerms = append(ns.NodeSelectorTerms, corev1.NodeSelectorTerm{MatchExpressions: t})
		}
		na.RequiredDuringSchedulingIgnoredDuringExecution = ns
		return out
	}
	var merged []corev1.NodeSelectorTerm
	for _, own := range na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, t := range terms {
			m := own.DeepCopy()
			m.MatchExpressions = append(m.MatchExpressions, t...)
			merged = append(merged, *m)
		}
	}
	na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = merged
	return out
}

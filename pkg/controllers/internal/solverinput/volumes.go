package solverinput

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// zoneAliases are CSI topology keys that mean the zone.
var zoneAliases = map[string]string{
	"topology.ebs.csi.aws.com/zone": apisv1.LabelZone,
	"topology.gke.io/zone":          apisv1.LabelZone,
}

// volumeTopology returns the node-selector terms a pod's volumes confine it to (ORed), or nil
// when its volumes do not constrain where it runs. A claim that does not exist yet, or whose
// StorageClass does not, is an error naming it: the pod cannot be planned.
func volumeTopology(ctx context.Context, c client.Reader, pod *corev1.Pod) ([][]corev1.NodeSelectorRequirement, error) {
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
		name := ""
		var template *corev1.PersistentVolumeClaimSpec
		switch {
		case v.PersistentVolumeClaim != nil:
			name = v.PersistentVolumeClaim.ClaimName
		case v.Ephemeral != nil && v.Ephemeral.VolumeClaimTemplate != nil:
			name = pod.Name + "-" + v.Name
			template = &v.Ephemeral.VolumeClaimTemplate.Spec
		default:
			continue
		}
		pvc := &corev1.PersistentVolumeClaim{}
		err := c.Get(ctx, types.NamespacedName{Namespace: pod.Namespace, Name: name}, pvc)
		switch {
		case apierrors.IsNotFound(err) && template != nil:
			pvc.Spec = *template // the ephemeral claim is created with the pod
		case apierrors.IsNotFound(err):
			return nil, fmt.Errorf("persistentvolumeclaim %s/%s not found", pod.Namespace, name)
		case err != nil:
			return nil, err
		}
		if pvc.Spec.VolumeName != "" {
			pv := &corev1.PersistentVolume{}
			if err := c.Get(ctx, types.NamespacedName{Name: pvc.Spec.VolumeName}, pv); err != nil {
				return nil, fmt.Errorf("persistentvolume %s of claim %s/%s: %w", pvc.Spec.VolumeName, pod.Namespace, name, err)
			}
			if pv.Spec.NodeAffinity != nil && pv.Spec.NodeAffinity.Required != nil {
				var pvTerms [][]corev1.NodeSelectorRequirement
				for _, t := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
					pvTerms = append(pvTerms, normalizeZones(t.MatchExpressions))
				}
				and(pvTerms)
			}
			continue
		}
		sc, err := storageClass(ctx, c, pvc.Spec.StorageClassName)
		if err != nil {
			return nil, fmt.Errorf("claim %s/%s: %w", pod.Namespace, name, err)
		}
		if sc == nil || len(sc.AllowedTopologies) == 0 {
			continue
		}
		var scTerms [][]corev1.NodeSelectorRequirement
		for _, t := range sc.AllowedTopologies {
			var reqs []corev1.NodeSelectorRequirement
			for _, e := range t.MatchLabelExpressions {
				reqs = append(reqs, corev1.NodeSelectorRequirement{Key: e.Key, Operator: corev1.NodeSelectorOpIn, Values: e.Values})
			}
			scTerms = append(scTerms, normalizeZones(reqs))
		}
		and(scTerms)
	}
	return terms, nil
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
// there is none; an error when a named class does not exist).
func storageClass(ctx context.Context, c client.Reader, name *string) (*storagev1.StorageClass, error) {
	if name != nil && *name != "" {
		sc := &storagev1.StorageClass{}
		if err := c.Get(ctx, types.NamespacedName{Name: *name}, sc); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("storageclass %s not found", *name)
			}
			return nil, err
		}
		return sc, nil
	}
	if name != nil {
		return nil, nil // "" asks for no class
	}
	list := &storagev1.StorageClassList{}
	if err := c.List(ctx, list); err != nil {
		return nil, err
	}
	for i := range list.Items {
		if list.Items[i].Annotations["storageclass.kubernetes.io/is-default-class"] == "true" {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// withVolumeTopology returns a copy of the pod whose required node affinity also demands the
// volume topology terms.
func withVolumeTopology(pod *corev1.Pod, terms [][]corev1.NodeSelectorRequirement) *corev1.Pod {
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

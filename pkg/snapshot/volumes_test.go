package snapshot

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// objects is a Storage over a few objects.
type objects struct {
	claims  []*corev1.PersistentVolumeClaim
	volumes []*corev1.PersistentVolume
	classes []*storagev1.StorageClass
}

func (o objects) PersistentVolumeClaim(ns, name string) (*corev1.PersistentVolumeClaim, error) {
	for _, c := range o.claims {
		if c.Namespace == ns && c.Name == name {
			return c, nil
		}
	}
	return nil, nil
}

func (o objects) PersistentVolume(name string) (*corev1.PersistentVolume, error) {
	for _, v := range o.volumes {
		if v.Name == name {
			return v, nil
		}
	}
	return nil, nil
}

func (o objects) StorageClass(name string) (*storagev1.StorageClass, error) {
	for _, c := range o.classes {
		if c.Name == name {
			return c, nil
		}
	}
	return nil, nil
}

func (o objects) DefaultStorageClass() (*storagev1.StorageClass, error) {
	for _, c := range o.classes {
		if c.Annotations[DefaultStorageClassAnnotation] == "true" {
			return c, nil
		}
	}
	return nil, nil
}

func zoneClass(name string, mode storagev1.VolumeBindingMode, isDefault bool, zones ...string) *storagev1.StorageClass {
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "ebs.csi.aws.com", VolumeBindingMode: &mode,
		AllowedTopologies: []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: "topology.ebs.csi.aws.com/zone", Values: zones}}}}}
	if isDefault {
		sc.Annotations = map[string]string{DefaultStorageClassAnnotation: "true"}
	}
	return sc
}

func claim(name string, class *string, volume string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: class, VolumeName: volume}}
}

func podWith(volumes ...corev1.Volume) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p"}, Spec: corev1.PodSpec{Volumes: volumes}}
}

func pvcVolume(claim string) corev1.Volume {
	return corev1.Volume{Name: claim, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}
}

func TestVolumeTopologyConfinesPodsToWhereTheirVolumesAre(t *testing.T) {
	st := objects{
		classes: []*storagev1.StorageClass{
			zoneClass("wffc", storagev1.VolumeBindingWaitForFirstConsumer, false, "us-east-1b"),
			zoneClass("immediate", storagev1.VolumeBindingImmediate, false, "us-east-1c"),
			zoneClass("default", storagev1.VolumeBindingWaitForFirstConsumer, true, "us-east-1a", "us-east-1b"),
		},
		volumes: []*corev1.PersistentVolume{{ObjectMeta: metav1.ObjectMeta{Name: "pv-a"}, Spec: corev1.PersistentVolumeSpec{
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: apisv1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"us-east-1a"}}}}}}}}}},
		claims: []*corev1.PersistentVolumeClaim{
			claim("bound", ptr.To("wffc"), "pv-a"),
			claim("wffc", ptr.To("wffc"), ""),
			claim("immediate", ptr.To("immediate"), ""),
			claim("defaulted", nil, ""),
			claim("classless", ptr.To(""), ""),
			claim("lost-class", ptr.To("gone"), ""),
			claim("lost-volume", ptr.To("wffc"), "pv-gone"),
		},
	}
	zones := func(terms [][]corev1.NodeSelectorRequirement) string {
		var out []string
		for _, t := range terms {
			var parts []string
			for _, r := range t {
				parts = append(parts, r.Key+"="+strings.Join(r.Values, ","))
			}
			out = append(out, strings.Join(parts, "&"))
		}
		return strings.Join(out, " | ")
	}
	zone := apisv1.LabelZone
	for _, c := range []struct {
		name string
		pod  *corev1.Pod
		want string
		// wantErr is part of the error, which is a *VolumeError when volumeErr is set.
		wantErr   string
		volumeErr bool
	}{
		{"bound volume: its node affinity", podWith(pvcVolume("bound")), zone + "=us-east-1a", "", false},
		{"unbound, WaitForFirstConsumer: the class's topology", podWith(pvcVolume("wffc")), zone + "=us-east-1b", "", false},
		{"unbound, Immediate: the class's topology", podWith(pvcVolume("immediate")), zone + "=us-east-1c", "", false},
		{"no class named: the default class", podWith(pvcVolume("defaulted")), zone + "=us-east-1a,us-east-1b", "", false},
		{"class \"\": none", podWith(pvcVolume("classless")), "", "", false},
		{"two volumes: both", podWith(pvcVolume("bound"), pvcVolume("wffc")), zone + "=us-east-1a&" + zone + "=us-east-1b", "", false},
		{"ephemeral volume: its template's class", podWith(corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
			VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("immediate")}}}}}), zone + "=us-east-1c", "", false},
		{"missing claim", podWith(pvcVolume("nope")), "", "persistentvolumeclaim default/nope not found", true},
		{"missing class", podWith(pvcVolume("lost-class")), "", "claim default/lost-class: storageclass gone not found", true},
		{"missing volume", podWith(pvcVolume("lost-volume")), "", "persistentvolume pv-gone of claim default/lost-volume not found", true},
	} {
		terms, err := VolumeTopology(c.pod, st)
		if c.wantErr != "" {
			var ve *VolumeError
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || errors.As(err, &ve) != c.volumeErr {
				t.Errorf("%s: error %v, want %q", c.name, err, c.wantErr)
			}
			if r := UnplannableReason(err); r.Kind != solver.ReasonVolume || r.String() != err.Error() {
				t.Errorf("%s: reason %+v", c.name, r)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := zones(terms); got != c.want {
			t.Errorf("%s: terms %q, want %q", c.name, got, c.want)
		}
	}
}

func TestPendingPodJoinsVolumeTopologyToEachOwnTermInACopy(t *testing.T) {
	st := objects{classes: []*storagev1.StorageClass{zoneClass("wffc", storagev1.VolumeBindingWaitForFirstConsumer, false, "us-east-1b")},
		claims: []*corev1.PersistentVolumeClaim{claim("data", ptr.To("wffc"), "")}}
	pod := podWith(pvcVolume("data"))
	pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "a", Operator: corev1.NodeSelectorOpExists}}},
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "b", Operator: corev1.NodeSelectorOpExists}}},
		}}}}
	out, err := PendingPod(pod, st)
	if err != nil {
		t.Fatal(err)
	}
	terms := out.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 2 || len(terms[0].MatchExpressions) != 2 || terms[0].MatchExpressions[1].Key != apisv1.LabelZone || len(terms[1].MatchExpressions) != 2 {
		t.Errorf("terms %+v: each of the pod's terms must also demand the zone", terms)
	}
	if len(pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions) != 1 {
		t.Error("the pod given was modified")
	}
}

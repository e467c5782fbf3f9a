package plan

import (
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/manifest"
	"github.com/tenon-sh/tenon/pkg/snapshot"
)

// storage is the storage objects of the manifests, for snapshot.PendingPod: the claims, volumes
// and StorageClasses of the workload manifests and of the existing nodes' (the first of a name
// wins), with the claims StatefulSets would create.
type storage struct {
	claims  map[string]*corev1.PersistentVolumeClaim // by namespace/name
	volumes map[string]*corev1.PersistentVolume
	classes map[string]*storagev1.StorageClass
	def     *storagev1.StorageClass
}

var _ snapshot.Storage = (*storage)(nil)

func newStorage(sets ...*manifest.Set) *storage {
	st := &storage{claims: map[string]*corev1.PersistentVolumeClaim{}, volumes: map[string]*corev1.PersistentVolume{}, classes: map[string]*storagev1.StorageClass{}}
	for _, set := range sets {
		if set == nil {
			continue
		}
		for _, c := range set.VolumeClaims() {
			if k := c.Namespace + "/" + c.Name; st.claims[k] == nil {
				st.claims[k] = c
			}
		}
		for _, v := range set.PersistentVolumes {
			if st.volumes[v.Name] == nil {
				st.volumes[v.Name] = v
			}
		}
		for _, c := range set.StorageClasses {
			if st.classes[c.Name] == nil {
				st.classes[c.Name] = c
			}
			if st.def == nil && c.Annotations[snapshot.DefaultStorageClassAnnotation] == "true" {
				st.def = c
			}
		}
	}
	return st
}

func (s *storage) PersistentVolumeClaim(namespace, name string) (*corev1.PersistentVolumeClaim, error) {
	return s.claims[namespace+"/"+name], nil
}

func (s *storage) PersistentVolume(name string) (*corev1.PersistentVolume, error) {
	return s.volumes[name], nil
}

func (s *storage) StorageClass(name string) (*storagev1.StorageClass, error) {
	return s.classes[name], nil
}

func (s *storage) DefaultStorageClass() (*storagev1.StorageClass, error) { return s.def, nil }

// ignoredHints say why tenon plan leaves a kind aside, where more can be said than that it does
// not read it.
var ignoredHints = map[schema.GroupKind]string{
	{Kind: "Node"}:                                 "existing nodes are read from --nodes",
	{Group: apisv1.Group, Kind: "NodeClaim"}:       "claims in flight are not read from manifests",
	{Group: apisv1.AWSGroup, Kind: "EC2NodeClass"}: "NodePools naming one plan with the embedded catalog of --region",
	{Group: "policy", Kind: "PodDisruptionBudget"}: "disruption budgets do not change what is bought",
}

// WriteIgnored writes one line for each kind of the manifests tenon plan left aside.
func (in *Input) WriteIgnored(w io.Writer) {
	for _, set := range []struct {
		flag  string
		kinds []manifest.KindCount
	}{{"-f", in.Ignored}, {"--nodes", in.IgnoredExisting}} {
		for _, k := range set.kinds {
			why := "tenon plan does not read this kind"
			if h, ok := ignoredHints[k.GroupKind]; ok && set.flag == "-f" {
				why = h
			}
			fmt.Fprintf(w, "tenon plan: ignored %s (given with %s); %s\n", k.Describe(), set.flag, why)
		}
	}
	for _, p := range in.Overlays {
		fmt.Fprintf(w, "tenon plan: %s\n", p)
	}
}

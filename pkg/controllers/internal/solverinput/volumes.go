package solverinput

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-sh/tenon/pkg/snapshot"
)

// storage reads the storage objects of pending pods from the API server, for
// snapshot.PendingPod.
type storage struct {
	ctx context.Context
	c   client.Reader
}

var _ snapshot.Storage = storage{}

func (s storage) PersistentVolumeClaim(namespace, name string) (*corev1.PersistentVolumeClaim, error) {
	pvc := &corev1.PersistentVolumeClaim{}
	return found(pvc, s.c.Get(s.ctx, types.NamespacedName{Namespace: namespace, Name: name}, pvc))
}

func (s storage) PersistentVolume(name string) (*corev1.PersistentVolume, error) {
	pv := &corev1.PersistentVolume{}
	return found(pv, s.c.Get(s.ctx, types.NamespacedName{Name: name}, pv))
}

func (s storage) StorageClass(name string) (*storagev1.StorageClass, error) {
	sc := &storagev1.StorageClass{}
	return found(sc, s.c.Get(s.ctx, types.NamespacedName{Name: name}, sc))
}

func (s storage) DefaultStorageClass() (*storagev1.StorageClass, error) {
	list := &storagev1.StorageClassList{}
	if err := s.c.List(s.ctx, list); err != nil {
		return nil, err
	}
	for i := range list.Items {
		if list.Items[i].Annotations[snapshot.DefaultStorageClassAnnotation] == "true" {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// found returns obj, nil for an object that does not exist, or the error reading it.
func found[T any](obj *T, err error) (*T, error) {
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return obj, nil
}

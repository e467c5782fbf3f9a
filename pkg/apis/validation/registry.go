package validation

import (
	"errors"
	"fmt"
	"sync"

	"github.com/tenon-sh/tenon/pkg/apis/crds"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ErrNoCRD is wrapped by the errors of For and ForGroupKind when no embedded
// CustomResourceDefinition serves the kind.
var ErrNoCRD = errors.New("no CustomResourceDefinition")

// registry holds a Validator for every served version of every embedded CRD.
type registry struct {
	byGVK map[schema.GroupVersionKind]*Validator
	// byGK holds the storage version of each kind.
	byGK map[schema.GroupKind]*Validator
}

// embedded builds the validators of the embedded CRDs on first use.
var embedded = sync.OnceValues(func() (*registry, error) {
	all, err := crds.CRDs()
	if err != nil {
		return nil, err
	}
	r := &registry{byGVK: map[schema.GroupVersionKind]*Validator{}, byGK: map[schema.GroupKind]*Validator{}}
	for _, crd := range all {
		storage, err := NewValidator(crd, "")
		if err != nil {
			return nil, err
		}
		r.byGK[storage.gvk.GroupKind()] = storage
		for _, version := range crd.Spec.Versions {
			if !version.Served {
				continue
			}
			v := storage
			if version.Name != storage.gvk.Version {
				if v, err = NewValidator(crd, version.Name); err != nil {
					return nil, err
				}
			}
			r.byGVK[v.gvk] = v
		}
	}
	return r, nil
})

// For returns the Validator of a kind whose CRD is embedded in package crds, such as
// karpenter.sh/v1 NodePool. The error wraps ErrNoCRD when no embedded CRD serves gvk, and
// reports a broken embedded CRD otherwise.
func For(gvk schema.GroupVersionKind) (*Validator, error) {
	r, err := embedded()
	if err != nil {
		return nil, err
	}
	v, ok := r.byGVK[gvk]
	if !ok {
		return nil, fmt.Errorf("%w for %s in %s", ErrNoCRD, gvk.Kind, gvk.GroupVersion())
	}
	return v, nil
}

// ForGroupKind returns the Validator of the storage version of a kind whose CRD is embedded in
// package crds. The error wraps ErrNoCRD when there is none.
func ForGroupKind(gk schema.GroupKind) (*Validator, error) {
	r, err := embedded()
	if err != nil {
		return nil, err
	}
	v, ok := r.byGK[gk]
	if !ok {
		return nil, fmt.Errorf("%w for %s in group %s", ErrNoCRD, gk.Kind, gk.Group)
	}
	return v, nil
}

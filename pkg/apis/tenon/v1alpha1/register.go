package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group and Version are tenon.sh/v1alpha1.
const (
	Group   = "tenon.sh"
	Version = "v1alpha1"
)

// Kinds served by this package.
const (
	CommitmentKind     = "Commitment"
	CommitmentListKind = "CommitmentList"
)

// SchemeGroupVersion is tenon.sh/v1alpha1.
var SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

// CommitmentGroupKind is tenon.sh Commitment.
var CommitmentGroupKind = schema.GroupKind{Group: Group, Kind: CommitmentKind}

var (
	// SchemeBuilder registers Commitment and its list.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds this package's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &Commitment{}, &CommitmentList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group is the API group of the simulated cloud's kinds.
const Group = "sim.tenon.sh"

// Version is the API version of SimNodeClass and SimInstance.
const Version = "v1alpha1"

// Kinds served by this package.
const (
	SimNodeClassKind     = "SimNodeClass"
	SimNodeClassListKind = "SimNodeClassList"
	SimInstanceKind      = "SimInstance"
	SimInstanceListKind  = "SimInstanceList"
)

// SchemeGroupVersion is sim.tenon.sh/v1alpha1.
var SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

var (
	// SchemeBuilder registers SimNodeClass, SimInstance and their lists.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds this package's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&SimNodeClass{}, &SimNodeClassList{},
		&SimInstance{}, &SimInstanceList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}

// Resource returns the group-qualified resource for a plural name, e.g. Resource("siminstances").
func Resource(plural string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(plural).GroupResource()
}

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// Version is the API version of NodeOverlay.
const Version = "v1alpha1"

// Kinds served by this package.
const (
	NodeOverlayKind     = "NodeOverlay"
	NodeOverlayListKind = "NodeOverlayList"
)

// SchemeGroupVersion is karpenter.sh/v1alpha1.
var SchemeGroupVersion = schema.GroupVersion{Group: apisv1.Group, Version: Version}

// NodeOverlayGroupKind is karpenter.sh NodeOverlay.
var NodeOverlayGroupKind = schema.GroupKind{Group: apisv1.Group, Kind: NodeOverlayKind}

var (
	// SchemeBuilder registers NodeOverlay and its list.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds this package's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &NodeOverlay{}, &NodeOverlayList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}

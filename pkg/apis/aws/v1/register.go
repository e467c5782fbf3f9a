package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group is the API group of Karpenter's AWS provider.
const Group = "karpenter.k8s.aws"

// Version is the API version of EC2NodeClass.
const Version = "v1"

// Kinds served by this package.
const (
	EC2NodeClassKind     = "EC2NodeClass"
	EC2NodeClassListKind = "EC2NodeClassList"
)

// SchemeGroupVersion is karpenter.k8s.aws/v1.
var SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

// EC2NodeClassGroupKind is the group and kind a NodePool's nodeClassRef names to use an
// EC2NodeClass.
var EC2NodeClassGroupKind = schema.GroupKind{Group: Group, Kind: EC2NodeClassKind}

var (
	// SchemeBuilder registers EC2NodeClass and its list.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds this package's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &EC2NodeClass{}, &EC2NodeClassList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}

// Resource returns the group-qualified resource for a plural name, e.g. Resource("ec2nodeclasses").
func Resource(plural string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(plural).GroupResource()
}

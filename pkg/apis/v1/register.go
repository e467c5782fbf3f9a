package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Version is the API version of NodePool and NodeClaim.
const Version = "v1"

// Kinds served by this package.
const (
	NodePoolKind      = "NodePool"
	NodePoolListKind  = "NodePoolList"
	NodeClaimKind     = "NodeClaim"
	NodeClaimListKind = "NodeClaimList"
)

// SchemeGroupVersion is karpenter.sh/v1.
var SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

var (
	// SchemeBuilder registers NodePool, NodeClaim and their lists.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds this package's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&NodePool{}, &NodePoolList{},
		&NodeClaim{}, &NodeClaimList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}

// Resource returns the group-qualified resource for a plural name, e.g. Resource("nodepools").
func Resource(plural string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(plural).GroupResource()
}

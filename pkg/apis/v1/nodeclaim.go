package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NodeClaim is one request for capacity: tenon asks the cloud provider for an instance that
// satisfies the spec, and the instance registers as a Node. Its spec cannot change once created.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:path=nodeclaims,scope=Cluster,categories=karpenter
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Type",type="string",JSONPath=".metadata.labels.node\\.kubernetes\\.io/instance-type"
// +kubebuilder:printcolumn:name="Capacity",type="string",JSONPath=".metadata.labels.karpenter\\.sh/capacity-type"
// +kubebuilder:printcolumn:name="Zone",type="string",JSONPath=".metadata.labels.topology\\.kubernetes\\.io/zone"
// +kubebuilder:printcolumn:name="Node",type="string",JSONPath=".status.nodeName"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="ImageID",type="string",JSONPath=".status.imageID",priority=1
// +kubebuilder:printcolumn:name="ID",type="string",JSONPath=".status.providerID",priority=1
// +kubebuilder:printcolumn:name="NodePool",type="string",JSONPath=".metadata.labels.karpenter\\.sh/nodepool",priority=1
// +kubebuilder:printcolumn:name="NodeClass",type="string",JSONPath=".spec.nodeClassRef.name",priority=1
// +kubebuilder:printcolumn:name="Drifted",type="string",JSONPath=".status.conditions[?(@.type==\"Drifted\")].status",priority=1
type NodeClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="the spec of a NodeClaim cannot be changed after it is created"
	// +required
	Spec   NodeClaimSpec   `json:"spec"`
	Status NodeClaimStatus `json:"status,omitempty"`
}

// NodeClaimList is a list of NodeClaims.
//
// +kubebuilder:object:root=true
type NodeClaimList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodeClaim `json:"items"`
}

// NodeClaimSpec is what the launched node must satisfy.
type NodeClaimSpec struct {
	// Taints are placed on the node and stay there.
	// Each taint needs a qualified-name key, a label-value value, and an effect of NoSchedule,
	// PreferNoSchedule or NoExecute.
	// +listType=atomic
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`
	// StartupTaints are placed on the node when it starts and are expected to be removed by
	// something on the node (typically a DaemonSet) once it is set up. Pods need not tolerate them
	// for tenon to provision for them.
	// Each taint needs a qualified-name key, a label-value value, and an effect of NoSchedule,
	// PreferNoSchedule or NoExecute.
	// +listType=atomic
	// +optional
	StartupTaints []corev1.Taint `json:"startupTaints,omitempty"`
	// Requirements constrain the node's labels; tenon picks an instance type that satisfies all.
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +required
	Requirements []NodeSelectorRequirementWithMinValues `json:"requirements"`
	// Resources are the requests the node must have room for.
	// +optional
	Resources ResourceRequirements `json:"resources,omitempty"`
	// NodeClassRef names the provider-specific configuration of the node.
	// +required
	NodeClassRef *NodeClassReference `json:"nodeClassRef"`
	// TerminationGracePeriod bounds how long draining the node may take once its deletion
	// begins. When it runs out, remaining pods are deleted even if a PodDisruptionBudget or the
	// karpenter.sh/do-not-disrupt annotation would block their eviction. Pods are deleted early
	// enough to receive their own terminationGracePeriodSeconds. Unset means wait for ever.
	// +kubebuilder:validation:Pattern=`^([0-9]+(s|m|h))+$`
	// +kubebuilder:validation:Type="string"
	// +optional
	TerminationGracePeriod *metav1.Duration `json:"terminationGracePeriod,omitempty"`
	// ExpireAfter is how long after creation the node is replaced, or Never.
	// +kubebuilder:default:="720h"
	// +optional
	ExpireAfter NillableDuration `json:"expireAfter,omitempty"`
}

// ResourceRequirements are the resources a NodeClaim must provide.
type ResourceRequirements struct {
	// Requests are the minimum resources the node must have allocatable.
	// +optional
	Requests corev1.ResourceList `json:"requests,omitempty"`
}

// NodeClassReference names a provider's NodeClass object.
type NodeClassReference struct {
	// Kind of the NodeClass, e.g. EC2NodeClass.
	// +kubebuilder:validation:XValidation:rule="self != ''",message="kind must not be empty"
	// +required
	Kind string `json:"kind"`
	// Name of the NodeClass.
	// +kubebuilder:validation:XValidation:rule="self != ''",message="name must not be empty"
	// +required
	Name string `json:"name"`
	// Group of the NodeClass, without a version, e.g. karpenter.k8s.aws.
	// +kubebuilder:validation:XValidation:rule="self != ''",message="group must not be empty"
	// +kubebuilder:validation:Pattern=`^[^/]*$`
	// +required
	Group string `json:"group"`
}

// GroupKind returns the group and kind of the referenced NodeClass.
func (in *NodeClassReference) GroupKind() schema.GroupKind {
	return schema.GroupKind{Group: in.Group, Kind: in.Kind}
}

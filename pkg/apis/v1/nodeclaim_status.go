package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types of a NodeClaim.
const (
	// ConditionTypeLaunched: the cloud provider created the instance and its providerID is known.
	ConditionTypeLaunched = "Launched"
	// ConditionTypeRegistered: a Node with the claim's providerID joined the cluster and tenon
	// synced the claim's labels and taints onto it.
	ConditionTypeRegistered = "Registered"
	// ConditionTypeInitialized: the Node is Ready, its startup taints are gone and its extended
	// resources are registered.
	ConditionTypeInitialized = "Initialized"
	// ConditionTypeConsolidatable: the claim has been idle long enough (consolidateAfter) to be a
	// consolidation candidate.
	ConditionTypeConsolidatable = "Consolidatable"
	// ConditionTypeDrifted: the claim no longer matches its NodePool or NodeClass.
	ConditionTypeDrifted = "Drifted"
	// ConditionTypeDrained: the Node's pods have been evicted during termination.
	ConditionTypeDrained = "Drained"
	// ConditionTypeVolumesDetached: the Node's volume attachments are gone during termination.
	ConditionTypeVolumesDetached = "VolumesDetached"
	// ConditionTypeInstanceTerminating: the cloud provider was asked to delete the instance.
	ConditionTypeInstanceTerminating = "InstanceTerminating"
	// ConditionTypeDisruptionReason records why tenon is disrupting the claim; its reason is
	// the disruption method.
	ConditionTypeDisruptionReason = "DisruptionReason"
)

// NodeClaimReadyDependents are the conditions whose conjunction is a NodeClaim's Ready.
var NodeClaimReadyDependents = []string{ConditionTypeLaunched, ConditionTypeRegistered, ConditionTypeInitialized}

// NodeClaimStatus is what tenon observed about the claim's instance and node.
type NodeClaimStatus struct {
	// NodeName is the name of the Node that registered for this claim.
	// +optional
	NodeName string `json:"nodeName,omitempty"`
	// ProviderID identifies the instance at the cloud provider; it matches the Node's
	// spec.providerID.
	// +optional
	ProviderID string `json:"providerID,omitempty"`
	// ImageID identifies the machine image the instance booted.
	// +optional
	ImageID string `json:"imageID,omitempty"`
	// Capacity is the node's expected total resources.
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`
	// Allocatable is the node's expected resources available to pods.
	// +optional
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
	// Conditions report the claim's progress through its lifecycle.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// LastPodEventTime is when a pod last started or stopped running on the node; emptiness
	// and consolidateAfter are measured from it.
	// +optional
	LastPodEventTime metav1.Time `json:"lastPodEventTime,omitempty"`
}

package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types of a NodePool.
const (
	// ConditionTypeValidationSucceeded: the NodePool passed the checks the schema cannot make.
	ConditionTypeValidationSucceeded = "ValidationSucceeded"
	// ConditionTypeNodeClassReady: the referenced NodeClass exists and is Ready.
	ConditionTypeNodeClassReady = "NodeClassReady"
	// ConditionTypeNodeRegistrationHealthy: nodes launched for the NodePool have been
	// registering; False points at a configuration that keeps them from joining.
	ConditionTypeNodeRegistrationHealthy = "NodeRegistrationHealthy"
)

// NodePoolReadyDependents are the conditions whose conjunction is a NodePool's Ready.
var NodePoolReadyDependents = []string{ConditionTypeValidationSucceeded, ConditionTypeNodeClassReady}

// NodePoolStatus is what tenon observed about a NodePool's nodes.
type NodePoolStatus struct {
	// Resources is the total capacity of the NodePool's nodes.
	// +optional
	Resources corev1.ResourceList `json:"resources,omitempty"`
	// Nodes is the number of the NodePool's nodes.
	// +kubebuilder:default:=0
	// +optional
	Nodes *int64 `json:"nodes"`
	// NodeClassObservedGeneration is the NodeClass generation NodeRegistrationHealthy was
	// judged against; when the NodeClass changes, the judgement starts over.
	// +optional
	NodeClassObservedGeneration int64 `json:"nodeClassObservedGeneration,omitempty"`
	// Conditions report the NodePool's health.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

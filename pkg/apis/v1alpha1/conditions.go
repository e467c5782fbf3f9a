package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// Conditions of a NodeOverlay.
const (
	// ConditionTypeValidationSucceeded is True when the overlay is valid and conflicts with no
	// other: it is applied.
	ConditionTypeValidationSucceeded = "ValidationSucceeded"
	// ReasonRuntimeValidation and ReasonConflict say why ValidationSucceeded is False.
	ReasonRuntimeValidation = "RuntimeValidation"
	ReasonConflict          = "Conflict"
)

// NodeOverlayReadyDependents are the conditions Ready summarizes.
var NodeOverlayReadyDependents = []string{ConditionTypeValidationSucceeded}

// GetCondition returns the condition of type t, or nil.
func (in *NodeOverlay) GetCondition(t string) *metav1.Condition {
	for i := range in.Status.Conditions {
		if in.Status.Conditions[i].Type == t {
			return &in.Status.Conditions[i]
		}
	}
	return nil
}

// SetCondition sets a condition and recomputes Ready; it reports whether anything changed.
func (in *NodeOverlay) SetCondition(c metav1.Condition, now time.Time) bool {
	c.ObservedGeneration = in.Generation
	return apisv1.SetConditions(&in.Status.Conditions, c, NodeOverlayReadyDependents, in.Generation, now)
}

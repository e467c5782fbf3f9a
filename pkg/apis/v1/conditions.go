package v1

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConditionTypeReady is the root condition of NodePools and NodeClaims: True when all of its
// dependents (NodePoolReadyDependents, NodeClaimReadyDependents) are True, False when one is
// False, Unknown otherwise. SetCondition keeps it up to date.
const ConditionTypeReady = "Ready"

// Reasons SetCondition gives the Ready condition.
const (
	ReasonReady             = "Ready"
	ReasonAwaitingCondition = "AwaitingCondition"
)

// GetCondition returns the NodeClaim's condition of type t, or nil.
func (in *NodeClaim) GetCondition(t string) *metav1.Condition {
	return findCondition(in.Status.Conditions, t)
}

// IsTrue reports whether the NodeClaim's condition of type t is True.
func (in *NodeClaim) IsTrue(t string) bool { return isTrue(in.Status.Conditions, t) }

// SetCondition records c at time now (the transition time changes only when the status does),
// stamps it with the NodeClaim's generation, and recomputes Ready. It reports whether any
// condition changed. Setting Ready itself has no lasting effect: it is always derived.
func (in *NodeClaim) SetCondition(c metav1.Condition, now time.Time) bool {
	c.ObservedGeneration = in.Generation
	changed := setCondition(&in.Status.Conditions, c, now)
	return setReady(&in.Status.Conditions, NodeClaimReadyDependents, in.Generation, now) || changed
}

// ClearCondition removes the NodeClaim's condition of type t (as Karpenter removes Drifted and
// Consolidatable when they stop holding) and reports whether it was there. Ready's dependents
// are not to be cleared.
func (in *NodeClaim) ClearCondition(t string) bool {
	n := len(in.Status.Conditions)
	in.Status.Conditions = slices.DeleteFunc(in.Status.Conditions, func(c metav1.Condition) bool { return c.Type == t })
	return len(in.Status.Conditions) != n
}

// GetCondition returns the NodePool's condition of type t, or nil.
func (in *NodePool) GetCondition(t string) *metav1.Condition {
	return findCondition(in.Status.Conditions, t)
}

// IsTrue reports whether the NodePool's condition of type t is True.
func (in *NodePool) IsTrue(t string) bool { return isTrue(in.Status.Conditions, t) }

// SetCondition records c at time now (the transition time changes only when the status does),
// stamps it with the NodePool's generation, and recomputes Ready. It reports whether any
// condition changed. Setting Ready itself has no lasting effect: it is always derived.
func (in *NodePool) SetCondition(c metav1.Condition, now time.Time) bool {
	c.ObservedGeneration = in.Generation
	changed := setCondition(&in.Status.Conditions, c, now)
	return setReady(&in.Status.Conditions, NodePoolReadyDependents, in.Generation, now) || changed
}

func findCondition(conditions []metav1.Condition, t string) *metav1.Condition {
	for i := range conditions {
		if conditions[i].Type == t {
			return &conditions[i]
		}
	}
	return nil
}

func isTrue(conditions []metav1.Condition, t string) bool {
	c := findCondition(conditions, t)
	return c != nil && c.Status == metav1.ConditionTrue
}

func setCondition(conditions *[]metav1.Condition, c metav1.Condition, now time.Time) bool {
	old := findCondition(*conditions, c.Type)
	if old == nil {
		c.LastTransitionTime = metav1.NewTime(now)
		*conditions = append(*conditions, c)
		return true
	}
	if old.Status == c.Status {
		c.LastTransitionTime = old.LastTransitionTime
	} else {
		c.LastTransitionTime = metav1.NewTime(now)
	}
	if *old == c {
		return false
	}
	*old = c
	return true
}

// setReady derives Ready from the dependents: the first dependent that is not True (in the
// order given) supplies Ready's status, reason and message.
func setReady(conditions *[]metav1.Condition, dependents []string, generation int64, now time.Time) bool {
	ready := metav1.Condition{Type: ConditionTypeReady, Status: metav1.ConditionTrue, Reason: ReasonReady, ObservedGeneration: generation}
	for _, t := range dependents {
		c := findCondition(*conditions, t)
		if c == nil {
			ready.Status, ready.Reason, ready.Message = metav1.ConditionUnknown, ReasonAwaitingCondition, "awaiting condition "+t
			break
		}
		if c.Status != metav1.ConditionTrue {
			ready.Status, ready.Reason, ready.Message = c.Status, c.Reason, c.Message
			if ready.Reason == "" {
				ready.Reason = ReasonAwaitingCondition
			}
			break
		}
	}
	return setCondition(conditions, ready, now)
}

// SetConditions records c at time now in conditions (the transition time changes only when the
// status does) and recomputes Ready from dependents, for the API types of other versions in
// this group. It reports whether any condition changed.
func SetConditions(conditions *[]metav1.Condition, c metav1.Condition, dependents []string, generation int64, now time.Time) bool {
	changed := setCondition(conditions, c, now)
	return setReady(conditions, dependents, generation, now) || changed
}

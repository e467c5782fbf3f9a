package v1_test

import (
	"testing"
	"time"

	v1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func cond(t, status, reason string) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionStatus(status), Reason: reason}
}

func TestNodeClaimConditions(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	ready := func() metav1.Condition { return *nc.GetCondition(v1.ConditionTypeReady) }

	if !nc.SetCondition(cond(v1.ConditionTypeLaunched, "True", "Launched"), t0) {
		t.Fatal("first SetCondition reported no change")
	}
	launched := nc.GetCondition(v1.ConditionTypeLaunched)
	if launched == nil || !launched.LastTransitionTime.Time.Equal(t0) || launched.ObservedGeneration != 2 || !nc.IsTrue(v1.ConditionTypeLaunched) {
		t.Fatalf("Launched = %+v", launched)
	}
	if r := ready(); r.Status != metav1.ConditionUnknown || r.Reason != v1.ReasonAwaitingCondition {
		t.Errorf("Ready before registration = %+v, want Unknown awaiting", r)
	}

	// The same status again changes nothing, not even the transition time.
	if nc.SetCondition(cond(v1.ConditionTypeLaunched, "True", "Launched"), t0.Add(time.Minute)) {
		t.Error("repeating a condition reported a change")
	}
	if !nc.GetCondition(v1.ConditionTypeLaunched).LastTransitionTime.Time.Equal(t0) {
		t.Error("repeating a condition moved its transition time")
	}

	t1 := t0.Add(2 * time.Minute)
	nc.SetCondition(cond(v1.ConditionTypeRegistered, "True", "Registered"), t1)
	nc.SetCondition(cond(v1.ConditionTypeInitialized, "False", "StartupTaintsPresent"), t1)
	if r := ready(); r.Status != metav1.ConditionFalse || r.Reason != "StartupTaintsPresent" {
		t.Errorf("Ready with Initialized False = %+v", r)
	}

	t2 := t0.Add(3 * time.Minute)
	nc.SetCondition(cond(v1.ConditionTypeInitialized, "True", "Initialized"), t2)
	if r := ready(); r.Status != metav1.ConditionTrue || r.Reason != v1.ReasonReady || !r.LastTransitionTime.Time.Equal(t2) {
		t.Errorf("Ready with all dependents True = %+v", r)
	}
	if !nc.IsTrue(v1.ConditionTypeReady) || nc.IsTrue(v1.ConditionTypeDrifted) || nc.GetCondition(v1.ConditionTypeDrifted) != nil {
		t.Error("IsTrue/GetCondition disagree with the conditions")
	}

	// A condition outside the dependents does not affect Ready.
	nc.SetCondition(cond(v1.ConditionTypeDrifted, "True", "NodeClassDrifted"), t2)
	if r := ready(); r.Status != metav1.ConditionTrue {
		t.Errorf("Drifted changed Ready: %+v", r)
	}
	// Ready cannot be set directly.
	nc.SetCondition(cond(v1.ConditionTypeReady, "False", "Manual"), t2)
	if r := ready(); r.Status != metav1.ConditionTrue {
		t.Errorf("setting Ready directly stuck: %+v", r)
	}
}

func TestNodePoolConditions(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	np := &v1.NodePool{}
	np.SetCondition(cond(v1.ConditionTypeValidationSucceeded, "True", "Valid"), now)
	np.SetCondition(cond(v1.ConditionTypeNodeClassReady, "Unknown", ""), now)
	if r := np.GetCondition(v1.ConditionTypeReady); r == nil || r.Status != metav1.ConditionUnknown || r.Reason == "" {
		t.Errorf("Ready = %+v, want Unknown with a reason", r)
	}
	np.SetCondition(cond(v1.ConditionTypeNodeClassReady, "True", "Ready"), now)
	np.SetCondition(cond(v1.ConditionTypeNodeRegistrationHealthy, "False", "Unhealthy"), now)
	if !np.IsTrue(v1.ConditionTypeReady) {
		t.Errorf("Ready = %+v, want True: NodeRegistrationHealthy is not a dependent", np.GetCondition(v1.ConditionTypeReady))
	}
}

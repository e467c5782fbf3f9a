package lifecycle

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	tmetrics "github.com/tenon-sh/tenon/pkg/metrics"
)

// Event reasons of liveness.
const (
	ReasonLaunchTimeout       = "LaunchTimeout"
	ReasonRegistrationTimeout = "RegistrationTimeout"
)

// liveness deletes a claim that has not launched, or not registered, in time, and otherwise
// asks to look again when its deadline comes.
func (c *Controller) liveness(ctx context.Context, claim *apisv1.NodeClaim, s *step) {
	timeout, reason, metricReason, what := c.opts.LaunchTimeout, ReasonLaunchTimeout, tmetrics.ReasonLaunchTimeout, "launched"
	switch {
	case !claim.IsTrue(apisv1.ConditionTypeLaunched):
	case !claim.IsTrue(apisv1.ConditionTypeRegistered):
		timeout = c.opts.RegistrationTimeout
		reason, metricReason, what = ReasonRegistrationTimeout, tmetrics.ReasonRegistrationTimeout, "registered"
	default:
		return
	}
	age := c.deps.Clock.Since(claim.CreationTimestamp.Time)
	if age < timeout {
		s.after(timeout - age)
		return
	}
	c.deps.Recorder.Eventf(claim, corev1.EventTypeWarning, reason,
		"not %s within %v of its creation; deleting the NodeClaim so that its pods are provisioned again", what, timeout)
	if err := c.deleteClaim(ctx, claim); err != nil {
		s.err = err
		return
	}
	s.deleted = true
	tmetrics.Disrupted(claim, metricReason, "", 0)
}

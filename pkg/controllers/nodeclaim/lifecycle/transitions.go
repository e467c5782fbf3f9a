package lifecycle

import (
	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/metrics"
	tmetrics "github.com/tenon-sh/tenon/pkg/metrics"
)

// recordTransitions counts, times and announces the conditions that became True between orig
// and claim, once they are written.
func (c *Controller) recordTransitions(orig, claim *apisv1.NodeClaim) {
	pool := metrics.NodePool(claim)
	age := c.deps.Clock.Since(claim.CreationTimestamp.Time).Seconds()
	became := func(t string) bool { return !orig.IsTrue(t) && claim.IsTrue(t) }
	if became(apisv1.ConditionTypeLaunched) {
		metrics.Launched.WithLabelValues(pool).Inc()
		metrics.LaunchDuration.WithLabelValues(pool).Observe(age)
		c.deps.Recorder.Eventf(claim, corev1.EventTypeNormal, ReasonLaunched, "launched %s (%s %s in %s)", claim.Status.ProviderID,
			claim.Labels[apisv1.CapacityTypeLabelKey], claim.Labels[apisv1.LabelInstanceType], claim.Labels[apisv1.LabelZone])
	}
	if became(apisv1.ConditionTypeRegistered) {
		tmetrics.NodesCreated.WithLabelValues(pool, claim.Labels[apisv1.LabelZone]).Inc()
		metrics.RegistrationDuration.WithLabelValues(pool).Observe(age)
		c.deps.Recorder.Eventf(claim, corev1.EventTypeNormal, ReasonRegistered, "Node %s registered", claim.Status.NodeName)
	}
	if became(apisv1.ConditionTypeInitialized) {
		metrics.Initialized.WithLabelValues(pool).Inc()
		metrics.InitializationDuration.WithLabelValues(pool).Observe(age)
		c.deps.Recorder.Eventf(claim, corev1.EventTypeNormal, ReasonInitialized, "Node %s initialized", claim.Status.NodeName)
	}
}

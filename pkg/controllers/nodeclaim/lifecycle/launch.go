package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/metrics"
	tmetrics "github.com/tenon-sh/tenon/pkg/metrics"
)

// Event reasons and condition reasons of launching.
const (
	ReasonLaunched             = "Launched"
	ReasonInsufficientCapacity = "InsufficientCapacity"
	ReasonNodeClassNotReady    = "NodeClassNotReady"
	ReasonLaunchFailed         = "LaunchFailed"
)

// maxMessage bounds the condition messages taken from errors.
const maxMessage = 512

// launch asks the provider for the claim's instance and records it in claim. Offerings the
// provider found without capacity on the way (cloudprovider.WithCapacityReport) are marked
// unavailable and named in an InsufficientCapacity event, whether or not it launched.
func (c *Controller) launch(ctx context.Context, claim *apisv1.NodeClaim, s *step) {
	now := c.deps.Clock.Now()
	var (
		heardMu sync.Mutex
		heard   []cloudprovider.Offering
	)
	report := cloudprovider.WithCapacityReport(ctx, func(o []cloudprovider.Offering) {
		heardMu.Lock()
		defer heardMu.Unlock()
		heard = append(heard, o...)
	})
	created, err := c.deps.CloudProvider.Create(report, claim)
	heardMu.Lock()
	heard = slices.Clone(heard)
	heardMu.Unlock()
	var ice *cloudprovider.InsufficientCapacityError
	if !errors.As(err, &ice) && len(heard) > 0 {
		then := "the launch failed for another reason"
		if err == nil {
			then = "launched " + launchedOffering(created) + " instead"
		}
		c.markHeard(claim, heard, then)
	}
	if err == nil {
		c.retry.DeleteEntry(claim.Name)
		applyLaunch(claim, created)
		claim.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeLaunched, Status: metav1.ConditionTrue, Reason: ReasonLaunched}, now)
		return
	}
	pool := metrics.NodePool(claim)
	var notReady *cloudprovider.NodeClassNotReadyError
	switch {
	case ice != nil:
		metrics.LaunchFailures.WithLabelValues(pool, metrics.ReasonInsufficientCapacity).Inc()
		for _, o := range ice.Offerings {
			c.deps.UnavailableOfferings.MarkUnavailable(o, ReasonInsufficientCapacity, c.opts.UnavailableOfferingsTTL)
		}
		for _, o := range heard {
			if !slices.Contains(ice.Offerings, o) {
				c.deps.UnavailableOfferings.MarkUnavailable(o, ReasonInsufficientCapacity, c.opts.UnavailableOfferingsTTL)
			}
		}
		c.deps.Recorder.Eventf(claim, corev1.EventTypeWarning, ReasonInsufficientCapacity,
			"%s; marking %s unavailable for %v and deleting the NodeClaim", truncate(err.Error()), offeringNoun(len(ice.Offerings)), c.opts.UnavailableOfferingsTTL)
		if s.err = c.deleteClaim(ctx, claim); s.err == nil {
			s.deleted = true
			tmetrics.Disrupted(claim, tmetrics.ReasonInsufficientCapacity, "", 0)
		}
		return
	case errors.As(err, &notReady):
		metrics.LaunchFailures.WithLabelValues(pool, metrics.ReasonNodeClassNotReady).Inc()
		if claim.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeLaunched, Status: metav1.ConditionFalse,
			Reason: ReasonNodeClassNotReady, Message: truncate(err.Error())}, now) {
			c.deps.Recorder.Eventf(claim, corev1.EventTypeWarning, ReasonNodeClassNotReady, "cannot launch: %s", truncate(err.Error()))
		}
	default:
		metrics.LaunchFailures.WithLabelValues(pool, metrics.ReasonError).Inc()
		log.FromContext(ctx).Error(err, "launching the NodeClaim's instance")
		c.deps.Recorder.Eventf(claim, corev1.EventTypeWarning, ReasonLaunchFailed, "launching the instance: %s", truncate(err.Error()))
		claim.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeLaunched, Status: metav1.ConditionUnknown,
			Reason: ReasonLaunchFailed, Message: truncate(err.Error())}, now)
	}
	c.retry.Next(claim.Name, now)
	s.after(c.retry.Get(claim.Name))
}

// markHeard marks the offerings a Create reported without capacity and records the claim's
// InsufficientCapacity event, in the format of the one for an InsufficientCapacityError:
// "NodeClaim NAME: insufficient capacity for TYPE/ZONE/CAPACITY-TYPE, ...; marking N
// offerings unavailable for TTL", then what became of the launch.
func (c *Controller) markHeard(claim *apisv1.NodeClaim, heard []cloudprovider.Offering, then string) {
	var unique []cloudprovider.Offering
	for _, o := range heard {
		if !slices.Contains(unique, o) {
			unique = append(unique, o)
			c.deps.UnavailableOfferings.MarkUnavailable(o, ReasonInsufficientCapacity, c.opts.UnavailableOfferingsTTL)
		}
	}
	msg := fmt.Sprintf("NodeClaim %s: %s", claim.Name, (&cloudprovider.InsufficientCapacityError{Offerings: unique}).Error())
	c.deps.Recorder.Eventf(claim, corev1.EventTypeWarning, ReasonInsufficientCapacity,
		"%s; marking %s unavailable for %v; %s", truncate(msg), offeringNoun(len(unique)), c.opts.UnavailableOfferingsTTL, then)
}

// launchedOffering names the offering of a launched claim from its labels.
func launchedOffering(created *apisv1.NodeClaim) string {
	l := created.Labels
	return cloudprovider.Offering{InstanceType: l[corev1.LabelInstanceTypeStable], Zone: l[corev1.LabelTopologyZone], CapacityType: l[apisv1.CapacityTypeLabelKey]}.String()
}

// applyLaunch copies what the provider returned about the instance into claim: its labels and
// annotations (added to the claim's own) and the status fields the contract names.
func applyLaunch(claim, created *apisv1.NodeClaim) {
	if len(created.Labels) > 0 {
		if claim.Labels == nil {
			claim.Labels = map[string]string{}
		}
		maps.Copy(claim.Labels, created.Labels)
	}
	if len(created.Annotations) > 0 {
		if claim.Annotations == nil {
			claim.Annotations = map[string]string{}
		}
		maps.Copy(claim.Annotations, created.Annotations)
	}
	claim.Status.ProviderID = created.Status.ProviderID
	claim.Status.ImageID = created.Status.ImageID
	claim.Status.Capacity = created.Status.Capacity
	claim.Status.Allocatable = created.Status.Allocatable
}

func offeringNoun(n int) string {
	if n == 1 {
		return "1 offering"
	}
	return fmt.Sprintf("%d offerings", n)
}

func truncate(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	return strings.ToValidUTF8(s[:maxMessage], "") + "…"
}

package provisioning

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tenon-sh/tenon/internal/recovery"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/metrics"
	"github.com/tenon-sh/tenon/pkg/snapshot"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// A gang's capacity is worth nothing until minCount of its pods run at once. When a launch of
// it fails, the provisioner plans the gang again (its NodeClaims still in flight hold their
// members, so the failed member is bought in the same domain on the offerings left). When that
// cannot complete it, the capacity already bought would sit idle; after Options.GangDeadline
// from its first NodeClaim, the gang's NodeClaims that hold no other running pod are deleted,
// the offerings they launched as are marked unavailable (so the next plan looks elsewhere or
// waits), and the PodGroup gets a GangReleased event.

const (
	// DefaultGangDeadline is how long a gang's NodeClaims may wait for the gang to run: long
	// enough for a GPU node to boot and its device plugin to publish the devices.
	DefaultGangDeadline = 10 * time.Minute
	// DefaultGangReleaseTTL is how long the offerings of a released gang stay unavailable.
	DefaultGangReleaseTTL = 3 * time.Minute

	// EventGangReleased says an incomplete gang's capacity was released (on the PodGroup and
	// on each released NodeClaim).
	EventGangReleased = "GangReleased"
	// ReasonGangIncomplete is the reason the released offerings are marked unavailable with.
	ReasonGangIncomplete = "GangIncomplete"
)

// gangRelease is what to release of one incomplete gang.
type gangRelease struct {
	gang  solver.Gang
	key   string // namespace/name
	bound int    // its pods bound to a node
	since time.Time
	// claims are the NodeClaims to delete; kept those that hold other running pods too, which
	// are left alone.
	claims []*apisv1.NodeClaim
	kept   []string
}

// incompleteGangs returns the gangs that have had fewer than minCount of their pods bound for
// deadline, counted from their first NodeClaim's creation or from when the check first saw them
// incomplete, whichever is later, with the NodeClaims to release. incomplete holds when each
// gang was first seen incomplete; it is updated (a complete gang is forgotten), so that a gang
// that ran and lost a pod (a worker restarted) gets the whole deadline to bind it again, and a
// controller that restarts waits the whole deadline. podsOn lists the pods bound to a node.
func incompleteGangs(gangs []solver.Gang, pods []*corev1.Pod, claims []*apisv1.NodeClaim, podsOn func(node string) []*corev1.Pod,
	incomplete map[string]time.Time, now time.Time, deadline time.Duration) []gangRelease {
	if len(gangs) == 0 {
		clear(incomplete)
		return nil
	}
	bound := map[string]int{}
	for _, p := range pods {
		if g := solver.GangOf(p); g != "" && p.Spec.NodeName != "" && solver.Reschedulable(p) { // bound, not finished or going
			bound[g]++
		}
	}
	byGang := map[string][]*apisv1.NodeClaim{}
	for _, nc := range claims {
		if nc.DeletionTimestamp != nil {
			continue
		}
		for _, g := range strings.Split(nc.Annotations[snapshot.AnnotationPodGroups], ",") {
			if g != "" {
				byGang[g] = append(byGang[g], nc)
			}
		}
	}
	var out []gangRelease
	seen := map[string]bool{}
	for _, g := range gangs {
		key := g.Namespace + "/" + g.Name
		cs := byGang[key]
		if len(cs) == 0 || bound[key] >= g.MinCount {
			continue
		}
		seen[key] = true
		if _, ok := incomplete[key]; !ok {
			incomplete[key] = now
		}
		r := gangRelease{gang: g, key: key, bound: bound[key], since: cs[0].CreationTimestamp.Time}
		for _, nc := range cs {
			if nc.CreationTimestamp.Time.Before(r.since) {
				r.since = nc.CreationTimestamp.Time
			}
		}
		if t := incomplete[key]; t.After(r.since) {
			r.since = t
		}
		if now.Sub(r.since) < deadline {
			continue
		}
		for _, nc := range cs {
			if node := nc.Status.NodeName; node != "" && slices.ContainsFunc(podsOn(node), solver.Reschedulable) {
				r.kept = append(r.kept, nc.Name)
				continue
			}
			r.claims = append(r.claims, nc)
		}
		if len(r.claims) > 0 {
			out = append(out, r)
		}
	}
	maps.DeleteFunc(incomplete, func(k string, _ time.Time) bool { return !seen[k] })
	return out
}

// releaseGangs checks the gangs every quarter of the deadline (at most every 15 s) until ctx
// ends. A gang is released at most a check's interval late.
func (p *Provisioner) releaseGangs(ctx context.Context) {
	every := min(p.opts.GangDeadline/4, 15*time.Second)
	incomplete := map[string]time.Time{} // this goroutine's alone
	t := p.clock.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			err := recovery.Guard(p.log, ControllerName, func() error {
				gangs := p.cluster.Gangs()
				if len(gangs) == 0 {
					clear(incomplete)
					return nil // no PodGroups: the cluster's pods are not even listed
				}
				for _, r := range incompleteGangs(gangs, p.cluster.Pods(), p.cluster.NodeClaims(), p.cluster.PodsOn, incomplete, p.clock.Now(), p.opts.GangDeadline) {
					p.release(ctx, r)
				}
				return nil
			})
			var perr *recovery.PanicError
			if errors.As(err, &perr) {
				recovery.Record(p.recorder, perr, p.cluster.NodePools()...)
			}
			t.Reset(every)
		}
	}
}

// offeringMarker is the part of the offering filter that records unavailable offerings.
type offeringMarker interface {
	MarkUnavailable(o cloudprovider.Offering, reason string, ttl time.Duration)
}

// release deletes an incomplete gang's NodeClaims, marks their offerings unavailable, and
// records why.
func (p *Provisioner) release(ctx context.Context, r gangRelease) {
	marker, _ := p.source.Filter.(offeringMarker)
	var released, offerings []string
	for _, nc := range r.claims {
		o, launched := cloudprovider.LaunchedOffering(nc)
		names := []string{nc.Name}
		if nc.Status.NodeName != "" {
			names = append(names, nc.Status.NodeName)
		}
		p.cluster.MarkForDeletion(names...)
		if err := p.kube.Delete(ctx, nc); err != nil && !apierrors.IsNotFound(err) {
			p.cluster.UnmarkForDeletion(names...)
			p.log.Error(err, "could not release a NodeClaim of an incomplete gang", "podgroup", r.key, "nodeclaim", nc.Name)
			continue
		}
		released = append(released, nc.Name)
		metrics.Disrupted(nc, metrics.ReasonGangIncomplete, "", 0)
		if marker != nil && launched {
			marker.MarkUnavailable(o, ReasonGangIncomplete, p.opts.GangReleaseTTL)
			if !slices.Contains(offerings, o.String()) {
				offerings = append(offerings, o.String())
			}
		}
	}
	if len(released) == 0 {
		return
	}
	msg := fmt.Sprintf("podgroup %s: %d of its minCount %d pods were bound %s after its first NodeClaim; released NodeClaim(s) %s",
		r.key, r.bound, r.gang.MinCount, p.opts.GangDeadline, strings.Join(released, ", "))
	if len(offerings) > 0 {
		msg += fmt.Sprintf(", and marked their offerings %s unavailable for %s", strings.Join(offerings, ", "), p.opts.GangReleaseTTL)
	}
	if len(r.kept) > 0 {
		msg += fmt.Sprintf("; kept %s, which run other pods", strings.Join(r.kept, ", "))
	}
	p.log.Info("released the capacity of an incomplete gang", "podgroup", r.key, "nodeclaims", released, "offerings", offerings)
	pg := &schedulingv1beta1.PodGroup{}
	if err := p.kube.Get(ctx, types.NamespacedName{Namespace: r.gang.Namespace, Name: r.gang.Name}, pg); err == nil {
		p.recorder.Event(pg, corev1.EventTypeWarning, EventGangReleased, msg)
	}
	for _, nc := range r.claims {
		if slices.Contains(released, nc.Name) {
			p.recorder.Event(nc, corev1.EventTypeWarning, EventGangReleased, msg)
		}
	}
	p.Trigger() // the gang's pods are planned again, elsewhere or later
}

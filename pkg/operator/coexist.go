package operator

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Karpenter's leader-election Lease as its chart installs it: Karpenter names it with
// --leader-election-name (default karpenter-leader-election) and puts it in
// --leader-election-namespace, which defaults to the namespace Karpenter's pod runs in; the
// installation Karpenter documents uses kube-system.
const (
	DefaultKarpenterLeaseName      = "karpenter-leader-election"
	DefaultKarpenterLeaseNamespace = "kube-system"
)

// DefaultLeaderElectionID is the name of tenon's own leader-election Lease. It differs from
// Karpenter's on purpose: the two never share a Lease, and tenon tells a live Karpenter by
// Karpenter's.
const DefaultLeaderElectionID = "tenon-leader"

// Coexistence is what tenon does about a Karpenter running in the same cluster. Karpenter
// and tenon serve the same karpenter.sh API: both acting on the same NodePools would launch
// capacity twice and disrupt each other's nodes.
type Coexistence struct {
	// Takeover starts tenon even while Karpenter's Lease is held, and adopts the NodeClaims
	// Karpenter made (those of a nodeClassRef the provider serves) as tenon's own. Use it
	// once Karpenter is stopped or being stopped (docs/migrate.md).
	Takeover bool
	// KarpenterLease is Karpenter's leader-election Lease (default
	// kube-system/karpenter-leader-election).
	KarpenterLease types.NamespacedName
}

func (c *Coexistence) defaults() {
	if c.KarpenterLease.Name == "" {
		c.KarpenterLease.Name = DefaultKarpenterLeaseName
	}
	if c.KarpenterLease.Namespace == "" {
		c.KarpenterLease.Namespace = DefaultKarpenterLeaseNamespace
	}
}

// KarpenterRunningError is the refusal to start while Karpenter's leader holds its Lease.
type KarpenterRunningError struct {
	Lease     types.NamespacedName
	Holder    string
	RenewTime time.Time
	// Expires is when the Lease lapses unless renewed again.
	Expires time.Time
}

func (e *KarpenterRunningError) Error() string {
	return fmt.Sprintf("Karpenter is running: its leader-election Lease %s is held by %q (renewed %s, valid until %s); "+
		"tenon must not act on the same NodePools as a live Karpenter. Stop Karpenter (scale its Deployment to 0) and start tenon "+
		"once the Lease has lapsed, or start tenon with --takeover to adopt Karpenter's NodeClaims (docs/migrate.md)",
		e.Lease, e.Holder, e.RenewTime.UTC().Format(time.RFC3339), e.Expires.UTC().Format(time.RFC3339))
}

// HeldLease reports whether l is held at now: it names a holder and its last renewal (or,
// without one, its acquisition) plus its duration is later than now. A leader that gave the
// Lease up on exit clears the holder, so its Lease is not held.
func HeldLease(l *coordinationv1.Lease, now time.Time) (held bool, renewed, expires time.Time) {
	if l == nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" || l.Spec.LeaseDurationSeconds == nil {
		return false, time.Time{}, time.Time{}
	}
	switch {
	case l.Spec.RenewTime != nil:
		renewed = l.Spec.RenewTime.Time
	case l.Spec.AcquireTime != nil:
		renewed = l.Spec.AcquireTime.Time
	default:
		return false, time.Time{}, time.Time{}
	}
	expires = renewed.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second)
	return expires.After(now), renewed, expires
}

// checkKarpenter reads Karpenter's Lease and refuses (a *KarpenterRunningError) while it is
// held, unless c.Takeover. A Lease that cannot be read is an error too, without --takeover:
// tenon cannot tell whether Karpenter runs.
func checkKarpenter(ctx context.Context, r client.Reader, c Coexistence, now time.Time, log logr.Logger) error {
	lease := &coordinationv1.Lease{}
	err := r.Get(ctx, c.KarpenterLease, lease)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil && c.Takeover:
		log.Info("could not read Karpenter's leader-election Lease; starting anyway (--takeover)", "lease", c.KarpenterLease.String(), "error", err.Error())
		return nil
	case err != nil:
		return fmt.Errorf("reading Karpenter's leader-election Lease %s, to make sure Karpenter is not running: %w "+
			"(tenon needs get on it: the chart's Role grants it; set --karpenter-leader-election-namespace/-name if Karpenter's Lease is elsewhere)",
			c.KarpenterLease, err)
	}
	held, renewed, expires := HeldLease(lease, now)
	if !held {
		return nil
	}
	running := &KarpenterRunningError{Lease: c.KarpenterLease, Holder: *lease.Spec.HolderIdentity, RenewTime: renewed, Expires: expires}
	if !c.Takeover {
		return running
	}
	log.Info("Karpenter's leader-election Lease is held; taking over its NodeClaims (--takeover)",
		"lease", c.KarpenterLease.String(), "holder", running.Holder, "renewTime", renewed.UTC().Format(time.RFC3339))
	return nil
}

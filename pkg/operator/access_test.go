package operator

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
)

// The guard waits out its grace for a refused informer, reports it on /readyz meanwhile, and
// then stops the controller once, naming the resource; other errors, and a refusal after a
// long quiet, start nothing.
func TestAccessGuardGrace(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	g := newAccessGuard(10*time.Second, logr.Discard())
	g.now = func() time.Time { return now }
	r := toolscache.NewReflector(&toolscache.ListWatch{}, nil, toolscache.NewStore(toolscache.MetaNamespaceKeyFunc), 0)
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "karpenter.sh", Resource: "nodepools"}, "", errors.New(`User "sa" cannot list resource "nodepools"`))
	ctx := context.Background()
	fatal := func() error {
		select {
		case err := <-g.fatal:
			return err
		default:
			return nil
		}
	}

	g.handle(ctx, r, errors.New("connection refused"))
	if g.ready() != nil || fatal() != nil {
		t.Fatal("an error that is no refusal made the guard act")
	}
	g.handle(ctx, r, forbidden)
	if err := g.ready(); err == nil || !strings.Contains(err.Error(), "nodepools") {
		t.Errorf("/readyz during the grace: %v, want the refusal", err)
	}
	now = now.Add(9 * time.Second)
	g.handle(ctx, r, forbidden)
	if err := fatal(); err != nil {
		t.Fatalf("stopped within the grace: %v", err)
	}
	now = now.Add(2 * time.Minute) // a long quiet: a new episode
	g.handle(ctx, r, forbidden)
	if err := fatal(); err != nil {
		t.Fatalf("a refusal after a quiet of 2m stopped the controller at once: %v", err)
	}
	now = now.Add(10 * time.Second)
	g.handle(ctx, r, forbidden)
	err := fatal()
	if err == nil || !strings.Contains(err.Error(), "nodepools") || !strings.Contains(err.Error(), "list") {
		t.Fatalf("after the grace: %v, want an error naming nodepools and list", err)
	}
	now = now.Add(time.Second)
	g.handle(ctx, r, forbidden)
	if err := fatal(); err != nil {
		t.Errorf("stopped twice: %v", err)
	}
}

func TestLeaderTimings(t *testing.T) {
	for _, c := range []struct {
		lease, renew, retry time.Duration
		want                string
	}{
		{want: ""},
		{lease: 4 * time.Second, renew: 3 * time.Second, retry: 500 * time.Millisecond},
		{lease: 3 * time.Second, renew: 3 * time.Second, want: "--leader-elect-lease-duration (3s) must be longer than --leader-elect-renew-deadline (3s)"},
		{lease: 4 * time.Second, renew: 3 * time.Second, retry: 2500 * time.Millisecond, want: "--leader-elect-renew-deadline (3s) must be longer than 1.2 times --leader-elect-retry-period (2.5s)"},
		{lease: -time.Second, want: "must be positive"},
	} {
		_, _, _, err := leaderTimings(Options{LeaseDuration: c.lease, RenewDeadline: c.renew, RetryPeriod: c.retry})
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%v/%v/%v: %v, want %q", c.lease, c.renew, c.retry, err, c.want)
		}
	}
}

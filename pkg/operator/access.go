package operator

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// DefaultAccessDeniedFor is how long an informer may be refused its list or watch before the
// controller gives up (Options.AccessDeniedFor).
const DefaultAccessDeniedFor = 10 * time.Second

// accessForgetAfter is how long after its last refusal an informer's refusals are forgotten: a
// refusal that follows a long quiet is a new episode, which gets its own grace.
const accessForgetAfter = time.Minute

// accessGuard stops the controller when the API server keeps refusing one of its informers
// the list or watch it needs (RBAC without a rule the controller's caches use). Without it,
// client-go retries the refused list for ever, the caches never sync, the controller never
// acts, and nothing but a klog line at a level the controller does not show says why.
//
// It is every informer's watch-error handler: a Forbidden error starts, for that informer's
// type, a grace of AccessDeniedFor (an RBAC binding created with the Deployment can take a
// moment to reach the authorizer); a Forbidden error after the grace stops the manager with an
// error naming the type and quoting the API server's refusal (which names the user, the verb
// and the resource), and /readyz reports it from the first refusal.
type accessGuard struct {
	grace time.Duration
	now   func() time.Time
	log   logr.Logger
	fatal chan error

	mu     sync.Mutex
	denied map[string]refusal // by informer type
	once   sync.Once
}

// refusal is an informer type's current episode of refusals.
type refusal struct {
	first, last time.Time
	err         error
}

var _ manager.LeaderElectionRunnable = (*accessGuard)(nil)

func newAccessGuard(grace time.Duration, log logr.Logger) *accessGuard {
	if grace <= 0 {
		grace = DefaultAccessDeniedFor
	}
	return &accessGuard{grace: grace, now: time.Now, log: log, fatal: make(chan error, 1), denied: map[string]refusal{}}
}

// handle is the informers' WatchErrorHandlerWithContext: client-go's own handling (its log
// line), then the refusal bookkeeping.
func (g *accessGuard) handle(ctx context.Context, r *toolscache.Reflector, err error) {
	toolscache.DefaultWatchErrorHandler(ctx, r, err)
	typ := r.TypeDescription()
	if !apierrors.IsForbidden(err) {
		g.mu.Lock()
		delete(g.denied, typ)
		g.mu.Unlock()
		return
	}
	now := g.now()
	g.mu.Lock()
	rf, ok := g.denied[typ]
	if !ok || now.Sub(rf.last) > accessForgetAfter {
		rf.first = now
	}
	rf.last, rf.err = now, err
	g.denied[typ] = rf
	expired := now.Sub(rf.first) >= g.grace
	g.mu.Unlock()
	if !expired {
		g.log.Info("the API server refuses an informer its list or watch; retrying", "type", typ, "error", err.Error())
		return
	}
	g.once.Do(func() {
		e := fmt.Errorf("the controller may not read %s, which its caches need (refused for %v): %w; grant the controller's identity list and watch on that resource (the chart's ClusterRole has the rules)",
			typ, now.Sub(rf.first).Round(time.Second), err)
		g.log.Error(e, "stopping: a cache can never sync")
		g.fatal <- e
	})
}

// ready is the /readyz verdict: an error naming every informer type being refused, or nil.
func (g *accessGuard) ready() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for typ, rf := range g.denied {
		if g.now().Sub(rf.last) <= accessForgetAfter {
			return fmt.Errorf("the API server refuses the informer of %s: %w", typ, rf.err)
		}
	}
	return nil
}

// Start waits until a refusal outlasts its grace, and returns it (which stops the manager), or
// until ctx ends.
func (g *accessGuard) Start(ctx context.Context) error {
	select {
	case err := <-g.fatal:
		return err
	case <-ctx.Done():
		return nil
	}
}

// NeedLeaderElection is false: a replica waiting for the lease needs its caches too.
func (g *accessGuard) NeedLeaderElection() bool { return false }

package metrics

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/metrics"
	"github.com/tenon-sh/tenon/pkg/state"
)

// ControllerName names the controller in logs and in the controller label of other metrics.
const ControllerName = "metrics"

// Options tune the controller.
type Options struct {
	// Interval is how often the gauges are set again (default 5s, as Karpenter's node metrics).
	Interval time.Duration
}

// Deps are what the controller reads.
type Deps struct {
	Cluster *state.Cluster
	// Informers are the manager's cache: pod events feed the startup durations, and their
	// sync state is karpenter_cluster_state_synced. Start needs them; Publish does not.
	Informers cache.Informers
	// Cloud decides which NodePools are tenon's (only those get nodepool series).
	Cloud cloudprovider.NodeClassServer
}

// Controller publishes the cluster-state metrics; see the package documentation.
type Controller struct {
	deps Deps
	opts Options

	nodes, pods, usage, limit *gaugeSet

	mu      sync.Mutex
	pending map[types.UID]bool // pods seen Pending, not yet ready
}

// New returns the controller; Start runs it (Register adds it to a manager).
func New(deps Deps, opts Options) (*Controller, error) {
	if deps.Cluster == nil || deps.Cloud == nil {
		return nil, errors.New("metrics: Deps.Cluster and Deps.Cloud are required")
	}
	if opts.Interval <= 0 {
		opts.Interval = 5 * time.Second
	}
	return &Controller{
		deps: deps, opts: opts,
		nodes: newGaugeSet(NodesAllocatable), pods: newGaugeSet(PodsState),
		usage: newGaugeSet(NodePoolsUsage), limit: newGaugeSet(NodePoolsLimit),
		pending: map[types.UID]bool{},
	}, nil
}

// Register adds the controller to mgr.
func Register(mgr manager.Manager, deps Deps, opts Options) (*Controller, error) {
	c, err := New(deps, opts)
	if err != nil {
		return nil, err
	}
	return c, mgr.Add(c)
}

// Start watches pods for their startup and sets the gauges every Interval until ctx ends. It
// runs on the leader only (a manager.Runnable needs leader election unless it says otherwise).
func (c *Controller) Start(ctx context.Context) error {
	if c.deps.Informers == nil {
		return errors.New("metrics: Deps.Informers is required to start")
	}
	var synced []toolscache.InformerSynced
	for _, obj := range []client.Object{&corev1.Node{}, &apisv1.NodeClaim{}, &corev1.Pod{}, &apisv1.NodePool{}} {
		inf, err := c.deps.Informers.GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("metrics: informer for %T: %w", obj, err)
		}
		synced = append(synced, inf.HasSynced)
		if _, ok := obj.(*corev1.Pod); ok {
			if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
				AddFunc:    func(o any) { c.PodChanged(o) },
				UpdateFunc: func(_, o any) { c.PodChanged(o) },
				DeleteFunc: func(o any) { c.PodDeleted(o) },
			}); err != nil {
				return fmt.Errorf("metrics: pod handler: %w", err)
			}
		}
	}
	tick := time.NewTicker(c.opts.Interval)
	defer tick.Stop()
	for {
		c.Publish(allSynced(synced))
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

func allSynced(fs []toolscache.InformerSynced) bool {
	for _, f := range fs {
		if !f() {
			return false
		}
	}
	return true
}

// Publish sets every gauge from the mirror as it is now.
func (c *Controller) Publish(synced bool) {
	ClusterStateSynced.Set(0)
	if synced {
		ClusterStateSynced.Set(1)
	}
	nodes := c.deps.Cluster.Nodes()
	ClusterStateNodeCount.Set(float64(len(nodes)))
	byName := make(map[string]*corev1.Node, len(nodes))
	for _, n := range nodes {
		byName[n.Name] = n
		base := nodeLabels(n)
		for name, q := range n.Status.Allocatable {
			l := prometheus.Labels{metrics.ResourceTypeLabel: metrics.ResourceType(string(name))}
			for k, v := range base {
				l[k] = v
			}
			c.nodes.set(l, quantity(name, q))
		}
	}
	c.nodes.flush()
	for _, p := range c.deps.Cluster.Pods() {
		c.pods.set(podLabels(p, byName[p.Spec.NodeName]), 1)
	}
	c.pods.flush()
	for _, np := range c.deps.Cluster.NodePools() {
		if !cloudprovider.IsManagedNodePool(c.deps.Cloud, np) {
			continue
		}
		for name, q := range np.Status.Resources {
			c.usage.set(prometheus.Labels{metrics.ResourceTypeLabel: metrics.ResourceType(string(name)), metrics.NodePoolLabel: np.Name}, quantity(name, q))
		}
		for name, q := range np.Spec.Limits {
			c.limit.set(prometheus.Labels{metrics.ResourceTypeLabel: metrics.ResourceType(string(name)), metrics.NodePoolLabel: np.Name}, quantity(name, q))
		}
	}
	c.usage.flush()
	c.limit.flush()
}

// PodChanged follows a pod towards readiness: a pod seen Pending is remembered, and observed in
// karpenter_pods_startup_duration_seconds (creation to its Ready transition) once it is ready.
// A pod that ends without becoming ready is forgotten.
func (c *Controller) PodChanged(o any) {
	p, ok := o.(*corev1.Pod)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.Status.Phase == corev1.PodPending {
		c.pending[p.UID] = true
		return
	}
	if !c.pending[p.UID] {
		return
	}
	if cond := ready(p); cond != nil {
		PodsStartupDuration.Observe(cond.LastTransitionTime.Sub(p.CreationTimestamp.Time).Seconds())
		delete(c.pending, p.UID)
	} else if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		delete(c.pending, p.UID)
	}
}

// PodDeleted forgets a deleted pod.
func (c *Controller) PodDeleted(o any) {
	if t, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	if p, ok := o.(*corev1.Pod); ok {
		c.mu.Lock()
		delete(c.pending, p.UID)
		c.mu.Unlock()
	}
}

package disruption

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/solverinput"
	"github.com/tenon-sh/tenon/pkg/disruption"
	"github.com/tenon-sh/tenon/pkg/state"
)

// Explanation is what a disruption pass would do with one node now, and why.
type Explanation struct {
	Node      string
	NodeClaim string
	NodePool  string
	// Entry is the node as disruption sees it (its price, age, state, drift, expiry); nil when
	// the node is not a candidate at all (Excluded says why).
	Entry *disruption.Node
	// PriceUnknown is set when the node's offering is not among its nodepool's instance types.
	PriceUnknown bool
	Excluded     string
	// Tainted is set when the node carries karpenter.sh/disrupted: a command is running on it,
	// or the termination controller is draining it.
	Tainted bool
	// Pods are the pods bound to the node, by namespace/name.
	Pods []*corev1.Pod
	// Command is the command the node would be in; Skip why it would be left alone. Both are
	// nil when the pass ended before it reached the node (Decision says how it ended).
	Command  *disruption.Command
	Skip     *disruption.Skip
	Decision *disruption.Decision
	// Warnings are what could not be read (the decision was made with the rest).
	Warnings []string
}

// ExplainDeps are what Explain reads the cluster with.
type ExplainDeps struct {
	// Reader lists every kind the mirror holds, and reads the volumes of pending pods.
	Reader client.Reader
	// Cloud serves instance types and drift.
	Cloud cloudprovider.CloudProvider
	// Schedulers are the scheduler names whose pending pods the provisioner plans for (default
	// default-scheduler).
	Schedulers []string
	Clock      clock.PassiveClock
	// StaticCapacity is the StaticCapacity feature gate, as the controller runs with it.
	StaticCapacity bool
}

// ErrNodeNotFound is returned by Explain for a node the cluster does not have.
var ErrNodeNotFound = errors.New("node not found")

// Explain reads the cluster once, builds the snapshot the controller would build (with no
// command running), runs one pass, and says what it would do with the node called name.
func Explain(ctx context.Context, deps ExplainDeps, name string, opts disruption.Options) (*Explanation, error) {
	if deps.Clock == nil {
		deps.Clock = clock.RealClock{}
	}
	if len(deps.Schedulers) == 0 {
		deps.Schedulers = []string{corev1.DefaultSchedulerName}
	}
	cluster := state.NewCluster(deps.Clock)
	if err := cluster.Load(ctx, deps.Reader); err != nil {
		return nil, err
	}
	var node *corev1.Node
	for _, n := range cluster.Nodes() {
		if n.Name == name {
			node = n
		}
	}
	if node == nil {
		return nil, fmt.Errorf("node %s: %w", name, ErrNodeNotFound)
	}
	src := &solverinput.Source{Cluster: cluster, Cloud: deps.Cloud, Reader: deps.Reader, Schedulers: deps.Schedulers,
		ExpendablePriorityCutoff: opts.ExpendablePriorityCutoff}
	view, err := newBuilder(src, deps.Clock, 0, deps.StaticCapacity).Build(ctx, BuildOptions{})
	ex := &Explanation{Node: name, Pods: cluster.PodsOn(name), Tainted: HasDisruptedTaint(node), Excluded: view.Excluded[name]}
	if err != nil {
		ex.Warnings = append(ex.Warnings, err.Error())
	}
	if nc := view.Claims[name]; nc != nil {
		ex.NodeClaim = nc.Name
	}
	if e, ok := view.Node(name); ok {
		entry := *e
		ex.Entry, ex.NodePool, ex.PriceUnknown = &entry, e.NodePool, view.PriceUnknown[name]
	}
	dec, err := disruption.Decide(view.Snapshot, opts)
	if err != nil {
		return nil, fmt.Errorf("deciding: %w", err)
	}
	ex.Decision = dec
	for i := range dec.Commands {
		for _, c := range dec.Commands[i].Candidates {
			if c == name {
				ex.Command = &dec.Commands[i]
			}
		}
	}
	for i := range dec.Skips {
		if dec.Skips[i].Node == name {
			ex.Skip = &dec.Skips[i]
		}
	}
	return ex, nil
}

package sim

import (
	"fmt"
	"time"

	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// Policy is an autoscaling behaviour the simulation replays: how pending pods get capacity
// (Provisioner), how capacity is taken away (Disrupter), and how it reacts to the cloud.
// A Policy holds the state of one run; NewPolicy makes a fresh one per run.
type Policy struct {
	Name        string
	Provisioner Provisioner
	Disrupter   Disrupter
	// ScanInterval, when positive, runs the provisioner on a fixed period over the pods then
	// pending (Cluster Autoscaler's scan loop); otherwise pending pods go through the batcher
	// (Options.BatchIdle, BatchMax).
	ScanInterval time.Duration
	// HandleNotices drains a node as soon as its spot interruption notice comes, so that its
	// pods are provisioned again at once (Karpenter's interruption controller); otherwise its
	// pods run until the instance is reclaimed.
	HandleNotices bool
	// Assumptions describe the policy's simplifications, for the report.
	Assumptions []string
	// Commitments: the policy decides with Options.Commitments (what an instance adds to the
	// bill), as tenon does; otherwise at list prices. Every policy is billed with them.
	Commitments bool
}

// Provisioner places pending pods: on nodes that exist or are launching, or on new nodes.
type Provisioner interface {
	// Provision returns where the pending pods go. Pods it leaves out stay pending; the next
	// batch gives them to it again.
	Provision(now time.Time, v *View, pending []PodID) Decision
}

// Disrupter decides, at a disruption pass, which nodes to take away. It must respect the
// budgets itself (View.Allowed).
type Disrupter interface {
	// Pass returns the commands to carry out now, and when it next needs a pass if nothing in
	// the cluster changes before (zero: only after a change).
	Pass(now time.Time, v *View) ([]Command, time.Time)
}

// Decision is what a provisioner decided for a batch.
type Decision struct {
	// Place puts pods on nodes that exist (bound at once when the node is ready, else
	// nominated to it).
	Place []Placement
	// Launch buys nodes, with the pods they are for nominated to them.
	Launch []Launch
}

// Placement puts a pod on a node.
type Placement struct {
	Pod  PodID
	Node NodeID
}

// Launch is a node to buy: an instance type through one offering, with the pods it is for.
type Launch struct {
	Pool     int
	Type     *catalog.InstanceType
	Offering catalog.Offering
	// Options, when set, are the requirements the cloud may fall back on when the offering has
	// no room (a NodeClaim's requirements with its instance-type options); otherwise a launch
	// into a full offering fails and its pods go back to pending.
	Options scheduling.Requirements
	Pods    []PodID
}

// Command takes nodes away: it launches the replacements first and removes the nodes once the
// replacements are ready (at once when there are none); the nodes' pods are evicted then.
type Command struct {
	Reason       Reason
	Nodes        []NodeID
	Replacements []Launch
	// Savings is what the command saves, in $/h (the nodes' prices less the replacements').
	Savings float64
}

// Reason says why nodes are taken away.
type Reason string

// Disruption reasons.
const (
	ReasonEmpty         Reason = "Empty"
	ReasonUnderutilized Reason = "Underutilized"
	ReasonSpotToSpot    Reason = "SpotToSpot"
	ReasonExpired       Reason = "Expired"
	ReasonScaleDown     Reason = "ScaleDown"
	ReasonInterrupted   Reason = "Interrupted"
)

// Policy names.
const (
	PolicyTenon     = "tenon"
	PolicyKarpenter = "karpenter-like"
	PolicyNodeGroup = "node-groups"
	// PolicyTenonListPrices is tenon deciding at list prices, as if it knew no Commitments
	// (billed with them): what commitment awareness is worth.
	PolicyTenonListPrices = "tenon-list-prices"
)

// PolicyNames lists the policies NewPolicy knows, in report order.
var PolicyNames = []string{PolicyTenon, PolicyKarpenter, PolicyNodeGroup}

// NewPolicy returns a fresh policy by name.
func NewPolicy(name string, env *Env, opts Options) (Policy, error) {
	switch name {
	case PolicyTenon:
		switch opts.TenonDisruption {
		case "", DisruptionInterim:
			p := TenonPolicy(env)
			p.Provisioner.(*tenon).spotToSpot = opts.SpotToSpotConsolidation
			return p, nil
		case DisruptionPackage:
			p := TenonPackagePolicy(env)
			p.Provisioner.(*tenon).spotToSpot = opts.SpotToSpotConsolidation
			return p, nil
		}
		return Policy{}, fmt.Errorf("unknown tenon disruption %q (%s or %s)", opts.TenonDisruption, DisruptionInterim, DisruptionPackage)
	case PolicyTenonListPrices:
		p, err := NewPolicy(PolicyTenon, env, opts)
		p.Name, p.Commitments = PolicyTenonListPrices, false
		p.Assumptions = append(p.Assumptions, "tenon-list-prices: tenon deciding at list prices, ignoring the commitments it is billed with")
		return p, err
	case PolicyKarpenter:
		p := KarpenterPolicy(env)
		p.Provisioner.(*karpenterProvisioner).k.spotToSpot = opts.SpotToSpotConsolidation
		return p, nil
	case PolicyNodeGroup:
		return NodeGroupsPolicy(env, opts.NodeGroups)
	}
	return Policy{}, fmt.Errorf("unknown policy %q (have %v)", name, PolicyNames)
}

package disruption

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// Snapshot is what one pass looks at.
type Snapshot struct {
	// Solver holds the NodePools with their instance types, every node (and claim in flight)
	// with its pods, the DaemonSets and namespace labels; its Pods are the pending backlog, which
	// disruption must not take room from.
	Solver *solver.Snapshot
	// NodePools are the API objects (policy, budgets), by name.
	NodePools map[string]*apisv1.NodePool
	// Nodes describe the machines tenon manages; nodes not listed are never disrupted.
	Nodes []Node
	// PDBs limit evictions.
	PDBs []*policyv1.PodDisruptionBudget
	Now  time.Time
	// Static holds, for each static NodePool (spec.replicas) in NodePools, the empty claim it
	// launches: its template's requirements and its instance types with an available offering,
	// cheapest first. A static pool's nodes are disrupted only by drift and expiration, each
	// replaced by one such claim; a static pool missing here has nothing to launch, and its
	// nodes are left alone.
	Static map[string]*solver.Claim
	// Prepared, when set, is an earlier pass's prepared snapshot with the same NodePools (their
	// usage against limits included), instance types, DaemonSets and namespaces as Solver (only
	// nodes and pods differ): the pass
	// then compiles only the nodes, and those unchanged since come from its cache. Decision.
	// Prepared is what to pass next time.
	Prepared *solver.Prepared
	// WholeGroups are the PodGroups (namespace/name) whose disruption mode is All: the nodes
	// running their pods are disrupted in one command or not at all (wholegroups.go).
	WholeGroups []string
}

// Node is a machine tenon manages, as disruption sees it. Its pods, labels and allocatable are
// those of the solver node with the same name.
type Node struct {
	Name      string
	NodeClaim string
	NodePool  string
	// InstanceType, Zone, CapacityType and Price describe what it runs as; ReservationID is set
	// on reserved capacity.
	InstanceType  string
	Zone          string
	CapacityType  string
	ReservationID string
	Price         float64
	CreatedAt     time.Time
	Initialized   bool
	// Deleting is set once its deletion began; NotReady when it is not Ready.
	Deleting bool
	NotReady bool
	// Nominated nodes won pending pods recently and are left alone.
	Nominated bool
	// DoNotDisrupt is the node's karpenter.sh/do-not-disrupt annotation.
	DoNotDisrupt bool
	// Drifted says why the node no longer matches its NodePool or NodeClass ("" when it does).
	Drifted string
	// ExpireAt is when expireAfter runs out (zero: never).
	ExpireAt time.Time
	// LastPodEvent is when a pod last arrived on or left the node (consolidateAfter counts from
	// it; zero: the node's creation).
	LastPodEvent time.Time
	// Generation, when not 0, is a value the driver changes whenever the snapshot's solver node
	// of this name changes (its labels, taints, allocatable, price, flags, or any of its pods):
	// a pass given the Memory of a pass that saw the same generation takes the node's
	// fingerprint from it instead of reading every pod again. 0: the pass fingerprints it.
	Generation uint64
}

// Method is the disruption method that found a command.
type Method string

const (
	MethodEmptiness     Method = "Emptiness"
	MethodDrift         Method = "Drift"
	MethodExpiration    Method = "Expiration"
	MethodConsolidation Method = "Consolidation"
)

// Action is what a command does to its candidates.
type Action string

const (
	ActionDelete  Action = "Delete"
	ActionReplace Action = "Replace"
)

// Command is one decision: remove Candidates, after launching Replacements.
type Command struct {
	Method     Method
	Action     Action
	Reason     apisv1.DisruptionReason // the budget reason (Empty, Drifted, Underutilized); "" for expiration
	Candidates []string                // node names
	// Replacements are the new claims the candidates' pods need, cheapest options first.
	Replacements []*solver.Claim
	// Price is what the candidates cost per hour, ReplacementPrice what the replacements will
	// cost at the offerings they launch at, Savings the difference.
	Price, ReplacementPrice, Savings float64
	// Pods are the candidates' pods that will be evicted.
	Pods []*corev1.Pod
	// Moves are where the simulation put those pods that land on nodes already there or in
	// flight (the rest are on the replacements).
	Moves   []solver.Placement
	Message string
	// Why is the reason the message gives ("drifted: …", "underutilized").
	Why string
}

// SkipReason says why a node was left alone in a pass.
type SkipReason string

const (
	SkipNotInitialized    SkipReason = "NotInitialized"
	SkipDeleting          SkipReason = "Deleting"
	SkipNominated         SkipReason = "Nominated"
	SkipDoNotDisruptNode  SkipReason = "DoNotDisruptNode"
	SkipDoNotDisruptPod   SkipReason = "DoNotDisruptPod"
	SkipPDB               SkipReason = "PodDisruptionBudget"
	SkipNoNodePool        SkipReason = "NoNodePool"
	SkipBudget            SkipReason = "Budget"
	SkipConsolidateAfter  SkipReason = "ConsolidateAfter"
	SkipPolicy            SkipReason = "ConsolidationPolicy"
	SkipNotCheaper        SkipReason = "NotCheaper"
	SkipSavingsFloor      SkipReason = "BelowSavingsFloor"
	SkipSpotToSpot        SkipReason = "SpotToSpot"
	SkipSpotToSpotTooNew  SkipReason = "SpotToSpotMinAge"
	SkipReserved          SkipReason = "Reserved"
	SkipUnschedulable     SkipReason = "PodsWouldNotSchedule"
	SkipBalanced          SkipReason = "BalancedScore"
	SkipNotReached        SkipReason = "NotReachedThisPass"
	SkipPendingPodsNeedIt SkipReason = "PendingPodsNeedIt"
	SkipInCommand         SkipReason = "InAnotherCommand"
	SkipReceiving         SkipReason = "ReceivesPods"
	SkipStatic            SkipReason = "StaticNodePool"
	// SkipPodGroup: the node runs pods of a PodGroup disrupted only whole, and another of its
	// nodes cannot go now.
	SkipPodGroup SkipReason = "PodGroup"
	// The reasons a command can stop holding between its decision and its execution.
	SkipNodeGone   SkipReason = "NodeGone"
	SkipNotEmpty   SkipReason = "NotEmpty"
	SkipNotDrifted SkipReason = "NotDrifted"
	SkipNotExpired SkipReason = "NotExpired"
)

// Skip records why one node was not disrupted in a pass.
type Skip struct {
	Node    string
	Reason  SkipReason
	Message string
}

// Outcome says how a pass ended.
type Outcome string

const (
	OutcomeActed     Outcome = "Acted"
	OutcomeNoOp      Outcome = "NoOp"
	OutcomeTruncated Outcome = "Truncated" // the simulation budget ran out before every node was looked at
)

// Decision is the result of one pass.
type Decision struct {
	Commands []Command
	Skips    []Skip
	Outcome  Outcome
	// Cursor is the node the next pass's single-node consolidation starts from.
	Cursor string
	// Simulations counts the solver runs of the pass.
	Simulations int
	// Prepared is the pass's prepared snapshot, for the next pass's Snapshot.Prepared when its
	// NodePools, instance types, DaemonSets and namespaces are the same.
	Prepared *solver.Prepared
	// Memory is what the next pass takes as Options.Memory (nil when Options.RejectionTTL is
	// negative).
	Memory *Memory
}

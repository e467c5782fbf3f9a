package sim

import (
	"time"

	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// PodID and NodeID number the pods and nodes of a run, in order of creation; they are never
// reused.
type (
	PodID  int32
	NodeID int32
)

// NoNode is the Node of a pod that is on none.
const NoNode NodeID = -1

// PodState is where a pod is in its life.
type PodState uint8

const (
	// PodWaiting: its job has not been submitted yet.
	PodWaiting PodState = iota
	// PodPending: submitted, on no node.
	PodPending
	// PodNominated: promised to a node that is not ready yet.
	PodNominated
	// PodRunning: bound to a ready node.
	PodRunning
	// PodDone: finished.
	PodDone
)

// Pod is one pod of a job. Policies read it; the engine changes it.
type Pod struct {
	ID    PodID
	Job   int32
	Shape int32
	State PodState
	Node  NodeID
	// Submitted is when the pod's job arrived; PendingSince when it last became pending.
	Submitted    time.Duration
	PendingSince time.Duration
	// Work is how long it still has to run (negative: until the end).
	Work time.Duration
	// Started is when it last started running; Evictions how often it was evicted.
	Started   time.Duration
	Evictions int32

	everRan bool
	queued  bool   // in the pending queue
	stuck   uint64 // capEpoch+1 when the provisioner last left it pending (0: not since)
	pendSeq uint32 // numbers its stays in the pending queue
	gen     uint32 // bumps on every bind, invalidating the finish event of an earlier run
}

// NodeState is where a node is in its life.
type NodeState uint8

const (
	// NodeLaunching: the instance is booting; pods may be nominated to it.
	NodeLaunching NodeState = iota
	// NodeReady: registered with its devices; pods run on it.
	NodeReady
	// NodeGone: terminated (the instance may still be shutting down; it is billed until
	// Terminated).
	NodeGone
)

// Node is a node a policy bought. Policies read it; the engine changes it.
type Node struct {
	ID       NodeID
	Name     string
	Pool     int
	Type     *catalog.InstanceType
	Offering catalog.Offering
	Price    float64
	State    NodeState
	Launched time.Duration
	ReadyAt  time.Duration // when it is (or will be) ready
	// Alloc is the room for pods: the type's allocatable less the DaemonSets' requests.
	Alloc scheduling.Resources
	// Used is what its bound and nominated pods request.
	Used scheduling.Resources
	// Pods are its bound and nominated pods.
	Pods []PodID
	// LastChange is when a pod last was bound to, or left, the node (or its launch).
	LastChange time.Duration
	// Disrupting nodes are being taken away (a command, an interruption): they take no pods.
	Disrupting bool
	// Notice is when its spot interruption notice came (zero: none).
	Notice time.Duration

	instance string
	shutDown bool                 // the instance has terminated: billing stopped
	daemons  scheduling.Resources // DaemonSet requests on it
	labels   map[string]string    // full labels (type, offering, pool, nodepool, hostname)
	snapLbls map[string]string    // the labels requirements read, for solver snapshots
	sig      int32                // nodes with equal sig carry equal labels but the hostname, and taints
	running  int32                // pods bound (not nominated)
	command  int32                // index of the command waiting on this node as a replacement, or -1
}

// Free returns the node's room left for pods.
func (n *Node) Free() scheduling.Resources { return n.Alloc.Sub(n.Used) }

func (n *Node) billed() bool { return !n.shutDown }

// Labels returns the node's labels (read-only).
func (n *Node) Labels() map[string]string { return n.labels }

// Empty reports whether no pod is bound or nominated to the node.
func (n *Node) Empty() bool { return len(n.Pods) == 0 }

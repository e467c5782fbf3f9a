package cloud

import (
	"fmt"
	"strings"
	"time"

	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// State is where an instance is in its life.
type State int

const (
	// Pending: launched, booting.
	Pending State = iota
	// Running: booted.
	Running
	// Terminating: shutting down; it still holds its capacity.
	Terminating
	// Terminated: gone; its capacity is free.
	Terminated
)

var stateNames = [...]string{"Pending", "Running", "Terminating", "Terminated"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// ParseState parses a State's name.
func ParseState(s string) (State, error) {
	for i, n := range stateNames {
		if n == s {
			return State(i), nil
		}
	}
	return 0, fmt.Errorf("unknown instance state %q", s)
}

// Reason says why an instance terminated.
type Reason string

// Termination reasons.
const (
	ReasonDeleted              Reason = "Deleted"
	ReasonSpotInterruption     Reason = "SpotInterruption"
	ReasonScheduledMaintenance Reason = "ScheduledMaintenance"
	ReasonCapacityBlockExpired Reason = "CapacityBlockExpired"
	ReasonStopped              Reason = "Stopped"
)

// Interruption is the event planned to take an instance away: a notice of Kind at Notice,
// reclamation at Deadline. The zero value means none.
type Interruption struct {
	Kind     cloudprovider.InterruptionKind
	Reason   Reason
	Notice   time.Time
	Deadline time.Time
	// Injected is true for interruptions injected by hand rather than drawn.
	Injected bool
}

// IsZero reports whether no interruption is planned.
func (i Interruption) IsZero() bool { return i.Kind == "" }

// Instance is a snapshot of one instance. The Type is shared and read-only.
type Instance struct {
	ID        string
	Class     string
	NodeClaim string
	Region    string
	Type      *catalog.InstanceType
	Offering  catalog.Offering
	State     State
	Launched  time.Time
	// RunningAt, RegisteredAt and DevicesAt are when the instance boots, its Node registers
	// and its device resources appear (zero when the type has none).
	RunningAt    time.Time
	RegisteredAt time.Time
	DevicesAt    time.Time
	// TerminatingAt and TerminatedAt are set once termination begins.
	TerminatingAt time.Time
	TerminatedAt  time.Time
	Reason        Reason
	Interruption  Interruption
	// RebalanceAt is when a rebalance recommendation is due (zero: none).
	RebalanceAt time.Time
}

// ProviderID returns sim://<region>/<zone>/<id>.
func (i *Instance) ProviderID() string { return ProviderID(i.Region, i.Offering.Zone, i.ID) }

// ProviderID formats the provider ID of an instance.
func ProviderID(region, zone, id string) string { return "sim://" + region + "/" + zone + "/" + id }

// ParseProviderID splits a provider ID made by ProviderID.
func ParseProviderID(providerID string) (region, zone, id string, err error) {
	rest, ok := strings.CutPrefix(providerID, "sim://")
	parts := strings.Split(rest, "/")
	if !ok || len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", "", fmt.Errorf("provider ID %q is not of the form sim://<region>/<zone>/<instance-id>", providerID)
	}
	return parts[0], parts[1], parts[2], nil
}

// Alive reports whether the instance holds capacity (it is not yet Terminated).
func (i *Instance) Alive() bool { return i.State < Terminated }

// Labels returns the labels of a node of this instance: the type's and the offering's.
func (i *Instance) Labels() map[string]string { return i.Type.NodeLabels(&i.Offering) }

// BaseResources are the resources a node reports from registration on: CPU, memory, pods and
// ephemeral storage. Everything else in an instance type's capacity (GPUs, Neuron devices,
// EFA) is a device resource, which appears only once the device plugin has run.
var BaseResources = []int{scheduling.CPU, scheduling.Memory, scheduling.Pods, scheduling.EphemeralStorage}

// WithoutDevices returns r with only the BaseResources kept.
func WithoutDevices(r scheduling.Resources) scheduling.Resources {
	var out scheduling.Resources
	for _, i := range BaseResources {
		out[i] = r[i]
	}
	return out
}

// HasDevices reports whether the type has device resources.
func HasDevices(it *catalog.InstanceType) bool {
	return WithoutDevices(it.Capacity) != it.Capacity
}

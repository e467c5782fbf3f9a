package cloudprovider

import (
	"context"
	"time"
)

// InterruptionKind says what is about to happen to an instance.
type InterruptionKind string

const (
	// SpotInterruption: the instance will be reclaimed at the message's deadline (two minutes).
	SpotInterruption InterruptionKind = "SpotInterruption"
	// RebalanceRecommendation: the instance is at raised risk of interruption; replace it early.
	RebalanceRecommendation InterruptionKind = "RebalanceRecommendation"
	// ScheduledMaintenance: the instance will be retired or rebooted at the deadline.
	ScheduledMaintenance InterruptionKind = "ScheduledMaintenance"
	// InstanceStopped: the instance is already stopping or terminated.
	InstanceStopped InterruptionKind = "InstanceStopped"
)

// InterruptionMessage is one notice about one instance.
type InterruptionMessage struct {
	ID         string
	Kind       InterruptionKind
	ProviderID string
	// Deadline is when the instance goes away (zero when unknown or already gone).
	Deadline time.Time
	// Received is when the provider emitted the notice.
	Received time.Time
}

// InterruptionQueue delivers interruption notices. It is modelled on a message queue (for AWS,
// an SQS queue fed by EventBridge): Receive returns the messages available now, at least once
// each, and Done removes one so it is not delivered again. Messages not marked done are
// delivered again by a later Receive.
//
// A queue may carry notices about instances another autoscaler launched (an account's EventBridge
// rules see every instance): it names the NodeClass kinds of its provider, and the interruption
// controller acts only on the NodeClaims of those kinds (IsManaged).
type InterruptionQueue interface {
	Receive(ctx context.Context) ([]InterruptionMessage, error)
	Done(ctx context.Context, id string) error
	NodeClassServer
}

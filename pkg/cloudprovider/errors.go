package cloudprovider

import (
	"errors"
	"fmt"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"strings"
)

// NodeClaimNotFoundError says the instance behind a claim does not exist (any more).
type NodeClaimNotFoundError struct {
	ProviderID string
	Err        error
}

func (e *NodeClaimNotFoundError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("instance %q not found: %v", e.ProviderID, e.Err)
	}
	return fmt.Sprintf("instance %q not found", e.ProviderID)
}

func (e *NodeClaimNotFoundError) Unwrap() error { return e.Err }

// NewNodeClaimNotFoundError returns a NodeClaimNotFoundError.
func NewNodeClaimNotFoundError(providerID string, err error) error {
	return &NodeClaimNotFoundError{ProviderID: providerID, Err: err}
}

// IsNodeClaimNotFound reports whether err (or an error it wraps) is a NodeClaimNotFoundError.
func IsNodeClaimNotFound(err error) bool {
	var e *NodeClaimNotFoundError
	return errors.As(err, &e)
}

// IgnoreNodeClaimNotFound returns nil for a NodeClaimNotFoundError and err otherwise.
func IgnoreNodeClaimNotFound(err error) error {
	if IsNodeClaimNotFound(err) {
		return nil
	}
	return err
}

// Offering names one way to buy an instance type.
type Offering struct {
	InstanceType string
	Zone         string
	CapacityType string
}

func (o Offering) String() string { return o.InstanceType + "/" + o.Zone + "/" + o.CapacityType }

// LaunchedOffering is the offering a NodeClaim launched as, from the labels the launch set on
// it; false until they are all set.
func LaunchedOffering(claim *apisv1.NodeClaim) (Offering, bool) {
	o := Offering{
		InstanceType: claim.Labels[apisv1.LabelInstanceType],
		Zone:         claim.Labels[apisv1.LabelZone],
		CapacityType: claim.Labels[apisv1.CapacityTypeLabelKey],
	}
	return o, o.InstanceType != "" && o.Zone != "" && o.CapacityType != ""
}

// InsufficientCapacityError says every offering tried is out of capacity. Callers mark those
// offerings unavailable for a while and try elsewhere.
type InsufficientCapacityError struct {
	Offerings []Offering
}

func (e *InsufficientCapacityError) Error() string {
	names := make([]string, len(e.Offerings))
	for i, o := range e.Offerings {
		names[i] = o.String()
	}
	return "insufficient capacity for " + strings.Join(names, ", ")
}

// IsInsufficientCapacity reports whether err is an InsufficientCapacityError.
func IsInsufficientCapacity(err error) bool {
	var e *InsufficientCapacityError
	return errors.As(err, &e)
}

// IgnoreInsufficientCapacity returns nil for an InsufficientCapacityError and err otherwise.
func IgnoreInsufficientCapacity(err error) error {
	if IsInsufficientCapacity(err) {
		return nil
	}
	return err
}

// NodeClassNotReadyError says the NodeClass a claim or NodePool refers to is missing or not ready.
type NodeClassNotReadyError struct {
	NodeClass string
	Reason    string
}

func (e *NodeClassNotReadyError) Error() string {
	return fmt.Sprintf("nodeclass %q is not ready: %s", e.NodeClass, e.Reason)
}

// IsNodeClassNotReady reports whether err is a NodeClassNotReadyError.
func IsNodeClassNotReady(err error) bool {
	var e *NodeClassNotReadyError
	return errors.As(err, &e)
}

// IgnoreNodeClassNotReady returns nil for a NodeClassNotReadyError and err otherwise.
func IgnoreNodeClassNotReady(err error) error {
	if IsNodeClassNotReady(err) {
		return nil
	}
	return err
}

var _ error = (*NodeClaimNotFoundError)(nil)

package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types of an EC2NodeClass. Ready is True when every one of ReadyDependents is.
const (
	ConditionTypeReady                     = "Ready"
	ConditionTypeSubnetsReady              = "SubnetsReady"
	ConditionTypeSecurityGroupsReady       = "SecurityGroupsReady"
	ConditionTypeAMIsReady                 = "AMIsReady"
	ConditionTypeInstanceProfileReady      = "InstanceProfileReady"
	ConditionTypeCapacityReservationsReady = "CapacityReservationsReady"
	ConditionTypePlacementGroupReady       = "PlacementGroupReady"
	ConditionTypeValidationSucceeded       = "ValidationSucceeded"
)

// ReadyDependents are the conditions Ready summarises.
var ReadyDependents = []string{
	ConditionTypeAMIsReady, ConditionTypeSubnetsReady, ConditionTypeSecurityGroupsReady,
	ConditionTypeInstanceProfileReady, ConditionTypeCapacityReservationsReady,
	ConditionTypePlacementGroupReady, ConditionTypeValidationSucceeded,
}

// EC2NodeClassStatus is what the provider resolved the spec to.
type EC2NodeClassStatus struct {
	// Subnets are the subnets the subnet selector terms select.
	// +optional
	Subnets []Subnet `json:"subnets,omitempty"`
	// SecurityGroups are the groups the security group selector terms select.
	// +optional
	SecurityGroups []SecurityGroup `json:"securityGroups,omitempty"`
	// CapacityReservations are the usable reservations the capacity reservation selector
	// terms select.
	// +optional
	CapacityReservations []CapacityReservation `json:"capacityReservations,omitempty"`
	// AMIs are the images the AMI selector terms select, each with the requirements an
	// instance type must meet to run it (architecture, GPU or not).
	// +optional
	AMIs []AMI `json:"amis,omitempty"`
	// InstanceProfile is the instance profile nodes launch with: spec.instanceProfile, or the
	// one made for spec.role.
	// +optional
	InstanceProfile string `json:"instanceProfile,omitempty"`
	// Conditions report each part's resolution and Ready over all of them.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Subnet is one resolved subnet.
type Subnet struct {
	// ID is the subnet's ID.
	// +required
	ID string `json:"id"`
	// Zone is the subnet's availability zone (us-east-1a).
	// +required
	Zone string `json:"zone"`
	// ZoneID is the zone's ID (use1-az1), the same in every account.
	// +optional
	ZoneID string `json:"zoneID,omitempty"`
}

// SecurityGroup is one resolved security group.
type SecurityGroup struct {
	// ID is the group's ID.
	// +required
	ID string `json:"id"`
	// Name is the group's name.
	// +optional
	Name string `json:"name,omitempty"`
}

// AMI is one resolved image.
type AMI struct {
	// ID is the AMI's ID.
	// +required
	ID string `json:"id"`
	// Deprecated is true for an AMI past its deprecation time; it is used only when no other
	// selected AMI fits.
	// +optional
	Deprecated bool `json:"deprecated,omitempty"`
	// Name is the AMI's name.
	// +optional
	Name string `json:"name,omitempty"`
	// Requirements are what an instance type must satisfy to launch the AMI.
	// +required
	Requirements []corev1.NodeSelectorRequirement `json:"requirements"`
}

// CapacityReservationType distinguishes an on-demand reservation from a capacity block.
type CapacityReservationType string

// Capacity reservation types.
const (
	CapacityReservationTypeDefault       CapacityReservationType = "default"
	CapacityReservationTypeCapacityBlock CapacityReservationType = "capacity-block"
)

// CapacityReservationState is whether a reservation can still be launched into.
type CapacityReservationState string

// Capacity reservation states: a capacity block is expiring within its reclaim window.
const (
	CapacityReservationStateActive   CapacityReservationState = "active"
	CapacityReservationStateExpiring CapacityReservationState = "expiring"
)

// CapacityReservation is one resolved capacity reservation.
type CapacityReservation struct {
	// AvailabilityZone is the zone the reservation is in.
	// +required
	AvailabilityZone string `json:"availabilityZone"`
	// EndTime is when the reservation ends and its capacity is released.
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`
	// ID is the reservation's ID.
	// +kubebuilder:validation:Pattern:="^cr-[0-9a-z]+$"
	// +required
	ID string `json:"id"`
	// InstanceMatchCriteria is open or targeted.
	// +kubebuilder:validation:Enum:={open,targeted}
	// +required
	InstanceMatchCriteria string `json:"instanceMatchCriteria"`
	// InstanceType is the instance type reserved.
	// +required
	InstanceType string `json:"instanceType"`
	// OwnerID is the account that owns the reservation.
	// +kubebuilder:validation:Pattern:="^[0-9]{12}$"
	// +required
	OwnerID string `json:"ownerID"`
	// ReservationType is default (an on-demand reservation) or capacity-block.
	// +kubebuilder:validation:Enum:={default,capacity-block}
	// +kubebuilder:default=default
	// +optional
	ReservationType CapacityReservationType `json:"reservationType,omitempty"`
	// Interruptible is true for a reservation its owner may reclaim.
	// +optional
	Interruptible bool `json:"interruptible,omitempty"`
	// State is active, or expiring for a capacity block near its end.
	// +kubebuilder:validation:Enum:={active,expiring}
	// +kubebuilder:default=active
	// +optional
	State CapacityReservationState `json:"state,omitempty"`
}

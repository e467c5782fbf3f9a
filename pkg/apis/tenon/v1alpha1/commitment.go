package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Commitment declares capacity already bought: a Compute Savings Plan, an EC2 Instance
// Savings Plan or a block of Reserved Instances, with the hours it applies. Exactly one of the
// three is set. tenon prices the next instance at what it adds to the bill given what the fleet
// already consumes of every active commitment (pkg/commitment).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=commitments,scope=Cluster,categories=tenon
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Kind",type="string",JSONPath=".status.kind"
// +kubebuilder:printcolumn:name="Utilization",type="string",JSONPath=".status.utilization"
// +kubebuilder:printcolumn:name="Active",type="string",JSONPath=".status.conditions[?(@.type==\"Active\")].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type Commitment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec   CommitmentSpec   `json:"spec"`
	Status CommitmentStatus `json:"status,omitempty"`
}

// CommitmentSpec is what was bought and when it applies.
// +kubebuilder:validation:XValidation:message="exactly one of computeSavingsPlan, ec2InstanceSavingsPlan and reservedInstances must be set",rule="(has(self.computeSavingsPlan) ? 1 : 0) + (has(self.ec2InstanceSavingsPlan) ? 1 : 0) + (has(self.reservedInstances) ? 1 : 0) == 1"
// +kubebuilder:validation:XValidation:message="end must be after start",rule="!has(self.start) || !has(self.end) || self.end > self.start"
type CommitmentSpec struct {
	// Start is when the commitment begins to apply; unset: it already does.
	// +optional
	Start *metav1.Time `json:"start,omitempty"`
	// End is when it stops applying; unset: it does not end.
	// +optional
	End *metav1.Time `json:"end,omitempty"`
	// ComputeSavingsPlan covers on-demand usage of any instance family in any region, at each
	// family's discount, up to the hourly commitment.
	// +optional
	ComputeSavingsPlan *ComputeSavingsPlan `json:"computeSavingsPlan,omitempty"`
	// EC2InstanceSavingsPlan covers on-demand usage of one instance family in one region.
	// +optional
	EC2InstanceSavingsPlan *EC2InstanceSavingsPlan `json:"ec2InstanceSavingsPlan,omitempty"`
	// ReservedInstances are Count instances of one type, in one zone (zonal) or one region
	// (regional, size-flexible within the family as AWS applies Linux RIs).
	// +optional
	ReservedInstances *ReservedInstances `json:"reservedInstances,omitempty"`
}

// ComputeSavingsPlan is a Compute Savings Plan: HourlyCommitment USD per hour, paid whether
// used or not, buying on-demand usage at the plan's rates (on-demand less the discount).
type ComputeSavingsPlan struct {
	// HourlyCommitment is the USD per hour committed, a decimal ("12.50").
	// +kubebuilder:validation:Pattern=`^\d+(\.\d+)?$`
	// +required
	HourlyCommitment string `json:"hourlyCommitment"`
	// DefaultDiscount is the percentage off on-demand for the families Discounts does not name,
	// a decimal from 0 to 100 ("27.5").
	// +kubebuilder:validation:XValidation:message="must be a percentage from 0 to 100",rule="double(self) <= 100.0"
	// +kubebuilder:validation:Pattern=`^\d+(\.\d+)?$`
	// +required
	DefaultDiscount string `json:"defaultDiscount"`
	// Discounts are the plan's rates by instance family (and optionally region); the first that
	// matches an instance wins.
	// +kubebuilder:validation:MaxItems:=1000
	// +listType=atomic
	// +optional
	Discounts []Discount `json:"discounts,omitempty"`
}

// EC2InstanceSavingsPlan is an EC2 Instance Savings Plan: like a Compute Savings Plan, but for
// one instance family in one region, at a deeper discount.
type EC2InstanceSavingsPlan struct {
	// HourlyCommitment is the USD per hour committed, a decimal ("4.00").
	// +kubebuilder:validation:Pattern=`^\d+(\.\d+)?$`
	// +required
	HourlyCommitment string `json:"hourlyCommitment"`
	// Family is the instance family covered ("m7i").
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Family string `json:"family"`
	// Region is the region covered; unset: the cluster's.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Region string `json:"region,omitempty"`
	// Discount is the percentage off on-demand, a decimal from 0 to 100.
	// +kubebuilder:validation:XValidation:message="must be a percentage from 0 to 100",rule="double(self) <= 100.0"
	// +kubebuilder:validation:Pattern=`^\d+(\.\d+)?$`
	// +required
	Discount string `json:"discount"`
}

// Discount is a Savings Plan's rate for a family, optionally in one region.
type Discount struct {
	// Family is the instance family ("c7g").
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Family string `json:"family"`
	// Region restricts the rate to one region; unset: every region.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Region string `json:"region,omitempty"`
	// Percent is the percentage off on-demand, a decimal from 0 to 100.
	// +kubebuilder:validation:XValidation:message="must be a percentage from 0 to 100",rule="double(self) <= 100.0"
	// +kubebuilder:validation:Pattern=`^\d+(\.\d+)?$`
	// +required
	Percent string `json:"percent"`
}

// ReservedInstances are Count reserved instances of InstanceType.
type ReservedInstances struct {
	// InstanceType is the type reserved ("m5.xlarge").
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	InstanceType string `json:"instanceType"`
	// Count is how many instances are reserved.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +required
	Count int32 `json:"count"`
	// Zone makes the reservation zonal: it covers instances of exactly InstanceType in this
	// zone. Unset: regional, covering the family's instances of any size in the region by
	// normalized units (the smallest instances first), as AWS applies Linux RIs.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Zone string `json:"zone,omitempty"`
	// Region is the region of the reservation; unset: the cluster's.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Region string `json:"region,omitempty"`
	// OfferingClass is Standard or Convertible; both are billed alike while they run.
	// +kubebuilder:validation:Enum:=Standard;Convertible
	// +kubebuilder:default:=Standard
	// +optional
	OfferingClass string `json:"offeringClass,omitempty"`
	// EffectiveHourlyPrice is what one reserved instance costs per hour, upfront payments
	// amortised, a decimal in USD. It is paid whether used or not, so it never changes a
	// decision; it is the commitment's part of the bill. Unset: the bill prices the
	// reservation at zero, and the fixed part it reports understates the bill.
	// +kubebuilder:validation:Pattern=`^\d+(\.\d+)?$`
	// +optional
	EffectiveHourlyPrice string `json:"effectiveHourlyPrice,omitempty"`
}

// Condition types of a Commitment.
const (
	// ConditionActive is True while now is within [start, end) and the spec is valid.
	ConditionActive = "Active"
)

// CommitmentStatus is what tenon last measured of the commitment.
type CommitmentStatus struct {
	// Kind is ComputeSavingsPlan, EC2InstanceSavingsPlan or ReservedInstances.
	// +optional
	Kind string `json:"kind,omitempty"`
	// Utilization is the share of the commitment the fleet uses, a percentage ("87.5%").
	// +optional
	Utilization string `json:"utilization,omitempty"`
	// CoveredInstances is how many of the cluster's instances the commitment covers, wholly or in
	// part.
	// +optional
	CoveredInstances int32 `json:"coveredInstances,omitempty"`
	// Conditions: Active.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// CommitmentList is a list of Commitments.
// +kubebuilder:object:root=true
type CommitmentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Commitment `json:"items"`
}

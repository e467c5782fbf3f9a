package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SimInstance is one instance of the simulated cloud, named by its instance ID. The simulated
// cloud creates it at launch and deletes it once the instance is terminated and its Node
// deleted; on start it rebuilds its state from these objects. Its spec is what was bought and
// never changes; its status is the instance's progress.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:path=siminstances,scope=Cluster,categories=sim,shortName=simi
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Type",type="string",JSONPath=".spec.instanceType"
// +kubebuilder:printcolumn:name="Zone",type="string",JSONPath=".spec.zone"
// +kubebuilder:printcolumn:name="Capacity",type="string",JSONPath=".spec.capacityType"
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="Node",type="string",JSONPath=".status.nodeName"
// +kubebuilder:printcolumn:name="NodeClaim",type="string",JSONPath=".spec.nodeClaim"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Price",type="string",JSONPath=".spec.price",priority=1
// +kubebuilder:printcolumn:name="Reservation",type="string",JSONPath=".spec.reservationID",priority=1
// +kubebuilder:printcolumn:name="NodeClass",type="string",JSONPath=".spec.nodeClass",priority=1
type SimInstance struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="the spec of a SimInstance cannot be changed"
	// +required
	Spec   SimInstanceSpec   `json:"spec"`
	Status SimInstanceStatus `json:"status,omitempty"`
}

// SimInstanceList is a list of SimInstances.
//
// +kubebuilder:object:root=true
type SimInstanceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimInstance `json:"items"`
}

// Labels and annotations the simulated cloud puts on SimInstances.
const (
	// NodeClaimLabelKey holds the name of the NodeClaim an instance was launched for.
	NodeClaimLabelKey = Group + "/nodeclaim"
	// NodeClassLabelKey holds the name of the SimNodeClass an instance was launched from.
	NodeClassLabelKey = Group + "/nodeclass"
)

// SimInstanceSpec is what was launched: the offering bought and what the instance's kubelet
// registers its Node with.
type SimInstanceSpec struct {
	// NodeClaim is the name of the NodeClaim the instance was launched for.
	// +required
	NodeClaim string `json:"nodeClaim"`
	// NodeClass is the name of the SimNodeClass it was launched from.
	// +required
	NodeClass string `json:"nodeClass"`
	// Region, Zone and ZoneID place the instance.
	// +required
	Region string `json:"region"`
	// +required
	Zone string `json:"zone"`
	// +optional
	ZoneID string `json:"zoneID,omitempty"`
	// InstanceType is the type bought.
	// +required
	InstanceType string `json:"instanceType"`
	// CapacityType is on-demand, spot or reserved.
	// +kubebuilder:validation:Enum=on-demand;spot;reserved
	// +required
	CapacityType string `json:"capacityType"`
	// Price is the hourly price in USD at launch, as a decimal.
	// +required
	Price string `json:"price"`
	// ReservationID is the reservation or capacity block the instance runs in, if reserved.
	// +optional
	ReservationID string `json:"reservationID,omitempty"`
	// ImageID is the machine image the instance booted.
	// +optional
	ImageID string `json:"imageID,omitempty"`
	// LaunchTime is when the instance was launched; its boot, registration and interruption
	// times count from it.
	// +required
	LaunchTime metav1.MicroTime `json:"launchTime"`
	// NodeLabels are the labels its Node registers with (kubernetes.io/hostname is added).
	// +optional
	NodeLabels map[string]string `json:"nodeLabels,omitempty"`
	// Taints and StartupTaints are the taints its Node registers with, after
	// karpenter.sh/unregistered:NoExecute.
	// +listType=atomic
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`
	// +listType=atomic
	// +optional
	StartupTaints []corev1.Taint `json:"startupTaints,omitempty"`
	// Tags are the SimNodeClass's tags at launch.
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
}

// InstancePhase is where an instance is in its life.
type InstancePhase string

const (
	// InstancePending: launched, not yet running.
	InstancePending InstancePhase = "Pending"
	// InstanceRunning: booted; its Node registers registrationDelay later.
	InstanceRunning InstancePhase = "Running"
	// InstanceTerminating: asked to terminate or reclaimed, shutting down; it still holds its
	// capacity.
	InstanceTerminating InstancePhase = "Terminating"
	// InstanceTerminated: gone. The object is deleted once its Node is deleted.
	InstanceTerminated InstancePhase = "Terminated"
)

// SimInstanceStatus is the instance's progress.
type SimInstanceStatus struct {
	// Phase is Pending, Running, Terminating or Terminated.
	// +kubebuilder:validation:Enum=Pending;Running;Terminating;Terminated
	// +optional
	Phase InstancePhase `json:"phase,omitempty"`
	// NodeName is the Node the instance registered as.
	// +optional
	NodeName string `json:"nodeName,omitempty"`
	// TerminationTime is when termination began.
	// +optional
	TerminationTime *metav1.MicroTime `json:"terminationTime,omitempty"`
	// TerminationReason says why: Deleted, SpotInterruption, ScheduledMaintenance,
	// CapacityBlockExpired or Stopped.
	// +optional
	TerminationReason string `json:"terminationReason,omitempty"`
	// Interruption is the interruption planned for the instance (drawn at launch or
	// injected); its notice is delivered at noticeTime and the instance reclaimed at deadline.
	// +optional
	Interruption *InterruptionStatus `json:"interruption,omitempty"`
}

// InterruptionStatus is an interruption planned for an instance.
type InterruptionStatus struct {
	// Kind is the notice's kind: SpotInterruption, ScheduledMaintenance or InstanceStopped
	// (which has no notice).
	// +required
	Kind string `json:"kind"`
	// Reason is the termination reason it leads to: SpotInterruption, ScheduledMaintenance,
	// CapacityBlockExpired or Stopped.
	// +optional
	Reason string `json:"reason,omitempty"`
	// NoticeTime is when the notice is (or was) delivered.
	// +required
	NoticeTime metav1.MicroTime `json:"noticeTime"`
	// Deadline is when the instance is reclaimed.
	// +required
	Deadline metav1.MicroTime `json:"deadline"`
	// Injected is true for interruptions injected by hand rather than drawn.
	// +optional
	Injected bool `json:"injected,omitempty"`
}

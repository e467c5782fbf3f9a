package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SimNodeClass configures the simulated cloud for the NodePools that name it: where it sells,
// how its instances behave, and what capacity it has. Changing rootVolumeSize, labels or tags,
// or removing a zone, drifts the instances launched before.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:path=simnodeclasses,scope=Cluster,categories=karpenter,shortName=simnc
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Region",type="string",JSONPath=".spec.region"
// +kubebuilder:printcolumn:name="Zones",type="string",JSONPath=".status.zones"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Interruptions",type="string",JSONPath=".spec.interruptions.spotInterruptionModel",priority=1
type SimNodeClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:default:={}
	// +optional
	Spec   SimNodeClassSpec   `json:"spec,omitempty"`
	Status SimNodeClassStatus `json:"status,omitempty"`
}

// SimNodeClassList is a list of SimNodeClasses.
//
// +kubebuilder:object:root=true
type SimNodeClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimNodeClass `json:"items"`
}

// Defaults of the SimNodeClass spec, as the CRD schema applies them. Code that builds a spec by
// hand (the offline simulator) gets the same values from the Get* accessors.
const (
	DefaultRegion            = "us-east-1"
	DefaultBootDelay         = "2s"
	DefaultRegistrationDelay = "1s"
	DefaultDevicePluginDelay = "3s"
	DefaultShutdownDelay     = "0s"
	DefaultRootVolumeSize    = "20Gi"
	DefaultRebalanceLead     = "5m"
	DefaultMaintenanceNotice = "10m"
	DefaultScalePercent      = 100
)

// SimNodeClassSpec is the configuration of the simulated cloud for one NodeClass.
//
// +kubebuilder:validation:XValidation:rule="!has(self.reservations) || !has(self.capacityBlocks) || self.reservations.all(r, !self.capacityBlocks.exists(b, b.id == r.id))",message="a reservation and a capacity block cannot share an id"
type SimNodeClassSpec struct {
	// Region is the AWS region whose catalog the cloud sells.
	// +kubebuilder:validation:Enum=us-east-1;us-west-2
	// +kubebuilder:default:="us-east-1"
	// +optional
	Region string `json:"region,omitempty"`
	// Zones limits the cloud to these zones of the region, by name (us-east-1a) or zone ID
	// (use1-az1). Empty means every zone of the region.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=32
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9-]+$`
	// +listType=set
	// +optional
	Zones []string `json:"zones,omitempty"`
	// BootDelay is the time from launch until the instance is running.
	// +kubebuilder:validation:Pattern=`^([0-9]+(ms|s|m|h))+$`
	// +kubebuilder:validation:Type="string"
	// +kubebuilder:default:="2s"
	// +optional
	BootDelay *metav1.Duration `json:"bootDelay,omitempty"`
	// RegistrationDelay is the time from running until the instance's Node object appears.
	// +kubebuilder:validation:Pattern=`^([0-9]+(ms|s|m|h))+$`
	// +kubebuilder:validation:Type="string"
	// +kubebuilder:default:="1s"
	// +optional
	RegistrationDelay *metav1.Duration `json:"registrationDelay,omitempty"`
	// DevicePluginDelay is the time from registration until GPU, Neuron and EFA resources
	// appear in the Node's capacity, as a device plugin would add them.
	// +kubebuilder:validation:Pattern=`^([0-9]+(ms|s|m|h))+$`
	// +kubebuilder:validation:Type="string"
	// +kubebuilder:default:="3s"
	// +optional
	DevicePluginDelay *metav1.Duration `json:"devicePluginDelay,omitempty"`
	// ShutdownDelay is how long a terminating instance takes to shut down; it holds its
	// capacity until then.
	// +kubebuilder:validation:Pattern=`^([0-9]+(ms|s|m|h))+$`
	// +kubebuilder:validation:Type="string"
	// +kubebuilder:default:="0s"
	// +optional
	ShutdownDelay *metav1.Duration `json:"shutdownDelay,omitempty"`
	// CapacityPools limit how many instances may run at once in the offerings they select.
	// Offerings no pool selects are unlimited. Pools apply to on-demand and spot offerings;
	// reserved offerings are limited by their reservation's count.
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +optional
	CapacityPools []CapacityPool `json:"capacityPools,omitempty"`
	// Reservations are on-demand capacity reservations: each adds a reserved offering of its
	// instance type in its zone with count instances.
	// +kubebuilder:validation:MaxItems=50
	// +listType=map
	// +listMapKey=id
	// +optional
	Reservations []Reservation `json:"reservations,omitempty"`
	// CapacityBlocks are reservations usable only within a time window; their instances are
	// reclaimed at its end.
	// +kubebuilder:validation:MaxItems=50
	// +listType=map
	// +listMapKey=id
	// +optional
	CapacityBlocks []CapacityBlock `json:"capacityBlocks,omitempty"`
	// Interruptions configures spot interruptions and scheduled maintenance.
	// +kubebuilder:default:={}
	// +optional
	Interruptions Interruptions `json:"interruptions,omitempty"`
	// PriceOverrides change the prices of the on-demand and spot offerings they select, in
	// order.
	// +kubebuilder:validation:MaxItems=50
	// +listType=atomic
	// +optional
	PriceOverrides []PriceOverride `json:"priceOverrides,omitempty"`
	// RootVolumeSize is the size of every instance's root volume, which is its node's
	// ephemeral-storage capacity.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:default:="20Gi"
	// +optional
	RootVolumeSize *resource.Quantity `json:"rootVolumeSize,omitempty"`
	// Tags are recorded on every instance (its SimInstance), as a cloud tags its instances.
	// +kubebuilder:validation:MaxProperties=50
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
	// Labels are added to every node. Keys in the domains kubernetes.io, k8s.io and
	// karpenter.sh are refused, except the node.kubernetes.io and node-restriction.kubernetes.io
	// subdomains.
	// +kubebuilder:validation:MaxProperties=50
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.matches('^([^/]+[.])?(kubernetes[.]io|k8s[.]io|karpenter[.]sh)/') || k.matches('^([^/]+[.])?(node|node-restriction)[.]kubernetes[.]io/'))",message="label keys in the domains kubernetes.io, k8s.io and karpenter.sh are restricted"
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}

// CapacityPool is a limit on concurrent instances, shared by every on-demand and spot offering
// it selects: an offering is unavailable while any pool selecting it is full. The selectors
// combine: a pool with none selects every on-demand and spot offering.
type CapacityPool struct {
	// InstanceType selects offerings of one instance type.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[a-z0-9-]+\.[a-z0-9-]+$`
	// +optional
	InstanceType string `json:"instanceType,omitempty"`
	// Requirements select offerings by the labels a node bought through them would carry.
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	// +optional
	Requirements []Requirement `json:"requirements,omitempty"`
	// Zone selects offerings in one zone (name or zone ID).
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[a-z0-9-]+$`
	// +optional
	Zone string `json:"zone,omitempty"`
	// CapacityType selects on-demand or spot offerings.
	// +kubebuilder:validation:Enum=on-demand;spot
	// +optional
	CapacityType string `json:"capacityType,omitempty"`
	// Capacity is the most instances that may run at once in the selected offerings.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000
	// +required
	Capacity int32 `json:"capacity"`
}

// ReservationType says which launches may use a reservation.
type ReservationType string

const (
	// ReservationOpen: any launch that allows reserved capacity may use it.
	ReservationOpen ReservationType = "open"
	// ReservationTargeted: only a launch whose requirements name the reservation's ID
	// (karpenter.k8s.aws/capacity-reservation-id In [id]) may use it.
	ReservationTargeted ReservationType = "targeted"
)

// Reservation is an on-demand capacity reservation: count instances of one type in one zone,
// sold as the reserved capacity type at a nominal price, so that it is preferred.
type Reservation struct {
	// ID names the reservation; nodes launched into it carry it in the
	// karpenter.k8s.aws/capacity-reservation-id label.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +required
	ID string `json:"id"`
	// InstanceType is the type reserved.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[a-z0-9-]+\.[a-z0-9-]+$`
	// +required
	InstanceType string `json:"instanceType"`
	// Zone is the zone (name or zone ID) the capacity is in.
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[a-z0-9-]+$`
	// +required
	Zone string `json:"zone"`
	// Count is how many instances the reservation holds.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100000
	// +required
	Count int32 `json:"count"`
	// Type is open (any launch allowing reserved capacity uses it) or targeted (only launches
	// naming its ID).
	// +kubebuilder:validation:Enum=open;targeted
	// +kubebuilder:default:=open
	// +optional
	Type ReservationType `json:"type,omitempty"`
}

// CapacityBlock is reserved capacity for a time window, as for GPU training runs: it can be
// launched into only within [start, end), and its instances are reclaimed at end (with a
// ScheduledMaintenance notice maintenanceNotice before). Any launch that allows reserved
// capacity may use it.
//
// +kubebuilder:validation:XValidation:rule="self.end > self.start",message="end must be after start"
type CapacityBlock struct {
	// ID names the block, like a reservation ID.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +required
	ID string `json:"id"`
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[a-z0-9-]+\.[a-z0-9-]+$`
	// +required
	InstanceType string `json:"instanceType"`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[a-z0-9-]+$`
	// +required
	Zone string `json:"zone"`
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100000
	// +required
	Count int32 `json:"count"`
	// Start is when the block becomes usable.
	// +required
	Start metav1.Time `json:"start"`
	// End is when the block ends and its instances are reclaimed.
	// +required
	End metav1.Time `json:"end"`
}

// SpotInterruptionModel chooses how spot instances are interrupted.
type SpotInterruptionModel string

const (
	// SpotInterruptionNone: spot instances are interrupted only when an interruption is
	// injected.
	SpotInterruptionNone SpotInterruptionModel = "none"
	// SpotInterruptionAdvisor: each spot instance is interrupted after a random time drawn from
	// the Spot Instance Advisor's interruption-frequency bucket of its type.
	SpotInterruptionAdvisor SpotInterruptionModel = "advisor"
)

// Interruptions configures the events that take instances away.
type Interruptions struct {
	// SpotInterruptionModel is none or advisor.
	// +kubebuilder:validation:Enum=none;advisor
	// +kubebuilder:default:=none
	// +optional
	SpotInterruptionModel SpotInterruptionModel `json:"spotInterruptionModel,omitempty"`
	// Seed makes the random draws reproducible: the same seed gives every instance the same
	// interruption times.
	// +optional
	Seed int64 `json:"seed,omitempty"`
	// ScalePercent multiplies the interruption rates: 100 is the advisor's frequency, 1000 ten
	// times as often, 0 never.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default:=100
	// +optional
	ScalePercent *int32 `json:"scalePercent,omitempty"`
	// RebalanceLead is how long before a spot interruption notice the rebalance recommendation
	// comes.
	// +kubebuilder:validation:Pattern=`^([0-9]+(ms|s|m|h))+$`
	// +kubebuilder:validation:Type="string"
	// +kubebuilder:default:="5m"
	// +optional
	RebalanceLead *metav1.Duration `json:"rebalanceLead,omitempty"`
	// MaintenanceInterval, when set, retires instances after a random time with this mean
	// (scheduled maintenance), whatever their capacity type.
	// +kubebuilder:validation:Pattern=`^([0-9]+(ms|s|m|h))+$`
	// +kubebuilder:validation:Type="string"
	// +optional
	MaintenanceInterval *metav1.Duration `json:"maintenanceInterval,omitempty"`
	// MaintenanceNotice is how long before a retirement (scheduled maintenance or the end of a
	// capacity block) its notice comes.
	// +kubebuilder:validation:Pattern=`^([0-9]+(ms|s|m|h))+$`
	// +kubebuilder:validation:Type="string"
	// +kubebuilder:default:="10m"
	// +optional
	MaintenanceNotice *metav1.Duration `json:"maintenanceNotice,omitempty"`
}

// PriceOverride sets or adjusts the price of the on-demand and spot offerings it selects.
//
// +kubebuilder:validation:XValidation:rule="has(self.price) != has(self.percent)",message="exactly one of price and percent must be set"
type PriceOverride struct {
	// Requirements select offerings by the labels a node bought through them would carry;
	// none selects every offering.
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	// +optional
	Requirements []Requirement `json:"requirements,omitempty"`
	// Price is the new hourly price in USD, a decimal such as "0.096".
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:Pattern=`^[0-9]+([.][0-9]+)?$`
	// +optional
	Price string `json:"price,omitempty"`
	// Percent changes the price: "20" makes it 20% dearer, "-10" 10% cheaper.
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:Pattern=`^[-+]?[0-9]+([.][0-9]+)?$`
	// +optional
	Percent string `json:"percent,omitempty"`
}

// Requirement constrains one label, like a node-selector requirement (Gte and Lte included).
//
// +kubebuilder:validation:XValidation:rule="!(self.operator in ['In', 'NotIn']) || (has(self.values) && size(self.values) > 0)",message="operators In and NotIn need at least one value"
// +kubebuilder:validation:XValidation:rule="!(self.operator in ['Gt', 'Lt', 'Gte', 'Lte']) || (has(self.values) && size(self.values) == 1)",message="operators Gt, Lt, Gte and Lte need exactly one value"
// +kubebuilder:validation:XValidation:rule="!(self.operator in ['Exists', 'DoesNotExist']) || !has(self.values) || size(self.values) == 0",message="operators Exists and DoesNotExist take no values"
type Requirement struct {
	// Key is the label.
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	// +required
	Key string `json:"key"`
	// Operator is In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte or Lte.
	// +kubebuilder:validation:Enum=In;NotIn;Exists;DoesNotExist;Gt;Lt;Gte;Lte
	// +required
	Operator corev1.NodeSelectorOperator `json:"operator"`
	// Values are label values; Gt, Lt, Gte and Lte take one integer.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=63
	// +listType=atomic
	// +optional
	Values []string `json:"values,omitempty"`
}

// ConditionTypeReady is the SimNodeClass condition that says whether the spec resolves against
// the catalog: the region and zones exist, the instance types it names are sold there.
const ConditionTypeReady = "Ready"

// SimNodeClassStatus is what the simulated cloud resolved from the spec.
type SimNodeClassStatus struct {
	// Conditions: Ready is True when the spec resolves, False with the reason otherwise.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Zones are the names of the zones the cloud sells in for this class.
	// +listType=atomic
	// +optional
	Zones []string `json:"zones,omitempty"`
}

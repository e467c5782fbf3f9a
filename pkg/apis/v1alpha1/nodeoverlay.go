package v1alpha1

import (
	"cmp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeSelectorRequirement selects instance types and offerings by the labels a node bought
// through them would carry.
type NodeSelectorRequirement struct {
	// Key is the node label the requirement reads.
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	// +required
	Key string `json:"key"`
	// Operator relates the key to the values: In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte or Lte.
	// +kubebuilder:validation:Enum:=In;NotIn;Exists;DoesNotExist;Gt;Lt;Gte;Lte
	// +required
	Operator corev1.NodeSelectorOperator `json:"operator,omitempty"`
	// Values are label values: In and NotIn need at least one, Gt, Lt, Gte and Lte exactly one
	// non-negative integer, Exists and DoesNotExist none.
	// +kubebuilder:validation:items:MaxLength=63
	// +listType=atomic
	// +optional
	Values []string `json:"values,omitempty"`
}

// NodeOverlaySpec says which offerings the overlay changes, and how.
type NodeOverlaySpec struct {
	// Requirements select the instance types and offerings the overlay applies to, by the labels
	// a node bought through the offering would carry (the type's labels, zone, capacity type,
	// the NodePool's name and its template's labels). None selects every offering.
	// +kubebuilder:validation:XValidation:message="requirements with operator 'NotIn' must have a value defined",rule="self.all(x, x.operator == 'NotIn' ? x.values.size() != 0 : true)"
	// +kubebuilder:validation:XValidation:message="requirements with operator 'In' must have a value defined",rule="self.all(x, x.operator == 'In' ? x.values.size() != 0 : true)"
	// +kubebuilder:validation:XValidation:message="requirements operator 'Gt', 'Lt', 'Gte' or 'Lte' must have a single positive integer value",rule="self.all(x, (x.operator == 'Gt' || x.operator == 'Lt' || x.operator == 'Gte' || x.operator == 'Lte') ? (x.values.size() == 1 && int(x.values[0]) >= 0) : true)"
	// +kubebuilder:validation:MaxItems:=100
	// +listType=atomic
	// +optional
	Requirements []NodeSelectorRequirement `json:"requirements,omitempty"`
	// PriceAdjustment changes the price of the selected offerings: a signed amount in USD per
	// hour ("-0.5", "+1.2") or a percentage ("+10%", "-15%", down to "-100%"). A price never
	// goes below zero.
	// +kubebuilder:validation:Pattern=`^(([+-]{1}(\d*\.?\d+))|(\+{1}\d*\.?\d+%)|(^(-\d{1,2}(\.\d+)?%)$)|(-100%))$`
	// +optional
	PriceAdjustment *string `json:"priceAdjustment,omitempty"`
	// Price replaces the price of the selected offerings, in USD per hour.
	// +kubebuilder:validation:Pattern=`^\d+(\.\d+)?$`
	// +optional
	Price *string `json:"price,omitempty"`
	// Capacity adds extended resources to the selected instance types (all their offerings);
	// cpu, memory, ephemeral-storage and pods cannot be changed.
	// +kubebuilder:validation:XValidation:message="invalid resource restricted",rule="self.all(x, !(x in ['cpu', 'memory', 'ephemeral-storage', 'pods']))"
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`
	// Weight orders overlays: where several select the same offering, the heaviest sets its
	// price (and, per resource, its capacity). Unset weighs 0. Two overlays of the same weight
	// that both set the same offering's price, or the same resource, conflict.
	// +kubebuilder:validation:Minimum:=1
	// +kubebuilder:validation:Maximum:=10000
	// +optional
	Weight *int32 `json:"weight,omitempty"`
}

// NodeOverlayStatus reports whether the overlay is applied.
type NodeOverlayStatus struct {
	// Conditions: ValidationSucceeded (False with reason RuntimeValidation or Conflict when the
	// overlay is not applied) and Ready, which follows it.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NodeOverlay changes what tenon believes about the instance types it selects: their price
// (a negotiated discount, a licence surcharge) or extended resources the cloud does not report.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:path=nodeoverlays,scope=Cluster,categories=karpenter,shortName=overlays
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description=""
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description=""
// +kubebuilder:printcolumn:name="Weight",type="integer",JSONPath=".spec.weight",priority=1,description=""
// +kubebuilder:subresource:status
type NodeOverlay struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:validation:XValidation:message="cannot set both 'price' and 'priceAdjustment'",rule="!has(self.price) || !has(self.priceAdjustment)"
	Spec   NodeOverlaySpec   `json:"spec"`
	Status NodeOverlayStatus `json:"status,omitempty"`
}

// NodeOverlayList is a list of NodeOverlays.
//
// +kubebuilder:object:root=true
type NodeOverlayList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodeOverlay `json:"items"`
}

// WeightOf returns the overlay's weight (0 when unset).
func (in *NodeOverlay) WeightOf() int32 {
	if in.Spec.Weight == nil {
		return 0
	}
	return *in.Spec.Weight
}

// OrderByWeight sorts overlays in the order they are merged: heaviest first and, among equal
// weights, by name in reverse alphabetical order (Karpenter's order).
func OrderByWeight(overlays []*NodeOverlay) {
	slices.SortStableFunc(overlays, func(a, b *NodeOverlay) int {
		if x := cmp.Compare(b.WeightOf(), a.WeightOf()); x != 0 {
			return x
		}
		return strings.Compare(b.Name, a.Name)
	})
}

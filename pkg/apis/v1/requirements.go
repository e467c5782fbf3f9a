package v1

import (
	corev1 "k8s.io/api/core/v1"
)

// Operators that Karpenter's v1 API adds to the node selector operators of Kubernetes.
const (
	NodeSelectorOpGte corev1.NodeSelectorOperator = "Gte"
	NodeSelectorOpLte corev1.NodeSelectorOperator = "Lte"
)

// NodeSelectorRequirementWithMinValues constrains one node label, like a node affinity term, and
// may ask for flexibility: minValues distinct values of the key must stay possible when tenon
// narrows the requirement to pick instance types.
//
// The key must be a qualified label name outside the restricted domains (see
// RestrictedLabelDomains), unless it is a well-known label.
//
// +kubebuilder:validation:XValidation:rule="self.operator != 'In' || (has(self.values) && size(self.values) > 0)",message="a requirement with operator In must list at least one value"
// +kubebuilder:validation:XValidation:rule="!(self.operator in ['Gt', 'Lt', 'Gte', 'Lte']) || (has(self.values) && size(self.values) == 1 && self.values[0].matches('^[0-9]{1,18}$'))",message="a requirement with operator Gt, Lt, Gte or Lte must have exactly one value, a non-negative integer"
// +kubebuilder:validation:XValidation:rule="!(self.operator == 'In' && has(self.minValues)) || (has(self.values) && size(self.values) >= self.minValues)",message="minValues must not exceed the number of values of an In requirement"
type NodeSelectorRequirementWithMinValues struct {
	// Key is the node label the requirement constrains.
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="!self.contains('/') || self.indexOf('/') <= 253",message="the prefix of a label key must be at most 253 characters"
	// +kubebuilder:validation:XValidation:rule="self in ['kubernetes.io/arch', 'kubernetes.io/os', 'topology.kubernetes.io/zone', 'topology.kubernetes.io/region', 'beta.kubernetes.io/arch', 'beta.kubernetes.io/os', 'beta.kubernetes.io/instance-type', 'failure-domain.beta.kubernetes.io/zone', 'failure-domain.beta.kubernetes.io/region'] || !self.matches('^([^/]+[.])?kubernetes[.]io/') || self.matches('^([^/]+[.])?(node|node-restriction)[.]kubernetes[.]io/')",message="keys in the label domain kubernetes.io are restricted, except well-known labels and the node.kubernetes.io and node-restriction.kubernetes.io subdomains"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([^/]+[.])?k8s[.]io/') || self.matches('^([^/]+[.])?kops[.]k8s[.]io/')",message="keys in the label domain k8s.io are restricted, except the kops.k8s.io subdomain"
	// +kubebuilder:validation:XValidation:rule="self in ['karpenter.sh/capacity-type', 'karpenter.sh/nodepool'] || !self.matches('^([^/]+[.])?karpenter[.]sh/')",message="keys in the label domain karpenter.sh are restricted, except karpenter.sh/capacity-type and karpenter.sh/nodepool"
	// +kubebuilder:validation:XValidation:rule="self != 'kubernetes.io/hostname'",message="kubernetes.io/hostname is restricted: it differs on every node"
	// +required
	Key string `json:"key"`
	// Operator relates the key to the values: In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte or Lte.
	// +kubebuilder:validation:Enum=In;NotIn;Exists;DoesNotExist;Gt;Lt;Gte;Lte
	// +required
	Operator corev1.NodeSelectorOperator `json:"operator"`
	// Values are label values. In needs at least one; Gt, Lt, Gte and Lte need exactly one, a
	// non-negative integer.
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
	// +listType=atomic
	// +optional
	Values []string `json:"values,omitempty"`
	// MinValues is the least number of distinct values of the key that must remain possible.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=50
	// +optional
	MinValues *int `json:"minValues,omitempty"`
}

// NodeSelectorRequirement returns the requirement without minValues, in the core API's type.
func (in *NodeSelectorRequirementWithMinValues) NodeSelectorRequirement() corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: in.Key, Operator: in.Operator, Values: append([]string(nil), in.Values...)}
}

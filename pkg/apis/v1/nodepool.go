package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodePool is the policy for the nodes tenon may launch: what they look like (the template),
// how many resources they may add up to (limits), and how they may be disrupted.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:path=nodepools,scope=Cluster,categories=karpenter
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.nodes
// +kubebuilder:printcolumn:name="NodeClass",type="string",JSONPath=".spec.template.spec.nodeClassRef.name"
// +kubebuilder:printcolumn:name="Nodes",type="string",JSONPath=".status.nodes"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Weight",type="integer",JSONPath=".spec.weight"
// +kubebuilder:printcolumn:name="CPU",type="string",JSONPath=".status.resources.cpu",priority=1
// +kubebuilder:printcolumn:name="Memory",type="string",JSONPath=".status.resources.memory",priority=1
type NodePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec   NodePoolSpec   `json:"spec"`
	Status NodePoolStatus `json:"status,omitempty"`
}

// NodePoolList is a list of NodePools.
//
// +kubebuilder:object:root=true
type NodePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodePool `json:"items"`
}

// NodePoolSpec is the policy of a NodePool. A NodePool is dynamic (tenon launches nodes for
// pending pods) unless replicas is set, which makes it static (tenon keeps that many nodes).
//
// +kubebuilder:validation:XValidation:rule="has(self.replicas) == has(oldSelf.replicas)",message="a NodePool cannot switch between static (replicas set) and dynamic (replicas unset)"
// +kubebuilder:validation:XValidation:rule="!has(self.replicas) || !has(self.limits) || size(self.limits) == 0 || (size(self.limits) == 1 && 'nodes' in self.limits)",message="a static NodePool (replicas set) may only limit nodes"
// +kubebuilder:validation:XValidation:rule="!has(self.replicas) || !has(self.weight)",message="a static NodePool (replicas set) cannot have a weight"
type NodePoolSpec struct {
	// Template is the shape of the NodeClaims this NodePool creates. A NodeClaim is usually
	// narrower than the template: tenon intersects it with the pods it is launched for.
	// +required
	Template NodeClaimTemplate `json:"template"`
	// Disruption controls how tenon may remove this NodePool's nodes.
	// +kubebuilder:default:={consolidateAfter: "0s"}
	// +optional
	Disruption Disruption `json:"disruption"`
	// Limits cap the total resources of this NodePool's nodes; "nodes" caps their number.
	// A static NodePool may only limit nodes.
	// +optional
	Limits Limits `json:"limits,omitempty"`
	// Weight orders NodePools: tenon tries higher weights first. Unset counts as 0.
	// A static NodePool cannot have a weight.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	Weight *int32 `json:"weight,omitempty"`
	// Replicas makes the NodePool static: tenon keeps this many nodes whatever the pods need,
	// ignores consolidationPolicy and consolidateAfter, and allows only limits.nodes.
	// Once set it cannot be removed, and it cannot be added to a dynamic NodePool.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas *int64 `json:"replicas,omitempty"`
}

// IsStatic reports whether the NodePool keeps a fixed number of nodes.
func (in *NodePool) IsStatic() bool { return in.Spec.Replicas != nil }

// NodeClaimTemplate is the metadata and spec given to each NodeClaim of a NodePool.
type NodeClaimTemplate struct {
	ObjectMeta `json:"metadata,omitempty"`
	// +required
	Spec NodeClaimTemplateSpec `json:"spec"`
}

// ObjectMeta is the part of object metadata a template may set.
type ObjectMeta struct {
	// Labels are put on each NodeClaim and its Node. Keys in restricted domains are refused
	// (see RestrictedLabelDomains), as is karpenter.sh/nodepool, which tenon sets itself.
	// Values are label values: at most 63 characters.
	// +kubebuilder:validation:MaxProperties=100
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'))",message="label keys must be qualified names: an optional DNS subdomain prefix and '/', then a name of at most 63 characters"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.contains('/') || k.indexOf('/') <= 253)",message="the prefix of a label key must be at most 253 characters"
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['kubernetes.io/arch', 'kubernetes.io/os', 'topology.kubernetes.io/zone', 'topology.kubernetes.io/region', 'beta.kubernetes.io/arch', 'beta.kubernetes.io/os', 'beta.kubernetes.io/instance-type', 'failure-domain.beta.kubernetes.io/zone', 'failure-domain.beta.kubernetes.io/region'] || !k.matches('^([^/]+[.])?kubernetes[.]io/') || k.matches('^([^/]+[.])?(node|node-restriction)[.]kubernetes[.]io/'))",message="keys in the label domain kubernetes.io are restricted, except well-known labels and the node.kubernetes.io and node-restriction.kubernetes.io subdomains"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.matches('^([^/]+[.])?k8s[.]io/') || k.matches('^([^/]+[.])?kops[.]k8s[.]io/'))",message="keys in the label domain k8s.io are restricted, except the kops.k8s.io subdomain"
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['karpenter.sh/capacity-type', 'karpenter.sh/nodepool'] || !k.matches('^([^/]+[.])?karpenter[.]sh/'))",message="keys in the label domain karpenter.sh are restricted, except karpenter.sh/capacity-type and karpenter.sh/nodepool"
	// +kubebuilder:validation:XValidation:rule="self.all(k, k != 'karpenter.sh/nodepool')",message="karpenter.sh/nodepool is restricted: tenon sets it to the NodePool's name"
	// +kubebuilder:validation:XValidation:rule="self.all(k, k != 'kubernetes.io/hostname')",message="kubernetes.io/hostname is restricted: it differs on every node"
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are put on each NodeClaim and its Node.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// NodeClaimTemplateSpec is a NodeClaimSpec without resource requests, which tenon computes per
// NodeClaim from the pods it launches it for.
type NodeClaimTemplateSpec struct {
	// Taints are placed on every node and stay there.
	// Each taint needs a qualified-name key, a label-value value, and an effect of NoSchedule,
	// PreferNoSchedule or NoExecute.
	// +listType=atomic
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`
	// StartupTaints are placed on every node when it starts and are expected to be removed by
	// something on the node once it is set up. Pods need not tolerate them.
	// Each taint needs a qualified-name key, a label-value value, and an effect of NoSchedule,
	// PreferNoSchedule or NoExecute.
	// +listType=atomic
	// +optional
	StartupTaints []corev1.Taint `json:"startupTaints,omitempty"`
	// Requirements constrain the labels of every node; pods narrow them further.
	// karpenter.sh/nodepool may not be required here: tenon sets it.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:XValidation:rule="self.all(r, r.key != 'karpenter.sh/nodepool')",message="karpenter.sh/nodepool is restricted: tenon sets it to the NodePool's name"
	// +listType=atomic
	// +required
	Requirements []NodeSelectorRequirementWithMinValues `json:"requirements"`
	// NodeClassRef names the provider-specific configuration of the nodes. Its group and kind
	// cannot change; its name can, which drifts existing nodes.
	// +kubebuilder:validation:XValidation:rule="self.group == oldSelf.group",message="nodeClassRef.group cannot be changed"
	// +kubebuilder:validation:XValidation:rule="self.kind == oldSelf.kind",message="nodeClassRef.kind cannot be changed"
	// +required
	NodeClassRef *NodeClassReference `json:"nodeClassRef"`
	// TerminationGracePeriod bounds how long draining a node may take once its deletion begins;
	// see NodeClaimSpec.TerminationGracePeriod.
	// +kubebuilder:validation:Pattern=`^([0-9]+(s|m|h))+$`
	// +kubebuilder:validation:Type="string"
	// +optional
	TerminationGracePeriod *metav1.Duration `json:"terminationGracePeriod,omitempty"`
	// ExpireAfter is how long after creation a node is replaced, or Never.
	// +kubebuilder:default:="720h"
	// +optional
	ExpireAfter NillableDuration `json:"expireAfter,omitempty"`
}

// ToNodeClaim returns a NodeClaim carrying the template's metadata and spec. The caller names
// it, labels it with its NodePool, and adds resource requests. Maps and slices are shared with
// the template; deep-copy the template first if the claim will be modified.
func (in *NodeClaimTemplate) ToNodeClaim() *NodeClaim {
	return &NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Labels: in.Labels, Annotations: in.Annotations},
		Spec: NodeClaimSpec{
			Taints:                 in.Spec.Taints,
			StartupTaints:          in.Spec.StartupTaints,
			Requirements:           in.Spec.Requirements,
			NodeClassRef:           in.Spec.NodeClassRef,
			TerminationGracePeriod: in.Spec.TerminationGracePeriod,
			ExpireAfter:            in.Spec.ExpireAfter,
		},
	}
}

// Package v1 holds Karpenter's AWS NodeClass, EC2NodeClass, in the group karpenter.k8s.aws,
// version v1: the same field names, defaults and validation as Karpenter's AWS provider, so a
// user's manifests apply to tenon unchanged.
//
// An EC2NodeClass says how instances are launched for the NodePools that name it: which AMIs
// (an alias such as al2023@latest, or IDs, names, owners, tags, an SSM parameter), subnets,
// security groups and capacity reservations, the node role or instance profile, user data,
// tags, block devices, instance-store policy, instance metadata options, network interfaces
// and the kubelet's settings. Its status is what the provider resolved those selectors to, with
// a condition per part (SubnetsReady, SecurityGroupsReady, AMIsReady, InstanceProfileReady,
// CapacityReservationsReady, PlacementGroupReady, ValidationSucceeded) and Ready over all.
//
// The kind is cluster-scoped. Validation lives in the CRD that controller-gen derives from the
// markers here (run hack/generate.sh after changing them). Hash gives the static hash stamped
// on NodeClaims for drift.
//
// +kubebuilder:object:generate=true
// +groupName=karpenter.k8s.aws
package v1

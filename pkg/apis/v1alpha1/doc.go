// Package v1alpha1 holds NodeOverlay, in the group karpenter.sh, version v1alpha1: a cluster-
// scoped object that changes the price of, or adds extended resources to, the instance types
// its requirements select, before tenon plans with them.
//
// The type is wire-compatible with Karpenter's v1alpha1 NodeOverlay (same JSON names,
// validation and status conditions), so manifests written for Karpenter apply unchanged. How
// overlays merge and conflict is in pkg/overlay.
//
// +kubebuilder:object:generate=true
// +groupName=karpenter.sh
package v1alpha1

// Package nodeoverlay evaluates the cluster's NodeOverlays (karpenter.sh/v1alpha1) against its
// NodePools' instance types, writes each overlay's ValidationSucceeded and Ready conditions,
// and keeps the evaluation in a Store that Decorate applies to every GetInstanceTypes call, so
// provisioning, disruption and interruption all plan with the overlaid prices and capacity.
//
// As in Karpenter, overlays apply only with the NodeOverlay feature gate; a NodePool that has
// not been evaluated yet serves no instance types (GetInstanceTypes fails with an
// overlay.NotEvaluatedError and the caller retries), so nothing is bought at a price the
// overlays would change. The merge rules are in pkg/overlay.
package nodeoverlay

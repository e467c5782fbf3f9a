// Package overlay applies NodeOverlays (karpenter.sh/v1alpha1) to instance types: Evaluate
// merges a cluster's overlays over its NodePools' instance types, once, into an Evaluation
// that reports the invalid and conflicting overlays and applies the rest to a NodePool's
// types on each read. It is pure: no API server, no clock. The controller in
// pkg/controllers/nodeoverlay evaluates on change and writes the overlays' status; the cloud
// provider decorator there applies the evaluation to every GetInstanceTypes, so provisioning,
// disruption and interruption plan with the same prices; tenon plan and tenon simulate
// evaluate the overlays of their manifests the same way.
package overlay

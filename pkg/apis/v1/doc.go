// Package v1 holds tenon's API: NodePool and NodeClaim in the group karpenter.sh, version v1.
//
// The types are wire-compatible with Karpenter's v1 API (same JSON names, defaults and
// validation), so manifests written for Karpenter apply unchanged. The code is tenon's own.
//
// Validation lives in the CRD schema that controller-gen derives from the markers in this
// package (OpenAPI properties plus CEL rules), so the API server rejects bad objects without a
// webhook. Run hack/generate.sh after changing a type or a marker; a test fails when the
// generated files are stale. The rules on core/v1 Taint fields cannot be written as markers
// (the type is not ours, and CEL over an unbounded list is too costly for the API server), so
// hack/crdpatch adds them to the generated CRDs as OpenAPI properties.
//
// Besides the types the package offers the small helpers controllers share: condition
// accessors, disruption budget arithmetic, limit checks and the template hash used for drift.
// None of them reads the clock: time is always an argument.
//
// +kubebuilder:object:generate=true
// +groupName=karpenter.sh
package v1

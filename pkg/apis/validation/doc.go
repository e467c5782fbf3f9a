// Package validation checks custom resources against the CustomResourceDefinitions embedded in
// package crds the way kube-apiserver's custom resource handler does, without running one.
//
// A Validator holds one served version of one CRD. Like the API server it reports unknown
// fields (as strict field validation does), applies the schema's defaults, then runs the
// OpenAPI validation, the metadata and list-type checks and the CEL rules, transition rules
// (those using oldSelf) included when there is an old object, with validation ratcheting on
// update.
//
// Default and Validate are the entry points for callers holding objects: typed ones from
// pkg/apis (NodePool, NodeClaim) or *unstructured.Unstructured of any kind whose CRD is
// embedded. The validators of the embedded CRDs are built once, on first use, and are safe for
// concurrent use.
package validation

// Package apitest checks objects against the generated CustomResourceDefinitions the way the
// API server does, without running one, and holds the tables of valid and invalid NodePools,
// NodeClaims, EC2NodeClasses and Commitments that the tests of the API packages (and test/e2e,
// against a real API server) run.
//
// The checking itself lives in package validation (Validator is its type): it reports unknown
// fields (as kubectl's default strict field validation does), applies defaults, then runs the
// OpenAPI validation, the list-type checks and the CEL rules, transition rules included when
// there is an old object. Cases are plain YAML manifests so that a test against a real API
// server can replay them (create Old, then update to Object; or create Object) and expect the
// same message.
package apitest

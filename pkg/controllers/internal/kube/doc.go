// Package kube holds the small API-server chores tenon's controllers share: patching a
// NodeClaim's metadata and status when they changed, adding and removing finalizers, and
// telling a lost race (a conflict) from a failure.
package kube

// Package v1alpha1 holds tenon's own cluster-scoped objects, in the group tenon.sh, version
// v1alpha1. Commitment declares capacity the user has already bought from the cloud — Savings
// Plans and Reserved Instances — so that tenon decides with the price the next instance really
// adds to the bill (pkg/commitment) rather than its list price.
//
// +kubebuilder:object:generate=true
// +groupName=tenon.sh
package v1alpha1

// Package garbagecollection reconciles the cloud provider's instances with the NodeClaims
// periodically (Options.Interval):
//
//   - an instance that no NodeClaim refers to and that was launched more than
//     Options.GracePeriod ago is deleted. A claim refers to an instance by its provider ID or,
//     while it is being launched and its provider ID is not recorded yet, by its name, which
//     the provider's view of the instance carries (CloudProvider.List). Each pass lists the
//     instances first and then the claims from the API server (Deps.Reader), so the claim of
//     every listed instance is seen however slowly its status is written;
//   - a NodeClaim that was Launched but whose instance the provider no longer has
//     (CloudProvider.Get, asked again after both lists, returns a NodeClaimNotFoundError) is
//     deleted, so that its Node is released and its pods provisioned again.
//
// The collector is a leader-only manager.Runnable; Collect runs one pass and can be called on
// its own.
package garbagecollection

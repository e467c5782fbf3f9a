// Package garbagecollection reconciles the cloud provider's instances with the NodeClaims
// periodically (Options.Interval):
//
//   - an instance that no NodeClaim refers to (by provider ID) and that was launched more than
//     Options.GracePeriod ago is deleted; the grace period keeps a claim being launched, whose
//     provider ID is not recorded yet, from losing its instance;
//   - a NodeClaim that was Launched but whose instance the provider no longer has
//     (CloudProvider.Get returns a NodeClaimNotFoundError) is deleted, so that its Node is
//     released and its pods provisioned again.
//
// The collector is a leader-only manager.Runnable; Collect runs one pass and can be called on
// its own.
package garbagecollection

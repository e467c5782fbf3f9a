// Package lifecycle is the NodeClaim lifecycle controller: it takes a NodeClaim from creation
// to a Ready node, and deletes the ones that never get there.
//
//   - Launch: a claim that is not Launched is handed to CloudProvider.Create; the instance's
//     provider ID, image, capacity and allocatable go into the status and the labels the
//     provider returns (instance type, zone, capacity type, ...) onto the claim. An
//     InsufficientCapacityError marks the offerings it names unavailable for
//     Options.UnavailableOfferingsTTL and deletes the claim, so that the provisioner plans
//     its pods again elsewhere; a NodeClassNotReadyError sets Launched=False and retries with
//     backoff, as does any other error.
//   - Registration: once a Node with the claim's provider ID exists, the claim's labels,
//     annotations and taints are synced onto it, karpenter.sh/unregistered:NoExecute is
//     removed, karpenter.sh/registered=true and the termination finalizer are added, and the
//     claim records the Node's name (Registered=True). Startup taints are the provider's to
//     place at launch; they are never added here, so once removed they stay removed.
//   - Initialization: once the Node is Ready, carries none of the claim's startup taints and
//     no ephemeral taint (not-ready, unreachable, uninitialized), and has a non-zero
//     allocatable quantity of every extended resource the claim asked for or expects (such
//     as nvidia.com/gpu), it is labelled karpenter.sh/initialized=true and the claim becomes
//     Initialized, hence Ready.
//   - Liveness: a claim not Launched within Options.LaunchTimeout, or not Registered within
//     Options.RegistrationTimeout, of its creation is deleted, and its pods are provisioned
//     again.
//
// Every claim gets the termination finalizer on its first reconcile; package termination
// removes it. A claim being deleted is left to that package.
package lifecycle

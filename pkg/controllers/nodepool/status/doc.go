// Package status keeps each NodePool's status and hash up to date:
//
//   - status.nodes counts the NodePool's NodeClaims (launched or not, deleting ones
//     included) and its Nodes that no NodeClaim accounts for; status.resources sums their
//     capacity: a Node's own once its claim is Initialized (or when it has no claim), the
//     claim's expected capacity before that (see Count);
//   - ValidationSucceeded reports the checks the CRD schema makes, run again against the
//     stored object, and those it cannot make (see Validate), once per generation;
//   - NodeClassReady reports whether the cloud provider can serve the NodePool: True when
//     GetInstanceTypes succeeds, False with the reason on a NodeClassNotReadyError;
//   - Ready follows from the two;
//   - the annotations karpenter.sh/nodepool-hash and karpenter.sh/nodepool-hash-version hold
//     NodePool.Hash() and NodePoolHashVersion, so that drift can be told from the NodePool
//     itself.
//
// A NodePool is reconciled when it changes, when one of its NodeClaims or Nodes does, when a
// watched NodeClass changes (Options.NodeClasses), and at least every Options.Resync.
package status

// Package static keeps a static NodePool (spec.replicas set) at its replica count.
//
// For each static NodePool this provider serves (cloudprovider.IsManagedNodePool), the
// controller counts the pool's NodeClaims that are not being deleted. When there are fewer
// than spec.replicas it creates the missing ones from the pool's template, as the provisioner
// writes an empty claim (snapshot.NodeClaim): the template's labels, annotations, taints and
// requirements, with the instance types the pool allows pinned as options, cheapest first.
// It never lets the pool's NodeClaims (deleting ones included, since their nodes still exist)
// exceed limits.nodes; when the limit stops it, a NodeLimitReached warning is recorded on the
// NodePool. When there are more than spec.replicas it deletes the surplus, cheapest to
// remove first (see ToRemove): claims not launched yet, then nodes with fewer pods, nodes
// with a karpenter.sh/do-not-disrupt pod last. Deleting a NodeClaim drains its node through
// the termination controller.
//
// A NodePool that is not Ready (invalid, or its NodeClass not ready) launches nothing until
// it is, as in Karpenter; it still scales down. The counts are read from the API server, not
// the cache, so a claim just created is never created twice. A NodePool is reconciled when its spec changes, when it becomes Ready, when
// one of its NodeClaims changes, and at least every Options.Resync.
//
// The controller runs only with the StaticCapacity feature gate on (default off, as in
// Karpenter). Drift and expiration of static pools' nodes are not handled yet.
package static

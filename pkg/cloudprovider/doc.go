// Package cloudprovider is the boundary between tenon and the machines it buys. A CloudProvider
// launches an instance for a NodeClaim, reports and deletes instances, and tells which instance
// types a NodePool may launch. Errors a caller must act on are typed, with Is and Ignore helpers.
// UnavailableOfferings remembers, for a while, the offerings an InsufficientCapacityError
// named, so that planning skips them.
//
// Implementations: simulated (the default; sells the embedded AWS catalog and registers nodes on
// a real API server, for kwok to keep alive).
package cloudprovider

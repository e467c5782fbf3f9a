// Package provisioning is the loop that buys capacity: pods kube-scheduler marked Unschedulable
// (and pods of nodes being disrupted) are batched, validated, solved against the cluster mirror
// with the solver, and turned into NodeClaims; pods placed on existing nodes or claims in flight
// are nominated. Every pod that cannot be placed gets an event with the solver's reason.
package provisioning

// Package commitment keeps the cluster's Commitments (tenon.sh/v1alpha1) and prices with them.
//
// The controller converts every Commitment on change (and every Resync, as commitments start,
// end and the fleet changes), keeps the valid ones in a Store, writes each object's status
// (Active, its kind, utilization, the instances it covers) and the tenon_commitment_* metrics.
//
// Decorate wraps the cloud provider the loops plan with. Its GetInstanceTypes prices every
// on-demand offering at what one more such instance adds to the bill given what the fleet
// tenon manages already consumes of each commitment (pkg/commitment's Room.Marginal), plus the
// list price / catalog.ReservedPriceDivisor so that, among covered offerings that cost nothing
// more, the smaller still wins. Its Create launches a claim's offerings in that order. Its
// NodePrices gives the disruption loop what removing each node saves on the bill, so that a
// consolidation off covered capacity is taken only when the bill goes down.
//
// The fleet is the NodeClaims tenon manages that are launched and not being deleted: a
// commitment is account-wide, so declare the part of it this cluster may use.
package commitment

// Package commitment prices a fleet the way the bill does when the user has already bought
// capacity: Compute and EC2 Instance Savings Plans and zonal and regional Reserved Instances.
//
// It is pure (no API server, no clock): a Book holds the commitments active at one instant;
// Bill allocates them over a fleet in the order AWS applies them — zonal Reserved Instances,
// then regional ones (size-flexible by normalized units, smallest instances first), then EC2
// Instance Savings Plans, then Compute Savings Plans, each plan to the usage it discounts most
// first — and returns the commitments' fixed part, the overage and what each commitment covers.
// Room is what is left of each commitment after a fleet; Room.Marginal is what one more
// instance adds to the bill on that allocation, the price provisioning and consolidation decide
// with. Removal is what the bill loses when an instance goes, the saving consolidation weighs.
//
// Only on-demand usage is covered: spot and capacity-reserved (ODCR) instances cost their own
// price whatever is committed.
package commitment

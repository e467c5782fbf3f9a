// Package cloud is the simulated cloud as a pure model: instances, the capacity they hold
// (capacity pools, reservations, capacity blocks), the delays of their lives (boot,
// registration, device plugins, shutdown) and the events that take them away (spot
// interruptions, scheduled maintenance, the end of a capacity block).
//
// The model reads no clock, starts no goroutine and talks to no API server: time is an argument
// of every call that can change state, and what happens comes out as Events from Advance. The
// controller (package simulated, which persists the model in SimInstance objects and plays the
// kubelet on a real API server) and the offline virtual-time simulator drive the same model.
// The same inputs give the same outputs; randomness comes from seeds.
//
// # Launch
//
// Launch buys the cheapest usable offering compatible with a request: its instance type, zone,
// capacity type and reservation ID satisfy the requirements, the type's allocatable resources
// hold the requested ones, and the offering has room. Equal prices are ordered by type name,
// then by the offering's order in the catalog. An offering has room when:
//
//   - on-demand or spot: every capacity pool that selects it runs fewer instances than its
//     capacity (offerings no pool selects are unlimited);
//   - reserved: its reservation runs fewer instances than its count, now is inside its window
//     (capacity blocks), and the reservation is open or the requirements name its ID (targeted).
//
// When compatible offerings exist but none has room, Launch returns a
// *cloudprovider.InsufficientCapacityError naming them, in the order they were tried.
// Instances hold their capacity from launch until they are terminated (after the shutdown
// delay).
//
// # Interruptions
//
// With the advisor model, each spot instance draws the time of its interruption notice from an
// exponential distribution whose rate comes from the Spot Instance Advisor's monthly
// interruption-frequency bucket of its type, read as the probability of an interruption within
// 30 days at the middle of the bucket:
//
//	bucket        0 (<5%)  1 (5-10%)  2 (10-15%)  3 (15-20%)  4 (>20%)
//	probability   2.5%     7.5%       12.5%       17.5%       25%
//
// The hazard rate is −ln(1 − p) / 720h, multiplied by the configured scale; types the advisor
// does not know use bucket 2. The draw depends only on the seed and the instance ID, so it
// survives a restart of the controller. A spot interruption notice gives a two-minute deadline
// (SpotNotice), and a rebalance recommendation comes RebalanceLead before the notice (not before
// launch). Scheduled maintenance, when configured, retires any instance after an exponential
// time with the configured mean, with a notice MaintenanceNotice before; a capacity block's
// instances are retired at its end with the same notice. Interruptions can also be injected.
// When the deadline comes the instance begins terminating and an InstanceStopped message
// follows.
package cloud

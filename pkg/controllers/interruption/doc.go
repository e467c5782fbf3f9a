// Package interruption acts on the notices a cloud provider sends before it takes an instance
// away: spot interruptions, scheduled maintenance, instances already stopping, and rebalance
// recommendations. The notices come from a cloudprovider.InterruptionQueue (for AWS an SQS
// queue; the simulated provider keeps its own), which the Controller polls.
//
// For each message the Controller finds the NodeClaim (and Node) whose provider ID it names,
// through the cluster mirror, and:
//
//   - SpotInterruption, ScheduledMaintenance, InstanceStopped: taints the Node
//     karpenter.sh/disrupted:NoSchedule, marks the Node and the NodeClaim for deletion in the
//     mirror and asks the provisioner for a batch, so that replacement capacity for the node's
//     pods is planned at once, annotates the NodeClaim with karpenter.sh/node-termination-time
//     (the notice's deadline less Options.DrainLead, or now for an instance already stopped;
//     an earlier time already there is kept) and deletes it. The termination controller then
//     drains the Node, honouring PodDisruptionBudgets and do-not-disrupt until that time, and
//     deletes the instance. A spot interruption also marks the instance's offering (instance
//     type, zone, spot) unavailable for Options.UnavailableTTL, so that the replacement is
//     bought elsewhere.
//   - RebalanceRecommendation: an event and a metric; with Options.ReplaceOnRebalance, the
//     same as an interruption but without a deadline (the claim's terminationGracePeriod
//     applies).
//   - a message naming an instance no NodeClaim has: counted and acknowledged.
//   - a message with no provider ID or of an unknown kind: logged, counted and acknowledged.
//
// A message is acknowledged (InterruptionQueue.Done) only once what it asks for has been
// written to the API server; a message whose handling failed is left in the queue, which
// delivers it again, and is retried after a growing delay. Every step is idempotent, so a
// message delivered twice (or again after a restart) does no more than once. Messages about
// one instance are handled one at a time; messages about different instances by several
// workers at once.
//
// Metrics (on controller-runtime's registry):
//
//	tenon_interruption_messages_received_total{kind}
//	tenon_interruption_actions_total{kind,action}      action: drain, none, unmanaged, invalid
//	tenon_interruption_message_latency_seconds{kind}   from the notice to the action
//	tenon_interruption_failures_total{kind}            attempts left for redelivery
//	tenon_interruption_receive_errors_total
package interruption

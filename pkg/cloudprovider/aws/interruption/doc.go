// Package interruption is the AWS provider's cloudprovider.InterruptionQueue: an SQS queue that
// EventBridge rules feed with the notices EC2 and AWS Health send about instances.
//
// Queue.Receive reads up to ten messages (ReceiveMessage, with a short wait so that the
// interruption controller's one-second poll is not held up) and parses their EventBridge
// envelopes:
//
//   - "EC2 Spot Instance Interruption Warning" (aws.ec2): a SpotInterruption, due two minutes
//     after the event's time;
//   - "EC2 Instance Rebalance Recommendation" (aws.ec2): a RebalanceRecommendation;
//   - "AWS Health Event" (aws.health) of service EC2 and category scheduledChange: a
//     ScheduledMaintenance of every affected instance, due at the event's start time;
//   - "EC2 Instance State-change Notification" (aws.ec2) to stopping, stopped, shutting-down
//     or terminated: an InstanceStopped (other states are not acted on).
//
// The messages name instance IDs only; one batched DescribeInstances per Receive, restricted
// to instances tagged kubernetes.io/cluster/<cluster>=owned, gives each its zone and so its
// provider ID, aws:///<zone>/<instance-id>. A message that cannot be parsed, that is of no
// kind acted on, or whose instances are not this cluster's is deleted from the queue at once
// and counted; it never stops the queue. A message is otherwise deleted when Done has been
// called for every instance it names; one not done comes back after the visibility timeout,
// so a notice is delivered at least once.
//
// Metrics, on controller-runtime's registry (Karpenter's names):
//
//	karpenter_interruption_received_messages_total{message_type}
//	karpenter_interruption_deleted_messages_total
//	karpenter_interruption_message_queue_duration_seconds
//	tenon_interruption_dropped_messages_total{reason}   reason: malformed, not_actionable, foreign
package interruption

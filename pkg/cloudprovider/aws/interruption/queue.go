package interruption

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
)

// Defaults of Options.
const (
	// DefaultWaitTime is ReceiveMessage's wait: none, as the interruption controller polls
	// every second and a Receive must return promptly.
	DefaultWaitTime = 0
	// DefaultVisibilityTimeout is how long a received message stays hidden before it is
	// delivered again (Karpenter's).
	DefaultVisibilityTimeout = 20 * time.Second
)

// forgetAfter is how long a message no Receive returns any more is remembered.
const forgetAfter = 10 * time.Minute

// describeBatch is how many instance IDs one DescribeInstances filter carries.
const describeBatch = 200

// SQSAPI is the part of *sqs.Client the queue calls.
type SQSAPI interface {
	GetQueueUrl(context.Context, *sqs.GetQueueUrlInput, ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error)
	ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessage(context.Context, *sqs.DeleteMessageInput, ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
}

// EC2API is the part of *ec2.Client the queue calls.
type EC2API interface {
	DescribeInstances(context.Context, *ec2.DescribeInstancesInput, ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error)
}

// Options configure New. SQS, EC2, QueueName and ClusterName are required.
type Options struct {
	SQS SQSAPI
	EC2 EC2API
	// QueueName is the SQS queue's name (its URL is looked up with GetQueueUrl).
	QueueName string
	// ClusterName selects the instances acted on: those tagged kubernetes.io/cluster/<name>=owned.
	ClusterName string
	// WaitTime is ReceiveMessage's long-poll wait, whole seconds up to 20 (default 0).
	WaitTime time.Duration
	// VisibilityTimeout hides a received message from other receives; one not done by then is
	// delivered again (default 20s).
	VisibilityTimeout time.Duration
	// NodeClasses are the NodeClass kinds of the provider (default: EC2NodeClass).
	NodeClasses []schema.GroupKind
	// Clock times the messages' queue duration (default: the real clock).
	Clock clock.Clock
	// Log receives the messages dropped and why (default: discarded).
	Log logr.Logger
}

// Queue is the SQS interruption queue. It is safe for concurrent use.
type Queue struct {
	opts Options

	mu       sync.Mutex
	url      string
	inflight map[string]*inflight // by SQS message ID
}

// inflight is a received message not yet deleted.
type inflight struct {
	handle  string
	at      time.Time       // the event's time
	pending map[string]bool // instance IDs not done yet
	seen    time.Time
}

var _ cloudprovider.InterruptionQueue = (*Queue)(nil)

// New returns a queue; it makes no call (the queue's URL is looked up by the first Receive).
func New(opts Options) (*Queue, error) {
	var missing []string
	if opts.SQS == nil {
		missing = append(missing, "SQS")
	}
	if opts.EC2 == nil {
		missing = append(missing, "EC2")
	}
	if opts.QueueName == "" {
		missing = append(missing, "QueueName")
	}
	if opts.ClusterName == "" {
		missing = append(missing, "ClusterName")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("interruption queue: Options.%s required", strings.Join(missing, ", Options."))
	}
	if opts.WaitTime < 0 || opts.WaitTime > 20*time.Second {
		return nil, fmt.Errorf("interruption queue: WaitTime %v is not between 0 and 20s", opts.WaitTime)
	}
	if opts.VisibilityTimeout <= 0 {
		opts.VisibilityTimeout = DefaultVisibilityTimeout
	}
	if len(opts.NodeClasses) == 0 {
		opts.NodeClasses = []schema.GroupKind{awsv1.EC2NodeClassGroupKind}
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Log.GetSink() == nil {
		opts.Log = logr.Discard()
	}
	return &Queue{opts: opts, inflight: map[string]*inflight{}}, nil
}

// NodeClasses returns the NodeClass kinds of the provider.
func (q *Queue) NodeClasses() []schema.GroupKind { return q.opts.NodeClasses }

// URL returns the queue's URL, looking it up the first time.
func (q *Queue) URL(ctx context.Context) (string, error) {
	q.mu.Lock()
	url := q.url
	q.mu.Unlock()
	if url != "" {
		return url, nil
	}
	out, err := q.opts.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(q.opts.QueueName)})
	if err != nil {
		if queueMissing(err) {
			return "", fmt.Errorf("interruption queue %q does not exist in this account and region: create it (and its EventBridge rules) or fix --interruption-queue", q.opts.QueueName)
		}
		return "", fmt.Errorf("looking up interruption queue %q: %w", q.opts.QueueName, err)
	}
	q.mu.Lock()
	q.url = aws.ToString(out.QueueUrl)
	q.mu.Unlock()
	return aws.ToString(out.QueueUrl), nil
}

// queueMissing reports whether SQS said the queue does not exist.
func queueMissing(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && (ae.ErrorCode() == "QueueDoesNotExist" || ae.ErrorCode() == "AWS.SimpleQueueService.NonExistentQueue")
}

// received is one SQS message of a Receive and what it parsed to.
type received struct {
	msg    sqstypes.Message
	notice *notice
}

// Receive returns the notices of the messages available now, one per instance of this
// cluster each message names. Messages it cannot act on are deleted from the queue.
func (q *Queue) Receive(ctx context.Context) ([]cloudprovider.InterruptionMessage, error) {
	url, err := q.URL(ctx)
	if err != nil {
		return nil, err
	}
	out, err := q.opts.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(url), MaxNumberOfMessages: 10,
		WaitTimeSeconds:             int32(q.opts.WaitTime / time.Second),
		VisibilityTimeout:           int32((q.opts.VisibilityTimeout + time.Second - 1) / time.Second),
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameSentTimestamp},
	})
	if err != nil {
		if queueMissing(err) {
			// Deleted (and perhaps made again with a new URL): look it up again next time.
			q.mu.Lock()
			q.url = ""
			q.mu.Unlock()
		}
		return nil, fmt.Errorf("receiving from interruption queue %q: %w", q.opts.QueueName, err)
	}
	var actionable []received
	var ids []string
	for _, m := range out.Messages {
		n, err := parse(aws.ToString(m.Body))
		first := q.firstSight(aws.ToString(m.MessageId))
		switch {
		case err != nil:
			q.opts.Log.Error(err, "deleting a malformed interruption message", "messageID", aws.ToString(m.MessageId))
			q.drop(ctx, url, m, DropMalformed, first, "")
		case n == nil:
			q.drop(ctx, url, m, DropNotActionable, first, typeNotActioned)
		default:
			if first {
				Received.WithLabelValues(n.typ).Inc()
			}
			actionable = append(actionable, received{msg: m, notice: n})
			ids = append(ids, n.instances...)
		}
	}
	if len(actionable) == 0 {
		return nil, nil
	}
	zones, err := q.zones(ctx, ids)
	if err != nil {
		// The messages come back after their visibility timeout.
		return nil, err
	}
	now := q.opts.Clock.Now()
	var msgs []cloudprovider.InterruptionMessage
	for _, r := range actionable {
		id := aws.ToString(r.msg.MessageId)
		var ours []string
		for _, inst := range r.notice.instances {
			if _, ok := zones[inst]; ok && !slices.Contains(ours, inst) {
				ours = append(ours, inst)
			}
		}
		pending := q.track(id, aws.ToString(r.msg.ReceiptHandle), r.notice.at, ours, now)
		if len(pending) == 0 {
			q.opts.Log.V(1).Info("deleting an interruption message about instances of no NodeClaim of this cluster", "messageID", id, "instances", r.notice.instances)
			q.drop(ctx, url, r.msg, DropForeign, false, "")
			continue
		}
		for _, inst := range pending {
			msgs = append(msgs, cloudprovider.InterruptionMessage{
				ID: id + "/" + inst, Kind: r.notice.kind, ProviderID: "aws:///" + zones[inst] + "/" + inst,
				Deadline: r.notice.deadline, Received: r.notice.at,
			})
		}
	}
	q.forget(now)
	return msgs, nil
}

// firstSight reports whether a message ID was not seen before (for the received metric).
func (q *Queue) firstSight(id string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	_, seen := q.inflight[id]
	return !seen
}

// track records a received message with the instances it concerns of this cluster, and
// returns those not done yet: on a redelivery the ones done before stay done.
func (q *Queue) track(id, handle string, at time.Time, instances []string, now time.Time) []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	f := q.inflight[id]
	if f == nil {
		f = &inflight{at: at, pending: map[string]bool{}}
		for _, i := range instances {
			f.pending[i] = true
		}
		q.inflight[id] = f
	}
	f.handle, f.seen = handle, now
	var out []string
	for _, i := range instances {
		if f.pending[i] {
			out = append(out, i)
		}
	}
	if len(out) == 0 && len(f.pending) > 0 {
		// Its instances are not this cluster's any more; nothing is left to do.
		clear(f.pending)
	}
	return out
}

// drop deletes a message that is not delivered, and counts it.
func (q *Queue) drop(ctx context.Context, url string, m sqstypes.Message, reason string, first bool, typ string) {
	if first && typ != "" {
		Received.WithLabelValues(typ).Inc()
	}
	Dropped.WithLabelValues(reason).Inc()
	if err := q.delete(ctx, url, aws.ToString(m.ReceiptHandle)); err != nil {
		q.opts.Log.Error(err, "deleting an interruption message; it will be received again", "messageID", aws.ToString(m.MessageId))
		return
	}
	q.mu.Lock()
	delete(q.inflight, aws.ToString(m.MessageId))
	q.mu.Unlock()
}

func (q *Queue) delete(ctx context.Context, url, handle string) error {
	if _, err := q.opts.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: aws.String(handle)}); err != nil {
		return fmt.Errorf("deleting a message from interruption queue %q: %w", q.opts.QueueName, err)
	}
	Deleted.Inc()
	return nil
}

// Done marks one notice handled; the SQS message is deleted once every instance it names is
// done. Done of a notice whose message is already deleted does nothing.
func (q *Queue) Done(ctx context.Context, id string) error {
	msgID, inst, ok := strings.Cut(id, "/")
	if !ok || msgID == "" || inst == "" {
		return fmt.Errorf("interruption queue: %q is not the ID of a message Receive returned", id)
	}
	q.mu.Lock()
	f := q.inflight[msgID]
	if f == nil {
		q.mu.Unlock()
		return nil
	}
	delete(f.pending, inst)
	left, handle, at := len(f.pending), f.handle, f.at
	q.mu.Unlock()
	if left > 0 {
		return nil
	}
	url, err := q.URL(ctx)
	if err != nil {
		return err
	}
	if err := q.delete(ctx, url, handle); err != nil {
		return err
	}
	QueueDuration.Observe(max(0, q.opts.Clock.Since(at).Seconds()))
	q.mu.Lock()
	delete(q.inflight, msgID)
	q.mu.Unlock()
	return nil
}

// forget drops messages no Receive has returned for a while (deleted by someone else, or
// past the queue's retention).
func (q *Queue) forget(now time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for id, f := range q.inflight {
		if now.Sub(f.seen) > forgetAfter {
			delete(q.inflight, id)
		}
	}
}

// zones finds the zones of the instances that are this cluster's, by ID, in batched
// DescribeInstances calls.
func (q *Queue) zones(ctx context.Context, ids []string) (map[string]string, error) {
	slices.Sort(ids)
	ids = slices.Compact(ids)
	out := map[string]string{}
	for start := 0; start < len(ids); start += describeBatch {
		batch := ids[start:min(start+describeBatch, len(ids))]
		in := &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
			{Name: aws.String("instance-id"), Values: batch},
			{Name: aws.String("tag:kubernetes.io/cluster/" + q.opts.ClusterName), Values: []string{"owned"}},
		}}
		for p := ec2.NewDescribeInstancesPaginator(q.opts.EC2, in); p.HasMorePages(); {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("describing the instances of interruption messages: %w", err)
			}
			for _, r := range page.Reservations {
				for _, i := range r.Instances {
					if i.Placement != nil {
						out[aws.ToString(i.InstanceId)] = aws.ToString(i.Placement.AvailabilityZone)
					}
				}
			}
		}
	}
	return out, nil
}

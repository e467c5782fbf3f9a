package interruption

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
)

// receive calls Receive, failing t on error.
func receive(t *testing.T, q *Queue) []cloudprovider.InterruptionMessage {
	t.Helper()
	msgs, err := q.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

func done(t *testing.T, q *Queue, msgs ...cloudprovider.InterruptionMessage) {
	t.Helper()
	for _, m := range msgs {
		if err := q.Done(ctx, m.ID); err != nil {
			t.Fatal(err)
		}
	}
}

// Each kind the endpoint publishes arrives as its notice, with the instance's provider ID and
// the deadline its kind has, and is deleted once done.
func TestEachKindArrivesWithItsProviderIDAndDeadline(t *testing.T) {
	e := newEndpoint(t, nil)
	q := e.queue(t)
	ids := e.launch(t, cluster, 4)
	for _, tc := range []struct {
		kind     string
		want     cloudprovider.InterruptionKind
		typ      string
		deadline time.Duration // after the event; -1 none, 0 the Health event's start time
	}{
		{awsapi.DetailSpotInterruption, cloudprovider.SpotInterruption, typeSpot, 2 * time.Minute},
		{awsapi.DetailRebalance, cloudprovider.RebalanceRecommendation, typeRebalance, -1},
		{awsapi.DetailHealth, cloudprovider.ScheduledMaintenance, typeScheduled, 0},
	} {
		id := ids[0]
		ids = ids[1:]
		before := testutil.ToFloat64(Received.WithLabelValues(tc.typ))
		if err := e.s.Interrupt(id, tc.kind); err != nil {
			t.Fatal(err)
		}
		var msgs []cloudprovider.InterruptionMessage
		for _, m := range receive(t, q) {
			if m.Kind == tc.want {
				msgs = append(msgs, m)
			}
		}
		if len(msgs) != 1 {
			t.Fatalf("%s: %d %s messages, want 1", tc.kind, len(msgs), tc.want)
		}
		m := msgs[0]
		if want := "aws:///" + e.zoneOf(t, id) + "/" + id; m.ProviderID != want {
			t.Errorf("%s: provider ID %s, want %s", tc.kind, m.ProviderID, want)
		}
		if !m.Received.Equal(e.clock.Now().Truncate(time.Second)) {
			t.Errorf("%s: received %v, want the event's time %v", tc.kind, m.Received, e.clock.Now())
		}
		switch {
		case tc.deadline < 0 && !m.Deadline.IsZero():
			t.Errorf("%s: deadline %v, want none", tc.kind, m.Deadline)
		case tc.deadline == 2*time.Minute && !m.Deadline.Equal(m.Received.Add(2*time.Minute)):
			t.Errorf("%s: deadline %v, want two minutes after %v", tc.kind, m.Deadline, m.Received)
		case tc.deadline == 0 && (m.Deadline.IsZero() || m.Deadline.Before(m.Received)):
			t.Errorf("%s: deadline %v, want the event's scheduled start", tc.kind, m.Deadline)
		}
		if got := testutil.ToFloat64(Received.WithLabelValues(tc.typ)) - before; got != 1 {
			t.Errorf("%s: received{%s} rose by %v, want 1", tc.kind, tc.typ, got)
		}
		done(t, q, m)
		e.clock.Step(time.Second)
	}
	// The interrupted spot instance is reclaimed two minutes on: the state changes arrive too.
	e.clock.Step(3 * time.Minute)
	e.s.Sync()
	var kinds []cloudprovider.InterruptionKind
	for range 5 {
		msgs := receive(t, q)
		for _, m := range msgs {
			kinds = append(kinds, m.Kind)
		}
		done(t, q, msgs...)
	}
	if !slices.Contains(kinds, cloudprovider.InstanceStopped) {
		t.Errorf("no InstanceStopped after the reclaim: %v", kinds)
	}
	if n := e.left(); n != 0 {
		t.Errorf("%d messages left after every one was done: %v", n, e.s.QueueMessages(queueName))
	}
}

// A Health event naming several instances gives one notice per instance of this cluster; the
// message is deleted only when every one is done, and one not done comes back alone.
func TestHealthEventWithSeveralInstances(t *testing.T) {
	e := newEndpoint(t, nil)
	q := e.queue(t)
	ours := e.launch(t, cluster, 2)
	foreign := e.launch(t, "other", 1)
	e.send(t, health(epoch, append(ours, foreign[0], "i-0000000000000dead")...))
	msgs := receive(t, q)
	if len(msgs) != 2 {
		t.Fatalf("%d notices, want 2 (the other cluster's and the unknown instance left out): %+v", len(msgs), msgs)
	}
	for i, m := range msgs {
		if m.Kind != cloudprovider.ScheduledMaintenance || !strings.HasSuffix(m.ProviderID, "/"+ours[i]) || !m.Deadline.Equal(epoch.Add(time.Hour)) {
			t.Errorf("notice %+v", m)
		}
	}
	done(t, q, msgs[0])
	if e.left() != 1 {
		t.Fatal("the message was deleted before every instance was done")
	}
	e.clock.Step(DefaultVisibilityTimeout + time.Second)
	again := receive(t, q)
	if len(again) != 1 || again[0].ID != msgs[1].ID {
		t.Fatalf("redelivered %+v, want only %s", again, msgs[1].ID)
	}
	deleted := testutil.ToFloat64(Deleted)
	done(t, q, again[0])
	if e.left() != 0 || testutil.ToFloat64(Deleted)-deleted != 1 {
		t.Errorf("%d messages left, %v deleted", e.left(), testutil.ToFloat64(Deleted)-deleted)
	}
	if err := q.Done(ctx, again[0].ID); err != nil {
		t.Errorf("Done twice: %v", err)
	}
}

func health(start time.Time, instances ...string) string {
	var entities []string
	for _, i := range instances {
		entities = append(entities, fmt.Sprintf(`{"entityValue":%q}`, i))
	}
	return fmt.Sprintf(`{"version":"0","id":"7bf73129-1428-4cd3-a780-95db273d1602","detail-type":"AWS Health Event","source":"aws.health","account":"111122223333","time":%q,"region":"us-east-1","resources":[],"detail":{"eventArn":"arn:aws:health:us-east-1::event/EC2/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED/x","service":"EC2","eventTypeCode":"AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED","eventTypeCategory":"scheduledChange","startTime":%q,"affectedEntities":[%s]}}`,
		start.Format(time.RFC3339), start.Add(time.Hour).Format(time.RFC1123), strings.Join(entities, ","))
}

func event(detailType, source, detail string) string {
	return fmt.Sprintf(`{"version":"0","id":"x","detail-type":%q,"source":%q,"account":"111122223333","time":%q,"region":"us-east-1","resources":[],"detail":%s}`,
		detailType, source, epoch.Format(time.RFC3339), detail)
}

// Messages that cannot be parsed, that are of no kind acted on, or that name another
// cluster's instance are deleted and counted, and the good ones among them still arrive.
func TestBadAndForeignMessagesAreDeletedAndCounted(t *testing.T) {
	e := newEndpoint(t, nil)
	q := e.queue(t)
	ours := e.launch(t, cluster, 1)[0]
	foreign := e.launch(t, "other", 1)[0]
	bad := []struct{ body, reason string }{
		{"this is not JSON", DropMalformed},
		{"\u0001\u00ff\u7f3a\ufffd binary\u0002garbage", DropMalformed},
		{`{"version":"0","detail-type":"EC2 Spot Instance Interruption Warning","source":"aws.ec2","time":"yesterday","detail":{"instance-id":"i-1"}}`, DropMalformed},
		{event(DetailSpotInterruption, SourceEC2, `{"instance-action":"terminate"}`), DropMalformed},
		{event(DetailStateChange, SourceEC2, `"not an object"`), DropMalformed},
		{event("EC2 AMI State Change", SourceEC2, `{"ImageId":"ami-1"}`), DropNotActionable},
		{event(DetailStateChange, SourceEC2, fmt.Sprintf(`{"instance-id":%q,"state":"running"}`, ours)), DropNotActionable},
		{event(DetailHealth, SourceHealth, `{"service":"RDS","eventTypeCategory":"scheduledChange","affectedEntities":[{"entityValue":"db-1"}]}`), DropNotActionable},
		{event(DetailSpotInterruption, SourceEC2, fmt.Sprintf(`{"instance-id":%q,"instance-action":"terminate"}`, foreign)), DropForeign},
	}
	before := map[string]float64{}
	for _, r := range []string{DropMalformed, DropNotActionable, DropForeign} {
		before[r] = testutil.ToFloat64(Dropped.WithLabelValues(r))
	}
	for _, b := range bad {
		e.send(t, b.body)
	}
	e.send(t, event(DetailStateChange, SourceEC2, fmt.Sprintf(`{"instance-id":%q,"state":"stopping"}`, ours)))
	var got []cloudprovider.InterruptionMessage
	for range 3 {
		got = append(got, receive(t, q)...)
	}
	if len(got) != 1 || got[0].Kind != cloudprovider.InstanceStopped || !strings.HasSuffix(got[0].ProviderID, "/"+ours) || !got[0].Deadline.IsZero() {
		t.Fatalf("notices %+v, want the one stopping instance", got)
	}
	if e.left() != 1 {
		t.Errorf("%d messages left, want only the good one in flight: %v", e.left(), e.s.QueueMessages(queueName))
	}
	want := map[string]float64{}
	for _, b := range bad {
		want[b.reason]++
	}
	for r, n := range want {
		if d := testutil.ToFloat64(Dropped.WithLabelValues(r)) - before[r]; d != n {
			t.Errorf("dropped{%s} rose by %v, want %v", r, d, n)
		}
	}
}

// A notice not marked done is delivered again after the visibility timeout, with the same ID.
func TestUndoneNoticesAreDeliveredAgain(t *testing.T) {
	e := newEndpoint(t, nil)
	q := e.queue(t)
	id := e.launch(t, cluster, 1)[0]
	if err := e.s.Interrupt(id, awsapi.DetailSpotInterruption); err != nil {
		t.Fatal(err)
	}
	first := receive(t, q)
	if len(first) != 1 {
		t.Fatalf("%d notices", len(first))
	}
	if again := receive(t, q); len(again) != 0 {
		t.Fatalf("redelivered within the visibility timeout: %+v", again)
	}
	received := testutil.ToFloat64(Received.WithLabelValues(typeSpot))
	e.clock.Step(DefaultVisibilityTimeout + time.Second)
	again := receive(t, q)
	if len(again) != 1 || again[0] != first[0] {
		t.Fatalf("after the visibility timeout %+v, want %+v", again, first)
	}
	if testutil.ToFloat64(Received.WithLabelValues(typeSpot)) != received {
		t.Error("a redelivery was counted as a new message")
	}
	done(t, q, again...)
	if e.left() != 0 {
		t.Error("not deleted once done")
	}
}

// A queue that does not exist is a clear error naming it; so is a failing DescribeInstances,
// and the messages stay for a later receive.
func TestQueueErrors(t *testing.T) {
	e := newEndpoint(t, nil)
	q, err := New(Options{SQS: e.sqs, EC2: e.ec2, QueueName: "no-such-queue", ClusterName: cluster})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Receive(ctx); err == nil || !strings.Contains(err.Error(), `interruption queue "no-such-queue" does not exist`) {
		t.Errorf("missing queue: %v", err)
	}
	if _, err := New(Options{SQS: e.sqs, QueueName: "q"}); err == nil || !strings.Contains(err.Error(), "Options.EC2, Options.ClusterName required") {
		t.Errorf("New without EC2 and ClusterName: %v", err)
	}
	q = e.queue(t)
	if got := q.NodeClasses(); len(got) != 1 || got[0] != awsv1.EC2NodeClassGroupKind {
		t.Errorf("node classes %v", got)
	}
	id := e.launch(t, cluster, 1)[0]
	if err := e.s.Interrupt(id, awsapi.DetailRebalance); err != nil {
		t.Fatal(err)
	}
	e.s.InjectFault(awsapi.Fault{Service: awsapi.ServiceEC2, Action: "DescribeInstances", Kind: awsapi.FaultServerError})
	if _, err := q.Receive(ctx); err == nil || !strings.Contains(err.Error(), "describing the instances") {
		t.Errorf("failing DescribeInstances: %v", err)
	}
	e.s.ClearFaults()
	e.clock.Step(DefaultVisibilityTimeout + time.Second)
	if msgs := receive(t, q); len(msgs) != 1 || msgs[0].Kind != cloudprovider.RebalanceRecommendation {
		t.Errorf("after the fault: %+v", msgs)
	}
	if err := q.Done(ctx, "no-slash"); err == nil {
		t.Error("Done of a malformed ID succeeded")
	}
}

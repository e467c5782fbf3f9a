package awsapi

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
)

// launch launches n on-demand m5.large instances in us-east-1a and returns their IDs.
func (e *env) launch(t *testing.T, capacityType ec2types.DefaultTargetCapacityType, n int32) []string {
	t.Helper()
	sn := e.subnets(t)
	if _, err := e.ec2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{"tenon-lt"}}); err != nil {
		e.template(t, "tenon-lt", "x86_64", nil)
	}
	out, err := e.ec2.CreateFleet(ctx, fleet("tenon-lt", capacityType, n, ovr("m5.large", sn["us-east-1a"]), ovr("m5.large", sn["us-east-1b"])))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, fi := range out.Instances {
		ids = append(ids, fi.InstanceIds...)
	}
	if len(ids) != int(n) {
		t.Fatalf("launched %d of %d: %+v", len(ids), n, out.Errors)
	}
	return ids
}

func TestDescribeInstancesFiltersPaginatesAndTerminateIsIdempotent(t *testing.T) {
	e := newEnv(t, Options{Delays: cloud.Delays{Shutdown: time.Minute}})
	ids := e.launch(t, ec2types.DefaultTargetCapacityTypeOnDemand, 7)
	if _, err := e.ec2.CreateTags(ctx, &ec2.CreateTagsInput{Resources: ids[:2], Tags: []ec2types.Tag{{Key: aws.String("karpenter.sh/managed-by"), Value: aws.String("tenon")}}}); err != nil {
		t.Fatal(err)
	}
	clusterFilter := []ec2types.Filter{
		{Name: aws.String("tag-key"), Values: []string{"karpenter.sh/nodepool"}},
		{Name: aws.String("tag:kubernetes.io/cluster/tenon"), Values: []string{"owned"}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running", "stopping", "stopped", "shutting-down"}},
	}
	p := ec2.NewDescribeInstancesPaginator(e.ec2, &ec2.DescribeInstancesInput{Filters: clusterFilter, MaxResults: aws.Int32(5)})
	seen, pages := map[string]bool{}, 0
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, r := range out.Reservations {
			for _, inst := range r.Instances {
				seen[aws.ToString(inst.InstanceId)] = true
			}
		}
	}
	if len(seen) != 7 || pages != 2 {
		t.Fatalf("%d instances in %d pages, want 7 in 2", len(seen), pages)
	}
	tagged, err := e.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{{Name: aws.String("tag:karpenter.sh/managed-by"), Values: []string{"tenon"}}}})
	if err != nil || len(tagged.Reservations) != 2 {
		t.Fatalf("CreateTags then filter: %d (%v)", len(tagged.Reservations), err)
	}
	byID, err := e.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{{Name: aws.String("instance-id"), Values: ids[3:4]}}})
	if err != nil || len(byID.Reservations) != 1 {
		t.Fatalf("instance-id filter: %d (%v)", len(byID.Reservations), err)
	}
	_, err = e.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{"i-0000000000000000f"}})
	wantCode(t, err, "InvalidInstanceID.NotFound")

	term, err := e.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids[:3]})
	if err != nil || len(term.TerminatingInstances) != 3 || term.TerminatingInstances[0].CurrentState.Name != ec2types.InstanceStateNameShuttingDown {
		t.Fatalf("terminate: %+v (%v)", term, err)
	}
	again, err := e.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids[:1]})
	if err != nil || again.TerminatingInstances[0].PreviousState.Name != ec2types.InstanceStateNameShuttingDown {
		t.Fatalf("terminate again: %+v (%v)", again, err)
	}
	e.advance(time.Minute)
	done, _ := e.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{{Name: aws.String("instance-state-name"), Values: []string{"terminated"}}}})
	if len(done.Reservations) != 3 {
		t.Fatalf("%d terminated after the shutdown delay", len(done.Reservations))
	}
	if st := done.Reservations[0].Instances[0].StateReason; st == nil || aws.ToString(st.Code) != "Client.UserInitiatedShutdown" {
		t.Errorf("state reason %+v", st)
	}
	live, _ := e.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: clusterFilter})
	if len(live.Reservations) != 4 {
		t.Errorf("%d live instances, want 4", len(live.Reservations))
	}
	// Terminated instances stay visible for an hour, then are gone.
	e.advance(time.Hour)
	_, err = e.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids[:1]})
	wantCode(t, err, "InvalidInstanceID.NotFound")
}

// receiveAll reads every visible message of a queue as EventBridge envelopes, deleting them.
func (e *env) receiveAll(t *testing.T, name string) []map[string]any {
	t.Helper()
	url, err := e.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for {
		got, err := e.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url.QueueUrl, MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Messages) == 0 {
			return out
		}
		for _, m := range got.Messages {
			var doc map[string]any
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &doc); err != nil {
				t.Fatalf("message %q: %v", aws.ToString(m.Body), err)
			}
			out = append(out, doc)
			if _, err := e.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: url.QueueUrl, ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestInterruptionsReachTheQueueAsEventBridgeMessages(t *testing.T) {
	e := newEnv(t, Options{InterruptionQueue: "tenon-interruption", Delays: cloud.Delays{Shutdown: 30 * time.Second}, Interruptions: cloud.Interruptions{MaintenanceNotice: time.Hour}})
	spot := e.launch(t, ec2types.DefaultTargetCapacityTypeSpot, 1)[0]
	od := e.launch(t, ec2types.DefaultTargetCapacityTypeOnDemand, 1)[0]
	if err := e.s.Interrupt(spot, string(cloudprovider.RebalanceRecommendation)); err != nil {
		t.Fatal(err)
	}
	if err := e.s.Interrupt(spot, DetailSpotInterruption); err != nil {
		t.Fatal(err)
	}
	if err := e.s.Interrupt(od, string(cloudprovider.ScheduledMaintenance)); err != nil {
		t.Fatal(err)
	}
	msgs := e.receiveAll(t, "tenon-interruption")
	if len(msgs) != 3 {
		t.Fatalf("%d messages: %v", len(msgs), msgs)
	}
	byType := map[string]map[string]any{}
	for _, m := range msgs {
		byType[m["detail-type"].(string)] = m
		if m["version"] != "0" || m["account"] != DefaultAccount || m["region"] != "us-east-1" || m["id"] == "" || m["time"] == "" {
			t.Errorf("envelope %v", m)
		}
	}
	warning := byType[DetailSpotInterruption]
	if warning["source"] != "aws.ec2" || warning["detail"].(map[string]any)["instance-id"] != spot || warning["detail"].(map[string]any)["instance-action"] != "terminate" {
		t.Errorf("spot warning %v", warning)
	}
	if r := byType[DetailRebalance]; r["source"] != "aws.ec2" || r["detail"].(map[string]any)["instance-id"] != spot {
		t.Errorf("rebalance %v", r)
	}
	health := byType[DetailHealth]
	detail := health["detail"].(map[string]any)
	if health["source"] != "aws.health" || detail["service"] != "EC2" || detail["eventTypeCategory"] != "scheduledChange" ||
		detail["affectedEntities"].([]any)[0].(map[string]any)["entityValue"] != od {
		t.Errorf("health event %v", health)
	}

	// Two minutes after the warning the spot instance goes: state changes follow.
	e.advance(2 * time.Minute)
	e.advance(30 * time.Second)
	var states []string
	for _, m := range e.receiveAll(t, "tenon-interruption") {
		if m["detail-type"] != DetailStateChange || m["detail"].(map[string]any)["instance-id"] != spot {
			t.Fatalf("unexpected %v", m)
		}
		states = append(states, m["detail"].(map[string]any)["state"].(string))
	}
	if len(states) != 2 || states[0] != "shutting-down" || states[1] != "terminated" {
		t.Fatalf("state changes %v", states)
	}
	desc, _ := e.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{spot}})
	if r := desc.Reservations[0].Instances[0].StateReason; r == nil || aws.ToString(r.Code) != "Server.SpotInstanceTermination" {
		t.Errorf("state reason %+v", r)
	}
	if err := e.s.Interrupt(od, DetailSpotInterruption); err == nil {
		t.Error("a spot interruption of an on-demand instance was accepted")
	}
}

func TestOnInstanceHearsEachInstanceRegisterAndGo(t *testing.T) {
	var mu sync.Mutex
	var got []InstanceEvent
	e := newEnv(t, Options{
		Delays: cloud.Delays{Boot: 30 * time.Second, Registration: 15 * time.Second, DevicePlugin: 10 * time.Second, Shutdown: 20 * time.Second},
	})
	// The callback calls back into the endpoint over HTTP, as a Node registrar that looks the
	// instance up would; that must not deadlock.
	e.s.opts.OnInstance = func(ev InstanceEvent) {
		if _, err := e.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{ev.Instance.ID}}); err != nil {
			t.Errorf("describing from the callback: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		got = append(got, ev)
	}
	id := e.launch(t, ec2types.DefaultTargetCapacityTypeOnDemand, 1)[0]
	e.advance(45 * time.Second)
	if _, err := e.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}}); err != nil {
		t.Fatal(err)
	}
	e.advance(20 * time.Second)
	mu.Lock()
	defer mu.Unlock()
	var kinds []InstanceEventKind
	for _, ev := range got {
		kinds = append(kinds, ev.Kind)
		if ev.Instance.ID != id || ev.Instance.Type.Name != "m5.large" || ev.Instance.Tags["karpenter.sh/nodeclaim"] != "default-abc12" {
			t.Errorf("event %+v", ev)
		}
	}
	want := []InstanceEventKind{InstanceRunning, InstanceRegistered, InstanceTerminating, InstanceTerminated}
	if len(kinds) != len(want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("events %v, want %v", kinds, want)
		}
	}
	reg := got[1]
	if reg.Instance.ProviderID != "aws:///"+reg.Instance.Zone+"/"+id || reg.Instance.Labels["node.kubernetes.io/instance-type"] != "m5.large" || !reg.At.Equal(epoch.Add(45*time.Second)) {
		t.Errorf("registration %+v", reg)
	}
}

func TestInjectedFaultsLookLikeTheRealServicesAndTheSDKRetriesThem(t *testing.T) {
	e := newEnv(t, Options{})
	// Two throttles, then success: the SDK's retryer absorbs them.
	e.s.InjectFault(Fault{Service: ServiceEC2, Action: "DescribeAvailabilityZones", Kind: FaultThrottle, Count: 2})
	if _, err := e.ec2.DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{}); err != nil {
		t.Fatalf("after two throttles: %v", err)
	}
	if hits := e.s.FaultHits(); hits[0] != 2 {
		t.Fatalf("fault hits %v", hits)
	}
	e.s.ClearFaults()
	// Throttled on every attempt: the SDK gives up with the service's code.
	e.s.InjectFault(Fault{Service: ServiceEC2, Kind: FaultThrottle})
	_, err := e.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{})
	wantCode(t, err, "RequestLimitExceeded")
	if hits := e.s.FaultHits(); hits[0] != 3 {
		t.Errorf("%d attempts, want the standard retryer's 3", hits[0])
	}
	e.s.ClearFaults()
	e.s.InjectFault(Fault{Service: ServiceIAM, Kind: FaultThrottle})
	_, err = e.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String("x")})
	wantCode(t, err, "Throttling")
	e.s.ClearFaults()
	e.s.InjectFault(Fault{Service: ServiceSQS, Kind: FaultThrottle})
	_, err = e.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("x")})
	wantCode(t, err, "RequestThrottled")
	e.s.ClearFaults()
	// Server errors are retried too.
	e.s.InjectFault(Fault{Service: ServiceEC2, Kind: FaultServerError, Count: 1})
	if _, err := e.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{}); err != nil {
		t.Fatalf("after one 500: %v", err)
	}
	e.s.ClearFaults()
	e.s.InjectFault(Fault{Service: ServiceSSM, Kind: FaultServerError})
	_, err = e.ssm.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String("/aws/service/bottlerocket/aws-k8s-1.37/x86_64/latest/image_id")})
	wantCode(t, err, "InternalServerError")
	e.s.ClearFaults()
	// A slow response outlives a caller's deadline.
	e.s.InjectFault(Fault{Service: ServiceEC2, Action: "DescribeImages", Kind: FaultSlow, Delay: 2 * time.Second})
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = e.ec2.DescribeImages(short, &ec2.DescribeImagesInput{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow response: %v", err)
	}
}

func TestStartServesTheSDKOnLoopback(t *testing.T) {
	c, cancel := context.WithCancel(ctx)
	defer cancel()
	s, url, err := Start(c, "127.0.0.1:0", Options{Tick: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(s.Region()), config.WithBaseEndpoint(url),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKID", "secret", "")))
	if err != nil {
		t.Fatal(err)
	}
	cfg.HTTPClient = HTTPClient{} // buffered bodies: see its comment
	out, err := ec2.NewFromConfig(cfg).DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{})
	if err != nil || len(out.AvailabilityZones) != 6 {
		t.Fatalf("%d zones (%v)", len(out.AvailabilityZones), err)
	}
}

package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/interruption"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
	disruptionctrl "github.com/tenon-sh/tenon/pkg/controllers/disruption"
	"github.com/tenon-sh/tenon/pkg/operator"
)

// awsDQueue is the SQS interruption queue the endpoint feeds in these tests.
const awsDQueue = "tenon-interruptions"

// awsDEnv is an awsEnv whose operator runs with the given options, whose EC2NodeClasses are
// resolved again every second (so a new AMI behind an alias shows within seconds, not the
// default minute), and, when queue is set, with the endpoint's SQS interruption queue of
// that name; sqs is a client of the endpoint built as the provider builds its own.
type awsDEnv struct {
	*awsEnv
	sqs      *sqs.Client
	queueURL string
}

func awsDStart(t *testing.T, opts operator.Options, queue string) *awsDEnv {
	t.Helper()
	e := launchAWSEnv(t, awsEnvOptions{Operator: opts, InterruptionQueue: queue, NodeClassRequeueInterval: time.Second})
	d := &awsDEnv{awsEnv: e, sqs: sqs.NewFromConfig(e.sdk)}
	if queue != "" {
		out, err := d.sqs.GetQueueUrl(e.ctx, &sqs.GetQueueUrlInput{QueueName: awssdk.String(queue)})
		if err != nil {
			t.Fatal(err)
		}
		d.queueURL = awssdk.ToString(out.QueueUrl)
	}
	return d
}

// awsDOptions are disruptionOptions with the provider's drift verdicts reused for a second
// only (the default is a minute).
func awsDOptions() operator.Options {
	o := disruptionOptions()
	o.Disruption.DriftCheckInterval = time.Second
	return o
}

// awsDPool is a NodePool of the families on the EC2NodeClass called class, on demand.
func awsDPool(name, class string, families []string, mutate ...func(*apisv1.NodePool)) *apisv1.NodePool {
	ref := func(np *apisv1.NodePool) {
		np.Spec.Template.Spec.NodeClassRef = &apisv1.NodeClassReference{Group: awsv1.Group, Kind: awsv1.EC2NodeClassKind, Name: class}
	}
	return nodePool(name, class, families, append([]func(*apisv1.NodePool){ref}, mutate...)...)
}

// awsDInstances returns the endpoint's instances by provider ID.
func (e *awsDEnv) awsDInstances() map[string]awsapi.InstanceInfo {
	out := map[string]awsapi.InstanceInfo{}
	for _, in := range e.server.Instances() {
		out[in.ProviderID] = in
	}
	return out
}

// awsDGone says whether the endpoint's instance of a provider ID is shutting down, terminated
// or forgotten.
func (e *awsDEnv) awsDGone(providerID string) bool {
	in, ok := e.awsDInstances()[providerID]
	return !ok || in.State == "shutting-down" || in.State == "terminated"
}

// awsDStable checks that the pool's NodeClaims are all new (not in old), none being deleted,
// each on a running instance of the endpoint that check accepts, and that every claim of old
// has its instance terminated; it returns what it saw.
func (e *awsDEnv) awsDStable(pool string, old map[string]string, check func(awsapi.InstanceInfo) string) (bool, string) {
	insts := e.awsDInstances()
	var state []string
	done := true
	for _, c := range e.poolClaims(pool) {
		in, ok := insts[c.Status.ProviderID]
		s := claimState(&c) + "@" + in.ID + ":" + in.State
		switch {
		case old[c.Name] != "" || c.DeletionTimestamp != nil || !ok || in.State != "running":
			done = false
		default:
			if why := check(in); why != "" {
				done = false
				s += " (" + why + ")"
			}
		}
		state = append(state, s)
	}
	for name, pid := range old {
		if !e.awsDGone(pid) {
			done = false
			state = append(state, "old "+name+" instance "+pid+" not terminated")
		}
	}
	return done, strings.Join(state, " ")
}

// awsDClaims returns the pool's NodeClaims' provider IDs by name.
func (e *awsDEnv) awsDClaims(pool string) map[string]string {
	out := map[string]string{}
	for _, c := range e.poolClaims(pool) {
		out[c.Name] = c.Status.ProviderID
	}
	return out
}

// awsDDriftEvent reports whether a DisruptionTerminating event says drift for reason.
func (e *awsDEnv) awsDDriftEvent(reason cloudprovider.DriftReason) bool {
	return slices.ContainsFunc(e.events(disruptionctrl.EventTerminating), func(ev corev1.Event) bool {
		return strings.Contains(ev.Message, "drifted") && strings.Contains(ev.Message, string(reason))
	})
}

// awsDNodeClass reads an EC2NodeClass.
func (e *awsDEnv) awsDNodeClass(name string) *awsv1.EC2NodeClass {
	e.t.Helper()
	nc := &awsv1.EC2NodeClass{}
	if err := e.kube.Get(e.ctx, clientKey(name), nc); err != nil {
		e.t.Fatal(err)
	}
	return nc
}

// A new AL2023 release published behind al2023@latest (the endpoint's SSM parameters move)
// changes the EC2NodeClass's status AMIs; its instances drift (AMIDrift) and are replaced by
// instances on the new AMI, and the old ones are terminated.
func TestAWSDisruptionNewAMIDrifts(t *testing.T) {
	e := awsDStart(t, awsDOptions(), "")
	before := e.readyNodeClass("default")
	oldAMIs := map[string]bool{}
	for _, a := range before.Status.AMIs {
		oldAMIs[a.ID] = true
	}
	e.create(awsDPool("drifty", "default", []string{"m5"}, budgets(apisv1.Budget{Nodes: "100%"})),
		deployment("spread", 2, "3", "1Gi", inPool("drifty"), spreadByHost("spread")))
	e.podsRunning("spread", 2, 120*time.Second)
	old := e.awsDClaims("drifty")
	for _, in := range e.server.Instances() {
		if in.State == "running" && !oldAMIs[in.ImageID] {
			t.Fatalf("instance %s runs AMI %s, not one of the EC2NodeClass's %v", in.ID, in.ImageID, before.Status.AMIs)
		}
	}

	e.server.PublishRelease("v20261201", "")
	newAMIs := map[string]bool{}
	e.eventually(60*time.Second, "the EC2NodeClass's status AMIs moved to the new release", func() (bool, string) {
		nc := e.awsDNodeClass("default")
		clear(newAMIs)
		var names []string
		for _, a := range nc.Status.AMIs {
			newAMIs[a.ID] = !oldAMIs[a.ID]
			names = append(names, a.Name)
		}
		for _, fresh := range newAMIs {
			if !fresh {
				return false, strings.Join(names, " ")
			}
		}
		return len(newAMIs) > 0 && strings.Contains(strings.Join(names, " "), "v20261201"), strings.Join(names, " ")
	})
	e.eventually(120*time.Second, "every instance replaced by one on the new AMI", func() (bool, string) {
		return e.awsDStable("drifty", old, func(in awsapi.InstanceInfo) string {
			if !newAMIs[in.ImageID] {
				return "AMI " + in.ImageID + " is not the new release's"
			}
			return ""
		})
	})
	e.podsRunning("spread", 2, 60*time.Second)
	if !e.awsDDriftEvent(aws.DriftAMI) {
		t.Errorf("no DisruptionTerminating event for %s", aws.DriftAMI)
	}
}

// A change of the EC2NodeClass's spec that the static hash covers (its tags here) drifts its
// instances (NodeClassDrift): they are replaced by instances carrying the new tags.
func TestAWSDisruptionNodeClassChangeDrifts(t *testing.T) {
	e := awsDStart(t, awsDOptions(), "")
	e.readyNodeClass("default")
	e.create(awsDPool("drifty", "default", []string{"m5"}, budgets(apisv1.Budget{Nodes: "100%"})),
		deployment("spread", 2, "3", "1Gi", inPool("drifty"), spreadByHost("spread")))
	e.podsRunning("spread", 2, 120*time.Second)
	old := e.awsDClaims("drifty")
	for _, c := range e.poolClaims("drifty") {
		if c.Annotations[awsv1.AnnotationEC2NodeClassHash] == "" {
			t.Fatalf("claim %s carries no %s annotation to drift by", c.Name, awsv1.AnnotationEC2NodeClassHash)
		}
	}

	nc := e.awsDNodeClass("default")
	orig := nc.DeepCopy()
	nc.Spec.Tags = map[string]string{"team": "blue"}
	if err := e.kube.Patch(e.ctx, nc, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	e.eventually(120*time.Second, "every instance replaced by one with the new tags", func() (bool, string) {
		return e.awsDStable("drifty", old, func(in awsapi.InstanceInfo) string {
			if in.Tags["team"] != "blue" {
				return fmt.Sprintf("tags %v", in.Tags)
			}
			return ""
		})
	})
	e.podsRunning("spread", 2, 60*time.Second)
	if !e.awsDDriftEvent(aws.DriftNodeClass) {
		t.Errorf("no DisruptionTerminating event for %s", aws.DriftNodeClass)
	}
	for _, c := range e.poolClaims("drifty") {
		if r := c.GetCondition(apisv1.ConditionTypeDrifted); r != nil {
			t.Errorf("replacement %s is still Drifted (%s: %s)", c.Name, r.Reason, r.Message)
		}
	}
}

// A claim Karpenter launched carries Karpenter's EC2NodeClass hash version, which tenon does
// not judge; the lifecycle controller adopts it by having the provider re-stamp tenon's hash
// and version, so that a later change of the EC2NodeClass's spec drifts it as it drifts a
// claim tenon launched.
func TestAWSDisruptionAdoptedClaimDriftsOnNodeClassChange(t *testing.T) {
	e := awsDStart(t, awsDOptions(), "")
	e.readyNodeClass("default")
	e.create(awsDPool("adopted", "default", []string{"m5"}, budgets(apisv1.Budget{Nodes: "100%"})),
		deployment("spread", 2, "3", "1Gi", inPool("adopted"), spreadByHost("spread")))
	e.podsRunning("spread", 2, 120*time.Second)
	old := e.awsDClaims("adopted")
	// Make them look as Karpenter left them.
	const karpenterHash = "9106813447891402951"
	for _, c := range e.poolClaims("adopted") {
		orig := c.DeepCopy()
		c.Annotations[awsv1.AnnotationEC2NodeClassHash] = karpenterHash
		c.Annotations[awsv1.AnnotationEC2NodeClassHashVersion] = "v4"
		if err := e.kube.Patch(e.ctx, &c, client.MergeFrom(orig)); err != nil {
			t.Fatal(err)
		}
	}
	e.eventually(60*time.Second, "every claim re-stamped with tenon's EC2NodeClass hash", func() (bool, string) {
		for _, c := range e.poolClaims("adopted") {
			if a := c.Annotations; a[awsv1.AnnotationEC2NodeClassHashVersion] != awsv1.EC2NodeClassHashVersion || a[awsv1.AnnotationEC2NodeClassHash] == karpenterHash {
				return false, fmt.Sprintf("claim %s: version %q hash %q", c.Name, a[awsv1.AnnotationEC2NodeClassHashVersion], a[awsv1.AnnotationEC2NodeClassHash])
			}
		}
		return true, ""
	})

	nc := e.awsDNodeClass("default")
	orig := nc.DeepCopy()
	nc.Spec.Tags = map[string]string{"team": "blue"}
	if err := e.kube.Patch(e.ctx, nc, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	e.eventually(120*time.Second, "every adopted instance replaced by one with the new tags", func() (bool, string) {
		return e.awsDStable("adopted", old, func(in awsapi.InstanceInfo) string {
			if in.Tags["team"] != "blue" {
				return fmt.Sprintf("tags %v", in.Tags)
			}
			return ""
		})
	})
	if !e.awsDDriftEvent(aws.DriftNodeClass) {
		t.Errorf("no DisruptionTerminating event for %s", aws.DriftNodeClass)
	}
}

// An instance whose NodePool's expireAfter runs out is replaced: its pod moves to a new
// instance and the old one is terminated on the endpoint.
func TestAWSDisruptionExpireAfterReplaces(t *testing.T) {
	e := awsDStart(t, awsDOptions(), "")
	e.readyNodeClass("default")
	e.create(awsDPool("short", "default", []string{"m5"}, func(np *apisv1.NodePool) {
		np.Spec.Template.Spec.ExpireAfter = apisv1.NewNillableDuration(20 * time.Second)
		np.Spec.Disruption.ConsolidateAfter = apisv1.NewNillableDuration(time.Hour) // only expiration acts
	}), deployment("app", 1, "1", "1Gi", inPool("short")))
	first := e.nodeOf("app")
	old := e.awsDClaims("short")
	var claim string
	for name := range old {
		claim = name
	}
	if len(old) != 1 {
		t.Fatalf("want one claim, got %v", old)
	}
	e.eventually(120*time.Second, "the expired instance replaced", func() (bool, string) {
		pods := e.podsRunning("app", 1, 60*time.Second)
		if e.node(first) != nil || pods[0].Spec.NodeName == first {
			return false, "node " + first + " still there"
		}
		// The replacement may itself expire (20s) while this polls: only the old one matters.
		return e.awsDGone(old[claim]), "instance " + old[claim] + " of the expired claim still running"
	})
	if !e.hasEvent(disruptionctrl.EventTerminating, claim, "Expiration", "expired at") {
		t.Errorf("no DisruptionTerminating event on claim %s for expiration", claim)
	}
}

// Scaling down deletes the instances left empty and replaces one left underutilized by a
// cheaper instance type; the instances removed are terminated on the endpoint and every pod
// keeps running.
func TestAWSDisruptionScaleDownDeletesEmptyAndReplacesUnderutilized(t *testing.T) {
	e := awsDStart(t, awsDOptions(), "")
	e.readyNodeClass("default")
	e.create(awsDPool("wide", "default", []string{"m5"}, budgets(apisv1.Budget{Nodes: "100%"})),
		awsDPool("small", "default", []string{"m5"}, budgets(apisv1.Budget{Nodes: "100%"})),
		deployment("spread", 3, "3", "1Gi", inPool("wide"), spreadByHost("spread")),
		deployment("filler", 1, "5", "1Gi", inPool("small")),
		deployment("app", 1, "1500m", "1Gi", inPool("small")))
	e.podsRunning("filler", 1, 120*time.Second)
	big := e.nodeOf("app")
	if n := e.node(big); n == nil || n.Labels[apisv1.LabelInstanceType] != "m5.2xlarge" {
		t.Fatalf("want app and filler on one m5.2xlarge, app is on %s", big)
	}
	e.podsRunning("spread", 3, 120*time.Second)
	if n := len(e.poolClaims("wide")); n != 3 {
		t.Fatalf("want three nodes for three spread pods, got %d", n)
	}
	before := e.awsDClaims("wide")
	for name, pid := range e.awsDClaims("small") {
		before[name] = pid
	}

	e.scaleDownConsolidates(big, 120*time.Second)
	kept := map[string]bool{}
	for _, c := range append(e.poolClaims("wide"), e.poolClaims("small")...) {
		kept[c.Status.ProviderID] = true
	}
	e.eventually(30*time.Second, "the removed instances terminated on the endpoint", func() (bool, string) {
		insts := e.awsDInstances()
		var running []string
		for pid, in := range insts {
			if !kept[pid] && (in.State == "running" || in.State == "pending") {
				running = append(running, in.ID+":"+in.State)
			}
		}
		for _, pid := range before {
			if !kept[pid] && !e.awsDGone(pid) {
				running = append(running, pid)
			}
		}
		return len(running) == 0, "still up: " + strings.Join(running, " ")
	})
	insts := e.awsDInstances()
	for pid := range kept {
		if insts[pid].State != "running" {
			t.Errorf("claim left on %s, whose instance is %q, not running", pid, insts[pid].State)
		}
	}
	if !slices.ContainsFunc(e.events(disruptionctrl.EventTerminating), func(ev corev1.Event) bool { return strings.Contains(ev.Message, "Emptiness") }) {
		t.Error("no DisruptionTerminating event for emptiness")
	}
	if !e.hasEvent(disruptionctrl.EventLaunching, big, "Consolidation", "m5.large") {
		t.Errorf("no DisruptionLaunching event on %s naming the replacement", big)
	}
}

// awsDSend puts a raw message on the interruption queue through SQS.
func (e *awsDEnv) awsDSend(body string) {
	e.t.Helper()
	if _, err := e.sqs.SendMessage(e.ctx, &sqs.SendMessageInput{QueueUrl: awssdk.String(e.queueURL), MessageBody: awssdk.String(body)}); err != nil {
		e.t.Fatal(err)
	}
}

// The endpoint interrupts a spot instance and puts EventBridge's "EC2 Spot Instance
// Interruption Warning" on the SQS interruption queue, behind two malformed messages. Tenon
// counts and deletes the malformed ones and still acts on the warning: the node is tainted, a
// replacement is bought through another offering, the pods leave through the Eviction API (a
// PodDisruptionBudget lets one go at a time) and run elsewhere, the node and its instance are
// gone before the two-minute deadline, and the warning is deleted from the queue.
func TestAWSSpotInterruptionFromSQSReplacesNodeBeforeDeadline(t *testing.T) {
	opts := operator.Options{}
	opts.Termination.EvictionRetryMax = 2 * time.Second // PDB refusals are retried quickly
	e := awsDStart(t, opts, awsDQueue)
	e.readyNodeClass("default")
	spot := func(np *apisv1.NodePool) {
		for i, r := range np.Spec.Template.Spec.Requirements {
			if r.Key == apisv1.CapacityTypeLabelKey {
				np.Spec.Template.Spec.Requirements[i].Values = []string{apisv1.CapacityTypeSpot}
			}
		}
	}
	const replicas = 4
	one := intstr.FromInt32(1)
	e.create(awsDPool("spot", "default", []string{"m5", "c5", "m6i", "c6i"}, spot),
		deployment("web", replicas, "500m", "1Gi"),
		&policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
			Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		})
	pods := e.podsRunning("web", replicas, 120*time.Second)

	v := e.spotVictimOf(t, pods)
	victim, victimClaim := v.node, v.claim
	inst, ok := e.awsDInstances()[victim.Spec.ProviderID]
	if !ok || inst.CapacityType != apisv1.CapacityTypeSpot || inst.State != "running" {
		t.Fatalf("node %s (%s) is not on a running spot instance of the endpoint: %+v", victim.Name, victim.Spec.ProviderID, inst)
	}

	malformed0, _ := sample(t, "tenon_interruption_dropped_messages_total", map[string]string{"reason": interruption.DropMalformed})
	spot0, _ := sample(t, "karpenter_interruption_received_messages_total", map[string]string{"message_type": "spot_interrupted"})
	deleted0, _ := sample(t, "karpenter_interruption_deleted_messages_total", nil)
	handled0, _ := sample(t, "karpenter_interruption_message_queue_duration_seconds", nil)
	e.awsDSend("this is not an EventBridge event")
	e.awsDSend(`{"version":"0","id":"x","source":"aws.ec2","time":"2026-12-01T00:00:00Z","detail":{}}`)
	at := time.Now()
	if err := e.server.Interrupt(inst.ID, awsapi.DetailSpotInterruption); err != nil {
		t.Fatal(err)
	}
	deadline := at.Add(2 * time.Minute)
	if !slices.ContainsFunc(e.server.QueueMessages(awsDQueue), func(b string) bool {
		return strings.Contains(b, awsapi.DetailSpotInterruption) && strings.Contains(b, inst.ID)
	}) {
		t.Fatalf("the endpoint did not put a spot interruption warning for %s on the queue: %v", inst.ID, e.server.QueueMessages(awsDQueue))
	}

	e.env.drainedBeforeDeadline(t, v, "web", replicas, at, deadline, "warning")

	// Tenon terminated the instance itself, ahead of the deadline; the claim is gone; the
	// warning, the malformed messages and the instance's state-change notifications are all
	// deleted from the queue.
	if !e.awsDGone(victim.Spec.ProviderID) {
		t.Errorf("instance %s is still %s after its node went", inst.ID, e.awsDInstances()[victim.Spec.ProviderID].State)
	}
	e.eventually(60*time.Second, "the interrupted claim gone and the queue empty", func() (bool, string) {
		if slices.ContainsFunc(e.nodeClaims(), func(c apisv1.NodeClaim) bool { return c.Name == victimClaim }) {
			return false, "claim " + victimClaim + " still there"
		}
		if left := e.server.QueueMessages(awsDQueue); len(left) > 0 {
			return false, fmt.Sprintf("%d messages left on the queue: %v", len(left), left)
		}
		return true, ""
	})
	if v, _ := sample(t, "tenon_interruption_dropped_messages_total", map[string]string{"reason": interruption.DropMalformed}); v-malformed0 != 2 {
		t.Errorf("%v malformed messages counted, want 2", v-malformed0)
	}
	if v, _ := sample(t, "karpenter_interruption_received_messages_total", map[string]string{"message_type": "spot_interrupted"}); v-spot0 != 1 {
		t.Errorf("%v spot interruption warnings counted as received, want 1", v-spot0)
	}
	if v, _ := sample(t, "karpenter_interruption_deleted_messages_total", nil); v-deleted0 < 3 {
		t.Errorf("%v messages counted as deleted, want at least 3 (two malformed and the warning)", v-deleted0)
	}
	// Observed only when a message is deleted because it was handled (not when a redelivery
	// of it is dropped after its visibility timeout).
	if v, _ := sample(t, "karpenter_interruption_message_queue_duration_seconds", nil); v-handled0 < 1 {
		t.Errorf("no message was deleted as handled (queue duration observations %v)", v-handled0)
	}
	var named []string
	for _, ev := range e.events(string(cloudprovider.SpotInterruption)) {
		named = append(named, ev.InvolvedObject.Kind+"/"+ev.InvolvedObject.Name)
	}
	for _, want := range []string{"Node/" + victim.Name, "NodeClaim/" + victimClaim} {
		if !slices.Contains(named, want) {
			t.Errorf("no %s event on %s (events on %v)", cloudprovider.SpotInterruption, want, named)
		}
	}
}

package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	sdkaws "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/instance"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
	disruptionctrl "github.com/tenon-sh/tenon/pkg/controllers/disruption"
	"github.com/tenon-sh/tenon/pkg/operator"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// onEC2NodeClass points a NodePool's template at an EC2NodeClass.
func onEC2NodeClass(name string) func(*apisv1.NodePool) {
	return func(np *apisv1.NodePool) {
		np.Spec.Template.Spec.NodeClassRef = &apisv1.NodeClassReference{Group: awsv1.Group, Kind: awsv1.EC2NodeClassKind, Name: name}
	}
}

// requiring adds a requirement to a NodePool's template.
func requiring(key string, values ...string) func(*apisv1.NodePool) {
	return func(np *apisv1.NodePool) {
		np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements,
			apisv1.NodeSelectorRequirementWithMinValues{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values})
	}
}

func weighted(w int32) func(*apisv1.NodePool) {
	return func(np *apisv1.NodePool) { np.Spec.Weight = &w }
}

// instance returns the endpoint's record of an instance (ok false when it has none).
func (e *awsEnv) instance(id string) (awsapi.InstanceInfo, bool) {
	for _, inst := range e.server.Instances() {
		if inst.ID == id {
			return inst, true
		}
	}
	return awsapi.InstanceInfo{}, false
}

// live reports whether an instance is pending or running.
func live(inst awsapi.InstanceInfo) bool { return inst.State == "pending" || inst.State == "running" }

// clusterTags are the tags tenon's AWS provider writes on an instance of a NodePool and
// EC2NodeClass in cluster, launched for the NodeClaim claim.
func clusterTags(cluster, pool, class, claim string) map[string]string {
	return map[string]string{
		instance.TagEKSClusterName: cluster, instance.TagClusterPrefix + cluster: instance.TagValueOwned,
		instance.TagNodePool: pool, instance.TagEC2NodeClass: class, instance.TagNodeClaim: claim,
	}
}

// launchTagged launches one on-demand instance of instanceType on the endpoint with the given
// tags, as another program sharing the account would: its own launch template (the class's
// first amd64 AMI and first security group) and a CreateFleet in the class's first subnet.
func (e *awsEnv) launchTagged(nc *awsv1.EC2NodeClass, instanceType string, tags map[string]string) awsapi.InstanceInfo {
	e.t.Helper()
	image := ""
	for _, ami := range nc.Status.AMIs {
		for _, r := range ami.Requirements {
			if r.Key == corev1.LabelArchStable && slices.Contains(r.Values, "amd64") && image == "" {
				image = ami.ID
			}
		}
	}
	if image == "" {
		e.t.Fatalf("EC2NodeClass %s resolved no amd64 AMI: %+v", nc.Name, nc.Status.AMIs)
	}
	name := fmt.Sprintf("e2e-foreign-%d", time.Now().UnixNano())
	if _, err := e.ec2.CreateLaunchTemplate(e.ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: sdkaws.String(name),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: sdkaws.String(image), SecurityGroupIds: []string{nc.Status.SecurityGroups[0].ID}},
	}); err != nil {
		e.t.Fatalf("creating launch template %s: %v", name, err)
	}
	var ts []ec2types.Tag
	for k, v := range tags {
		ts = append(ts, ec2types.Tag{Key: sdkaws.String(k), Value: sdkaws.String(v)})
	}
	subnet := nc.Status.Subnets[0]
	out, err := e.ec2.CreateFleet(e.ctx, &ec2.CreateFleetInput{
		Type: ec2types.FleetTypeInstant,
		LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: sdkaws.String(name), Version: sdkaws.String("$Latest")},
			Overrides: []ec2types.FleetLaunchTemplateOverridesRequest{{
				InstanceType: ec2types.InstanceType(instanceType), SubnetId: sdkaws.String(subnet.ID), AvailabilityZone: sdkaws.String(subnet.Zone),
			}},
		}},
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{
			TotalTargetCapacity: sdkaws.Int32(1), DefaultTargetCapacityType: ec2types.DefaultTargetCapacityTypeOnDemand,
		},
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: ts}},
	})
	if err != nil {
		e.t.Fatalf("launching an instance tagged %v: %v", tags, err)
	}
	if len(out.Instances) != 1 || len(out.Instances[0].InstanceIds) != 1 {
		e.t.Fatalf("launching an instance tagged %v: fleet launched %+v, errors %+v", tags, out.Instances, out.Errors)
	}
	inst, ok := e.instance(out.Instances[0].InstanceIds[0])
	if !ok {
		e.t.Fatalf("the endpoint does not know the instance %s it launched", out.Instances[0].InstanceIds[0])
	}
	return inst
}

// A GPU pod on an EC2NodeClass NodePool gets a GPU instance (g or p family) through the
// endpoint, whose kubelet registers the Node without the GPUs and adds nvidia.com/gpu only
// once the device plugin has run: the pod is scheduled no earlier than that.
func TestAWSGPUPodWaitsForDevicePlugin(t *testing.T) {
	const devicePlugin = 3 * time.Second
	e := launchAWSEnv(t, awsEnvOptions{Delays: cloud.Delays{Boot: 200 * time.Millisecond, Registration: 200 * time.Millisecond, DevicePlugin: devicePlugin}})
	e.readyNodeClass("gpu")
	e.create(nodePool("gpu", "gpu", []string{"g5", "g6", "p4d", "p5"}, onEC2NodeClass("gpu")),
		deployment("train", 1, "2", "8Gi", func(s *corev1.PodSpec) {
			s.Containers[0].Resources.Limits = corev1.ResourceList{scheduling.ResourceNvidiaGPU: resource.MustParse("1")}
		}))
	pods := e.podsRunning("train", 1, 120*time.Second)
	node := e.node(pods[0].Spec.NodeName)
	if node == nil {
		t.Fatalf("pod %s runs on %s, which does not exist", pods[0].Name, pods[0].Spec.NodeName)
	}
	if gpu := node.Status.Allocatable[scheduling.ResourceNvidiaGPU]; gpu.Value() < 1 {
		t.Errorf("node %s has no nvidia.com/gpu", node.Name)
	}
	if f := node.Labels[apisv1.LabelInstanceFamily]; !strings.HasPrefix(f, "g") && !strings.HasPrefix(f, "p") {
		t.Errorf("GPU pod runs on a %s instance", f)
	}
	var inst awsapi.InstanceInfo
	for _, in := range e.server.Instances() {
		if in.ProviderID == node.Spec.ProviderID {
			inst = in
		}
	}
	if inst.ID == "" {
		t.Fatalf("node %s (%s) is not an instance of the endpoint", node.Name, node.Spec.ProviderID)
	}
	if inst.DevicesAt.IsZero() || inst.DevicesAt.Sub(inst.RegisteredAt) != devicePlugin {
		t.Fatalf("instance %s (%s): registered %v, devices %v; want the devices %s after registration", inst.ID, inst.Type.Name, inst.RegisteredAt, inst.DevicesAt, devicePlugin)
	}
	// kube-scheduler records when it bound the pod; it cannot have been before the GPUs were
	// published on the Node.
	var scheduled time.Time
	for _, ev := range e.events("Scheduled") {
		if ev.InvolvedObject.Name != pods[0].Name {
			continue
		}
		at := ev.EventTime.Time
		if at.IsZero() {
			at = ev.FirstTimestamp.Time
		}
		scheduled = at
	}
	if scheduled.IsZero() {
		t.Fatalf("no Scheduled event for pod %s", pods[0].Name)
	}
	// Event times may be kept to the second; the device plugin's time is compared at that grain.
	if scheduled.Before(inst.DevicesAt.Truncate(time.Second)) {
		t.Errorf("pod %s was scheduled at %v, before its node's GPUs appeared at %v", pods[0].Name, scheduled, inst.DevicesAt)
	}
}

// An offering the endpoint answers InsufficientInstanceCapacity for fails the claim that can
// only launch there; exactly that offering is marked unavailable, and the pod is planned again
// on the other NodePool's type.
func TestAWSExhaustedOfferingFallsBack(t *testing.T) {
	e := startAWS(t)
	e.readyNodeClass("default")
	e.server.SetInsufficientCapacity("m5.large", "us-east-1a", apisv1.CapacityTypeOnDemand, true)
	// The heavier pool may only launch m5.large in us-east-1a, so its claim has nowhere else to go.
	e.create(
		nodePool("large", "default", []string{"m5"}, onEC2NodeClass("default"), weighted(50),
			requiring(apisv1.LabelInstanceType, "m5.large"), requiring(apisv1.LabelZone, "us-east-1a")),
		nodePool("xlarge", "default", []string{"m5"}, onEC2NodeClass("default"), weighted(10),
			requiring(apisv1.LabelInstanceType, "m5.xlarge")),
		deployment("api", 1, "1", "1Gi"))
	pods := e.podsRunning("api", 1, 120*time.Second)
	node := e.node(pods[0].Spec.NodeName)
	if node == nil {
		t.Fatalf("pod %s runs on %s, which does not exist", pods[0].Name, pods[0].Spec.NodeName)
	}
	if it := node.Labels[apisv1.LabelInstanceType]; it != "m5.xlarge" {
		t.Errorf("the pod runs on a %s, want the fallback m5.xlarge", it)
	}
	if !e.op.Unavailable.IsUnavailable("m5.large", "us-east-1a", apisv1.CapacityTypeOnDemand) {
		t.Error("the offering the endpoint had no capacity for is not marked unavailable")
	}
	if n := e.op.Unavailable.Len(); n != 1 {
		t.Errorf("%d offerings are marked unavailable; only m5.large in us-east-1a on demand had no capacity", n)
	}
	for _, inst := range e.server.Instances() {
		if inst.Type.Name == "m5.large" {
			t.Errorf("instance %s is an m5.large in %s, which had no capacity", inst.ID, inst.Zone)
		}
	}
	claims := e.nodeClaims()
	if len(claims) != 1 || claims[0].Labels[apisv1.NodePoolLabelKey] != "xlarge" {
		var names []string
		for i := range claims {
			names = append(names, claimState(&claims[i]))
		}
		t.Errorf("want the one NodeClaim of nodepool xlarge left, got %v", names)
	}
}

// Throttling and internal errors from CreateFleet, some the SDK retries away and some that
// fail a launch outright, are retried and never taken for missing capacity.
func TestAWSThrottlingAndServerErrorsMarkNoOffering(t *testing.T) {
	e := startAWS(t)
	e.readyNodeClass("default")
	// More faults than the SDK's attempts per call: at least one Create fails with them.
	e.server.InjectFault(awsapi.Fault{Service: awsapi.ServiceEC2, Action: "CreateFleet", Kind: awsapi.FaultThrottle, Count: 2})
	e.server.InjectFault(awsapi.Fault{Service: awsapi.ServiceEC2, Action: "CreateFleet", Kind: awsapi.FaultServerError, Count: 2})
	e.create(nodePool("general", "default", []string{"m5"}, onEC2NodeClass("default"), requiring(apisv1.LabelInstanceType, "m5.large")),
		deployment("web", 1, "1", "1Gi"))
	pods := e.podsRunning("web", 1, 120*time.Second)
	if hits := e.server.FaultHits(); !slices.Equal(hits, []int{2, 2}) {
		t.Errorf("the injected faults answered %v CreateFleet calls, want [2 2]", hits)
	}
	if node := e.node(pods[0].Spec.NodeName); node == nil || node.Labels[apisv1.LabelInstanceType] != "m5.large" {
		t.Errorf("the pod does not run on the m5.large its NodePool allows")
	}
	if n := e.op.Unavailable.Len(); n != 0 {
		t.Errorf("throttling and server errors marked %d offerings unavailable", n)
	}
}

// An operator stopped in the middle of a scale-up on the endpoint and started again leaves one
// instance per NodeClaim and no instance without one, and one Node per claim.
func TestAWSRestartMidScaleUpLeaksNothing(t *testing.T) {
	e := launchAWSEnv(t, awsEnvOptions{Delays: cloud.Delays{Boot: 3 * time.Second, Registration: 200 * time.Millisecond}})
	e.readyNodeClass("default")
	e.create(nodePool("general", "default", []string{"m5", "c5"}, onEC2NodeClass("default")), deployment("web", 30, "1", "2Gi"))
	e.eventually(60*time.Second, "instances launching", func() (bool, string) {
		n := len(e.server.Instances())
		return n > 0, fmt.Sprintf("%d claims, %d instances", len(e.nodeClaims()), n)
	})
	e.stop() // the controller dies mid scale-up
	e.startOperator()
	e.podsRunning("web", 30, 180*time.Second)
	// Instances a replaced claim leaves behind may still be shutting down; wait for them, then
	// everything must match.
	e.eventually(60*time.Second, "one instance and one Node per NodeClaim, no instance without a claim", func() (bool, string) {
		claims := map[string]bool{}
		for _, c := range e.nodeClaims() {
			claims[c.Name] = true
		}
		byClaim := map[string][]string{}
		for _, inst := range e.server.Instances() {
			if inst.State != "terminated" {
				byClaim[inst.Tags[instance.TagNodeClaim]] = append(byClaim[inst.Tags[instance.TagNodeClaim]], inst.ID+"("+inst.State+")")
			}
		}
		var bad []string
		for c := range claims {
			if len(byClaim[c]) != 1 {
				bad = append(bad, fmt.Sprintf("claim %s has instances %v", c, byClaim[c]))
			}
		}
		for c, ids := range byClaim {
			if !claims[c] {
				bad = append(bad, fmt.Sprintf("instances %v belong to no claim (%q): leaked", ids, c))
			}
		}
		if n := len(e.nodes()); n != len(claims) {
			bad = append(bad, fmt.Sprintf("%d nodes for %d claims", n, len(claims)))
		}
		slices.Sort(bad)
		return len(bad) == 0, strings.Join(bad, "; ")
	})
}

// Garbage collection on the endpoint: an instance tagged for this cluster, its NodePool and
// EC2NodeClass, whose NodeClaim does not exist, is terminated once the grace period has
// passed, not before; an instance without this cluster's tags, and one tagged for another
// cluster, are never touched.
func TestAWSGarbageCollectsOrphanInstancesOfThisClusterOnly(t *testing.T) {
	const grace = 4 * time.Second
	var opts operator.Options
	opts.GarbageCollection.Interval, opts.GarbageCollection.GracePeriod = 300*time.Millisecond, grace
	e := launchAWSEnv(t, awsEnvOptions{Operator: opts})
	nc := e.readyNodeClass("default")
	untagged := clusterTags("tenon", "general", "default", "general-untagged")
	delete(untagged, instance.TagEKSClusterName)
	delete(untagged, instance.TagClusterPrefix+"tenon")
	others := e.launchTagged(nc, "m5.large", clusterTags("other", "general", "default", "general-other"))
	bare := e.launchTagged(nc, "m5.large", untagged)
	orphan := e.launchTagged(nc, "m5.large", clusterTags("tenon", "general", "default", "general-ghost"))

	// LaunchTime reaches the provider at the second: allow that much before the grace ends.
	if window := time.Until(orphan.Launched.Add(grace - time.Second)); window > 0 {
		e.holds(window, "the orphan instance running during its grace period", func() (bool, string) {
			inst, _ := e.instance(orphan.ID)
			return live(inst), "orphan " + orphan.ID + " is " + inst.State
		})
	}
	e.eventually(60*time.Second, "the orphan instance terminated", func() (bool, string) {
		inst, _ := e.instance(orphan.ID)
		return !live(inst), "orphan " + orphan.ID + " is " + inst.State
	})
	// Many more passes (one every 300ms) over the instances it must leave alone.
	e.holds(3*time.Second, "the instances of another cluster and of none left running", func() (bool, string) {
		var s []string
		ok := true
		for _, in := range []awsapi.InstanceInfo{others, bare} {
			inst, _ := e.instance(in.ID)
			ok = ok && inst.State == "running"
			s = append(s, in.ID+" "+inst.State)
		}
		return ok, strings.Join(s, ", ")
	})
}

// The foreign autoscaler of TestAWSForeignNodeClaimsSurviveEveryLoop: its NodeClaims name a
// NodeClass kind the AWS provider does not serve, and it tags its instances with this
// cluster's name and its own NodePool, but no EC2NodeClass.
const (
	awsForeignGroup = "nodes.example.com"
	awsForeignKind  = "ExternalNodeClass"
)

// awsForeignClaim makes the Node the endpoint's kubelet registers for inst look as the foreign
// autoscaler leaves it (its NodePool's labels, the shared finalizer, the unregistered taint
// lifted) and, with withClaim, writes the launched, registered and initialized NodeClaim that
// refers to it.
func (e *awsEnv) awsForeignClaim(name string, inst awsapi.InstanceInfo, withClaim bool) {
	e.t.Helper()
	node := &corev1.Node{}
	e.eventually(60*time.Second, "the endpoint's kubelet registering "+inst.PrivateDNS, func() (bool, string) {
		err := e.kube.Get(e.ctx, clientKey(inst.PrivateDNS), node)
		return err == nil, fmt.Sprint(err)
	})
	orig := node.DeepCopy()
	for k, v := range map[string]string{
		apisv1.NodePoolLabelKey: foreignPool, apisv1.NodeRegisteredLabelKey: "true", apisv1.NodeInitializedLabelKey: "true",
	} {
		node.Labels[k] = v
	}
	node.Finalizers = append(node.Finalizers, apisv1.TerminationFinalizer)
	node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == apisv1.UnregisteredNoExecuteTaint.Key })
	if err := e.kube.Patch(e.ctx, node, client.MergeFrom(orig)); err != nil {
		e.t.Fatalf("writing the foreign Node %s: %v", node.Name, err)
	}
	if !withClaim {
		return
	}
	claim := &apisv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{apisv1.NodePoolLabelKey: foreignPool}, Finalizers: []string{apisv1.TerminationFinalizer}},
		Spec: apisv1.NodeClaimSpec{
			NodeClassRef: &apisv1.NodeClassReference{Group: awsForeignGroup, Kind: awsForeignKind, Name: "default"},
			Requirements: []apisv1.NodeSelectorRequirementWithMinValues{
				{Key: apisv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{apisv1.CapacityTypeOnDemand}},
			},
		},
	}
	e.create(claim)
	e.writeUpStatus(claim, apisv1.NodeClaimStatus{ProviderID: inst.ProviderID, NodeName: node.Name, Capacity: node.Status.Capacity, Allocatable: node.Status.Allocatable, ImageID: inst.ImageID})
}

// TestForeignNodeClaimsSurviveEveryLoop for the AWS provider: another autoscaler's NodePool,
// NodeClaims (one live, empty and consolidatable, with its disrupted taint; one being
// deleted), Nodes (one whose claim is gone, being deleted) and the endpoint instances behind
// them survive every loop of a tenon running --cloud-provider aws — provisioning, lifecycle,
// garbage collection every 300ms, disruption, orphaned-taint cleanup, termination, NodePool
// status, and the interruption queue carrying a rebalance recommendation for the foreign
// instance — while tenon provisions, consolidates and terminates its own capacity. "An hour" of
// loops is compressed as in the simulated test: every interval is cut to about a second.
func TestAWSForeignNodeClaimsSurviveEveryLoop(t *testing.T) {
	opts := disruptionOptions()
	opts.GarbageCollection.Interval, opts.GarbageCollection.GracePeriod = 300*time.Millisecond, 300*time.Millisecond
	opts.NodePoolStatus.Resync = time.Second
	opts.Disruption.OrphanTaintInterval = time.Second
	const queue = "tenon-interruptions"
	e := launchAWSEnv(t, awsEnvOptions{Operator: opts, InterruptionQueue: queue})
	nc := e.readyNodeClass("default")

	foreign := nodePool(foreignPool, "default", []string{"m5"}, budgets(apisv1.Budget{Nodes: "100%"}))
	foreign.Spec.Template.Spec.NodeClassRef = &apisv1.NodeClassReference{Group: awsForeignGroup, Kind: awsForeignKind, Name: "default"}
	e.create(foreign)
	tags := func(claim string) map[string]string {
		return map[string]string{
			instance.TagEKSClusterName: "tenon", instance.TagClusterPrefix + "tenon": instance.TagValueOwned,
			instance.TagNodePool: foreignPool, instance.TagNodeClaim: claim, "nodes.example.com/externalnodeclass": "default",
		}
	}
	insts := map[string]awsapi.InstanceInfo{}
	for _, name := range []string{"karpenter-default-live", "karpenter-default-deleting", "karpenter-default-bare"} {
		insts[name] = e.launchTagged(nc, "m5.large", tags(name))
	}
	e.awsForeignClaim("karpenter-default-live", insts["karpenter-default-live"], true)
	e.awsForeignClaim("karpenter-default-deleting", insts["karpenter-default-deleting"], true)
	e.awsForeignClaim("karpenter-default-bare", insts["karpenter-default-bare"], false)
	liveNode := insts["karpenter-default-live"].PrivateDNS
	tainted := e.node(liveNode)
	tainted.Spec.Taints = append(tainted.Spec.Taints, corev1.Taint{Key: apisv1.DisruptedTaintKey, Effect: corev1.TaintEffectNoSchedule})
	if err := e.kube.Update(e.ctx, tainted); err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{
		&apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "karpenter-default-deleting"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: insts["karpenter-default-deleting"].PrivateDNS}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: insts["karpenter-default-bare"].PrivateDNS}},
	} {
		if err := e.kube.Delete(e.ctx, o); err != nil {
			t.Fatalf("deleting %T %s: %v", o, o.GetName(), err)
		}
	}
	e.eventually(60*time.Second, "the foreign nodes' not-ready taints lifted by kube-controller-manager", func() (bool, string) {
		for _, inst := range insts {
			n := e.node(inst.PrivateDNS)
			if n == nil {
				return false, "node " + inst.PrivateDNS + " is gone"
			}
			for _, taint := range n.Spec.Taints {
				if taint.Key == corev1.TaintNodeNotReady {
					return false, "node " + n.Name + " still has " + taint.Key
				}
			}
		}
		return true, ""
	})
	before := e.foreignState()

	// The interruption queue tells tenon the foreign instance should be rebalanced.
	if err := e.server.Interrupt(insts["karpenter-default-live"].ID, awsapi.DetailRebalance); err != nil {
		t.Fatal(err)
	}
	e.eventually(60*time.Second, "the rebalance recommendation received and deleted from the queue", func() (bool, string) {
		msgs := e.server.QueueMessages(queue)
		return len(msgs) == 0, fmt.Sprintf("%d messages in %s", len(msgs), queue)
	})
	// tenon's own capacity comes and goes meanwhile.
	e.create(nodePool("mine", "default", []string{"m5"}, onEC2NodeClass("default"), budgets(apisv1.Budget{Nodes: "100%"})),
		deployment("app", 1, "1", "1Gi", inPool("mine")))
	e.podsRunning("app", 1, 120*time.Second)
	e.scale("app", 0)
	e.eventually(120*time.Second, "tenon's own empty node consolidated away", func() (bool, string) {
		mine := e.poolClaims("mine")
		return len(mine) == 0, fmt.Sprintf("%d claims of nodepool mine", len(mine))
	})
	// More passes of every loop (garbage collection every 300ms, disruption every second).
	time.Sleep(5 * time.Second)

	if after := e.foreignState(); after != before {
		t.Errorf("tenon changed another autoscaler's objects:\nbefore %s\nafter  %s", before, after)
	}
	if n := len(e.poolClaims(foreignPool)); n != 2 {
		t.Errorf("%d of the foreign autoscaler's 2 NodeClaims are left", n)
	}
	if n := e.node(liveNode); n == nil || !disruptionctrl.HasDisruptedTaint(n) {
		t.Error("tenon removed the foreign node or the disrupted taint its autoscaler put on it")
	}
	np := &apisv1.NodePool{}
	if err := e.kube.Get(e.ctx, clientKey(foreignPool), np); err != nil {
		t.Fatal(err)
	}
	if _, ok := np.Annotations[apisv1.NodePoolHashAnnotationKey]; ok || len(np.Status.Conditions) > 0 {
		t.Errorf("tenon wrote the foreign NodePool: annotations %v, conditions %v", np.Annotations, np.Status.Conditions)
	}
	for name, in := range insts {
		if inst, _ := e.instance(in.ID); inst.State != "running" {
			t.Errorf("the foreign instance %s of %s is %s", in.ID, name, inst.State)
		}
	}
}

package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated"
	disruptionctrl "github.com/tenon-sh/tenon/pkg/controllers/disruption"
)

// The objects another autoscaler (Karpenter, with its EC2NodeClass) keeps in the cluster,
// as it would write them.
const (
	foreignPool  = "karpenter-default"
	foreignGroup = "karpenter.k8s.aws"
	foreignKind  = "EC2NodeClass"
)

// foreignClaim writes a launched, registered and initialized NodeClaim of foreignPool with its
// Node (kept Ready by kwok, with no SimInstance behind it), both holding the finalizer
// Karpenter and tenon share. withClaim false writes only the Node.
func (e *env) foreignClaim(name, instanceID string, withClaim bool) {
	e.t.Helper()
	providerID := "aws:///us-east-1a/" + instanceID
	labels := map[string]string{
		apisv1.NodePoolLabelKey: foreignPool, apisv1.LabelInstanceType: "m5.large", apisv1.LabelZone: "us-east-1a",
		apisv1.CapacityTypeLabelKey: apisv1.CapacityTypeOnDemand, apisv1.NodeRegisteredLabelKey: "true", apisv1.NodeInitializedLabelKey: "true",
	}
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("29")}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: "ip-" + name, Labels: labels, Finalizers: []string{apisv1.TerminationFinalizer},
			Annotations: map[string]string{simulated.KwokNodeAnnotation: simulated.KwokNodeAnnotationValue},
		},
		Spec:   corev1.NodeSpec{ProviderID: providerID},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
	e.create(node)
	if !withClaim {
		return
	}
	claim := &apisv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Finalizers: []string{apisv1.TerminationFinalizer}},
		Spec: apisv1.NodeClaimSpec{
			NodeClassRef: &apisv1.NodeClassReference{Group: foreignGroup, Kind: foreignKind, Name: "default"},
			Requirements: []apisv1.NodeSelectorRequirementWithMinValues{
				{Key: apisv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{apisv1.CapacityTypeOnDemand}},
			},
		},
	}
	e.create(claim)
	e.writeUpStatus(claim, apisv1.NodeClaimStatus{ProviderID: providerID, NodeName: node.Name, Capacity: capacity, Allocatable: capacity})
}

// writeUpStatus writes status onto a NodeClaim another autoscaler made, with Launched,
// Registered, Initialized and Ready true: a claim that is up.
func (e *env) writeUpStatus(claim *apisv1.NodeClaim, status apisv1.NodeClaimStatus) {
	e.t.Helper()
	now := metav1.Now()
	claim.Status = status
	for _, c := range []string{apisv1.ConditionTypeLaunched, apisv1.ConditionTypeRegistered, apisv1.ConditionTypeInitialized, apisv1.ConditionTypeReady} {
		claim.Status.Conditions = append(claim.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue, Reason: c, LastTransitionTime: now})
	}
	if err := e.kube.Status().Update(e.ctx, claim); err != nil {
		e.t.Fatalf("writing the status of NodeClaim %s: %v", claim.Name, err)
	}
}

// A tenon started in a cluster where Karpenter runs leaves Karpenter's NodePool, NodeClaims,
// Nodes and instances alone through every loop — provisioning, lifecycle, garbage collection,
// disruption (the foreign node is empty and consolidatable), orphaned-taint cleanup,
// termination of claims and Nodes being deleted, NodePool status — while it still provisions,
// consolidates and terminates its own.
func TestForeignNodeClaimsSurviveEveryLoop(t *testing.T) {
	opts := disruptionOptions()
	opts.GarbageCollection.Interval, opts.GarbageCollection.GracePeriod = 300*time.Millisecond, 300*time.Millisecond
	opts.NodePoolStatus.Resync = time.Second
	opts.Disruption.OrphanTaintInterval = time.Second
	e := start(t, opts)

	foreign := nodePool(foreignPool, "default", []string{"m5"}, budgets(apisv1.Budget{Nodes: "100%"}))
	foreign.Spec.Template.Spec.NodeClassRef = &apisv1.NodeClassReference{Group: foreignGroup, Kind: foreignKind, Name: "default"}
	e.create(foreign)
	// live: an empty, consolidatable node; deleting: a claim and its node that Karpenter is
	// terminating; bare: a Node of Karpenter's pool whose claim is already gone, being deleted.
	e.foreignClaim("karpenter-default-live", "i-0aaaaaaaaaaaaaaa1", true)
	e.foreignClaim("karpenter-default-deleting", "i-0aaaaaaaaaaaaaaa2", true)
	e.foreignClaim("karpenter-default-bare", "i-0aaaaaaaaaaaaaaa3", false)
	// A node Karpenter tainted for its own disruption keeps the taint.
	tainted := e.node("ip-karpenter-default-live")
	tainted.Spec.Taints = append(tainted.Spec.Taints, corev1.Taint{Key: apisv1.DisruptedTaintKey, Effect: corev1.TaintEffectNoSchedule})
	if err := e.kube.Update(e.ctx, tainted); err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{
		&apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "karpenter-default-deleting"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-karpenter-default-deleting"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-karpenter-default-bare"}},
	} {
		if err := e.kube.Delete(e.ctx, o); err != nil {
			t.Fatalf("deleting %T %s: %v", o, o.GetName(), err)
		}
	}
	// kube-controller-manager's node lifecycle controller lifts the not-ready taint the API
	// server puts on every new Node once the Node reports Ready; let it finish with the foreign
	// nodes first, so only what tenon does is compared.
	e.eventually(60*time.Second, "the foreign nodes' not-ready taints lifted by kube-controller-manager", func() (bool, string) {
		for _, name := range []string{"ip-karpenter-default-live", "ip-karpenter-default-deleting", "ip-karpenter-default-bare"} {
			n := e.node(name)
			if n == nil {
				return false, "node " + name + " is gone"
			}
			for _, taint := range n.Spec.Taints {
				if taint.Key == corev1.TaintNodeNotReady {
					return false, "node " + name + " still has " + taint.Key
				}
			}
		}
		return true, ""
	})
	before := e.foreignState()

	// tenon's own capacity comes and goes meanwhile.
	e.create(nodeClass("default"), nodePool("mine", "default", []string{"m5"}, budgets(apisv1.Budget{Nodes: "100%"})),
		deployment("app", 1, "1", "1Gi", inPool("mine")))
	e.podsRunning("app", 1, 90*time.Second)
	e.scale("app", 0)
	e.eventually(90*time.Second, "tenon's own empty node consolidated away", func() (bool, string) {
		mine := e.poolClaims("mine")
		return len(mine) == 0, fmt.Sprintf("%d claims of nodepool mine", len(mine))
	})
	// More passes of every loop (garbage collection every 300ms, disruption every second).
	time.Sleep(5 * time.Second)

	if after := e.foreignState(); after != before {
		t.Errorf("tenon changed another autoscaler's objects:\nbefore %s\nafter  %s", before, after)
	}
	if n := len(e.poolClaims(foreignPool)); n != 2 {
		t.Errorf("%d of Karpenter's 2 NodeClaims are left", n)
	}
	if n := e.node("ip-karpenter-default-live"); n == nil || !disruptionctrl.HasDisruptedTaint(n) {
		t.Error("tenon removed Karpenter's node or the disrupted taint Karpenter put on it")
	}
	np := &apisv1.NodePool{}
	if err := e.kube.Get(e.ctx, clientKey(foreignPool), np); err != nil {
		t.Fatal(err)
	}
	if _, ok := np.Annotations[apisv1.NodePoolHashAnnotationKey]; ok || len(np.Status.Conditions) > 0 {
		t.Errorf("tenon wrote Karpenter's NodePool: annotations %v, conditions %v", np.Annotations, np.Status.Conditions)
	}
	for _, inst := range e.instances() {
		if strings.HasPrefix(inst.Name, "i-0aaaa") {
			t.Errorf("the simulated cloud recorded Karpenter's instance %s", inst.Name)
		}
	}
}

// foreignState describes Karpenter's objects by what tenon must not change: existence,
// resource version (nothing written), deletion and finalizers.
func (e *env) foreignState() string {
	e.t.Helper()
	var s []string
	for _, c := range e.poolClaims(foreignPool) {
		s = append(s, fmt.Sprintf("claim %s rv=%s deleting=%v finalizers=%v", c.Name, c.ResourceVersion, c.DeletionTimestamp != nil, c.Finalizers))
	}
	for _, n := range e.nodes() {
		if n.Labels[apisv1.NodePoolLabelKey] != foreignPool {
			continue
		}
		// kwok heartbeats change a Node's status and resource version; its spec and metadata
		// are what tenon could write.
		taints := slices.Clone(n.Spec.Taints)
		s = append(s, fmt.Sprintf("node %s deleting=%v finalizers=%v taints=%v labels=%d unschedulable=%v", n.Name, n.DeletionTimestamp != nil, n.Finalizers, taints, len(n.Labels), n.Spec.Unschedulable))
	}
	np := &apisv1.NodePool{}
	if err := e.kube.Get(e.ctx, clientKey(foreignPool), np); err != nil {
		e.t.Fatal(err)
	}
	s = append(s, "nodepool rv="+np.ResourceVersion)
	slices.Sort(s)
	return strings.Join(s, "; ")
}

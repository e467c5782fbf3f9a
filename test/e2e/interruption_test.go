package e2e

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/termination"
	"github.com/tenon-sh/tenon/pkg/operator"
)

// A spot instance gets an interruption notice with the usual two-minute deadline: its node is
// tainted, a replacement is bought through another offering, every pod leaves through the
// Eviction API (a PodDisruptionBudget lets one go at a time) and runs again elsewhere, and the
// node and its instance are gone well before the deadline.
func TestSpotInterruptionReplacesNodeBeforeDeadline(t *testing.T) {
	opts := operator.Options{}
	opts.Termination.EvictionRetryMax = 2 * time.Second // PDB refusals are retried quickly
	e := start(t, opts)
	spot := func(np *apisv1.NodePool) {
		for i, r := range np.Spec.Template.Spec.Requirements {
			if r.Key == apisv1.CapacityTypeLabelKey {
				np.Spec.Template.Spec.Requirements[i].Values = []string{apisv1.CapacityTypeSpot}
			}
		}
	}
	const replicas = 4
	one := intstr.FromInt32(1)
	e.create(nodeClass("default"), nodePool("spot", "default", []string{"m5", "c5", "m6i", "c6i"}, spot),
		deployment("web", replicas, "500m", "1Gi"),
		&policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
			Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		})
	pods := e.podsRunning("web", replicas, 60*time.Second)

	// Interrupt the node holding the most pods.
	v := e.spotVictimOf(t, pods)
	victim, victimClaim := v.node, v.claim

	provider := e.op.Cloud.(*simulated.Provider)
	at := time.Now()
	if err := provider.Interrupt(e.ctx, victim.Spec.ProviderID, cloudprovider.SpotInterruption, at); err != nil {
		t.Fatal(err)
	}
	deadline := at.Add(2 * time.Minute)

	e.drainedBeforeDeadline(t, v, "web", replicas, at, deadline, "notice")

	// The claim, the instance and the notice are gone; the events name the node and claim.
	e.eventually(30*time.Second, "the interrupted claim and instance gone", func() (bool, string) {
		if slices.ContainsFunc(e.nodeClaims(), func(c apisv1.NodeClaim) bool { return c.Name == victimClaim }) {
			return false, "claim " + victimClaim + " still there"
		}
		for _, in := range e.instances() {
			if in.Spec.NodeClaim == victimClaim && in.Status.Phase != simv1alpha1.InstanceTerminated {
				return false, fmt.Sprintf("instance %s is %s", in.Name, in.Status.Phase)
			}
		}
		return true, ""
	})
	msgs, err := provider.Receive(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.ProviderID == victim.Spec.ProviderID && m.Kind == cloudprovider.SpotInterruption {
			t.Errorf("the notice %s is still in the queue: it was never acknowledged", m.ID)
		}
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

// spotVictim is the spot node an interruption test hits: its offering and NodeClaim, the
// NodeClaims there were before the interruption, and a watch on its disrupted taint.
type spotVictim struct {
	node      corev1.Node
	offering  cloudprovider.Offering
	claim     string
	before    map[string]bool
	taintSeen <-chan struct{}
}

// spotVictimOf picks the node holding the most of pods, which must be spot, and starts
// watching its taint.
func (e *env) spotVictimOf(t *testing.T, pods []corev1.Pod) spotVictim {
	t.Helper()
	perNode := map[string]int{}
	for _, p := range pods {
		perNode[p.Spec.NodeName]++
	}
	var victim corev1.Node
	for name, n := range perNode {
		if victim.Name == "" || n > perNode[victim.Name] {
			victim.Name = name
		}
	}
	if err := e.kube.Get(e.ctx, clientKey(victim.Name), &victim); err != nil {
		t.Fatal(err)
	}
	if ct := victim.Labels[apisv1.CapacityTypeLabelKey]; ct != apisv1.CapacityTypeSpot {
		t.Fatalf("node %s is %s, want spot", victim.Name, ct)
	}
	interrupted := cloudprovider.Offering{InstanceType: victim.Labels[apisv1.LabelInstanceType], Zone: victim.Labels[apisv1.LabelZone], CapacityType: apisv1.CapacityTypeSpot}
	before := map[string]bool{}
	var victimClaim string
	for _, c := range e.nodeClaims() {
		before[c.Name] = true
		if c.Status.ProviderID == victim.Spec.ProviderID {
			victimClaim = c.Name
		}
	}
	if victimClaim == "" {
		t.Fatalf("no NodeClaim has the provider ID %s of node %s", victim.Spec.ProviderID, victim.Name)
	}
	taintSeen := e.watchNodeTaint(victim.Name)
	return spotVictim{node: victim, offering: interrupted, claim: victimClaim, before: before, taintSeen: taintSeen}
}

// drainedBeforeDeadline waits until the victim's node is gone and checks what handling its
// interruption (a notice given at, due at deadline) must have done: gone before the deadline,
// tainted first, app's replicas running elsewhere, never more of them down than the PDB's one,
// no pod deleted without eviction, a replacement bought through another offering, and the
// interrupted offering marked unavailable. notice names the message in errors.
func (e *env) drainedBeforeDeadline(t *testing.T, v spotVictim, app string, replicas int, at, deadline time.Time, notice string) {
	t.Helper()
	victim, interrupted := v.node, v.offering
	var fewest atomic.Int64
	fewest.Store(int64(replicas))
	var gone time.Time
	e.eventually(100*time.Second, "the interrupted node gone", func() (bool, string) {
		var l corev1.PodList
		if err := e.kube.List(e.ctx, &l, client.InNamespace("default"), client.MatchingLabels{"app": app}); err == nil {
			if n := int64(readyPods(l.Items)); n < fewest.Load() {
				fewest.Store(n)
			}
		}
		var n corev1.Node
		if err := e.kube.Get(e.ctx, clientKey(victim.Name), &n); err == nil {
			return false, fmt.Sprintf("node %s still there (taints %v)", n.Name, n.Spec.Taints)
		}
		gone = time.Now()
		return true, ""
	})
	if !gone.Before(deadline) {
		t.Errorf("the node went at %v, not before the %s's deadline %v", gone, notice, deadline)
	}
	t.Logf("the interrupted node was gone %v after the %s", gone.Sub(at).Round(100*time.Millisecond), notice)
	select {
	case <-v.taintSeen:
	default:
		t.Errorf("node %s was never tainted %s", victim.Name, apisv1.DisruptedNoScheduleTaint.ToString())
	}

	pods := e.podsRunning(app, replicas, 60*time.Second)
	for _, p := range pods {
		if p.Spec.NodeName == victim.Name {
			t.Errorf("pod %s still runs on the interrupted node", p.Name)
		}
	}
	if f := fewest.Load(); f < int64(replicas)-1 {
		t.Errorf("only %d of %d pods were ready at one point; the PDB allows one down", f, replicas)
	}
	if evs := e.events(termination.ReasonDeleted); len(evs) > 0 {
		t.Errorf("pods were deleted without eviction (%s: %s): the drain ran out of time", evs[0].InvolvedObject.Name, evs[0].Message)
	}

	// A replacement was launched, through another offering.
	var replacements []string
	for _, c := range e.nodeClaims() {
		if v.before[c.Name] {
			continue
		}
		replacements = append(replacements, c.Name)
		o := cloudprovider.Offering{InstanceType: c.Labels[apisv1.LabelInstanceType], Zone: c.Labels[apisv1.LabelZone], CapacityType: c.Labels[apisv1.CapacityTypeLabelKey]}
		if o == interrupted {
			t.Errorf("replacement %s was bought through the interrupted offering %s", c.Name, o)
		}
	}
	if len(replacements) == 0 {
		t.Error("no replacement NodeClaim was launched")
	}
	t.Logf("replacements launched: %v", replacements)
	if !e.op.Unavailable.IsUnavailable(interrupted.InstanceType, interrupted.Zone, interrupted.CapacityType) {
		t.Errorf("the interrupted offering %s is not marked unavailable", interrupted)
	}
}

// readyPods counts the pods that are Running and Ready.
func readyPods(pods []corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				n++
			}
		}
	}
	return n
}

// watchNodeTaint returns a channel closed once the Node called name is seen with the
// karpenter.sh/disrupted:NoSchedule taint. It watches, so that a taint that comes and goes
// between two polls is not missed.
func (e *env) watchNodeTaint(name string) <-chan struct{} {
	e.t.Helper()
	wc, err := client.NewWithWatch(e.cp.RESTConfig(), client.Options{Scheme: operator.Scheme})
	if err != nil {
		e.t.Fatal(err)
	}
	w, err := wc.Watch(e.ctx, &corev1.NodeList{}, client.MatchingFields{"metadata.name": name})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(w.Stop)
	seen := make(chan struct{})
	go func() {
		for ev := range w.ResultChan() {
			n, ok := ev.Object.(*corev1.Node)
			if ok && slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&apisv1.DisruptedNoScheduleTaint) }) {
				close(seen)
				return
			}
		}
	}()
	return seen
}

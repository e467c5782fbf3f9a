package e2e

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	disruptionctrl "github.com/tenon-sh/tenon/pkg/controllers/disruption"
	"github.com/tenon-sh/tenon/pkg/operator"
)

// disruptionOptions runs the disruption loop fast: a pass every second, commands validated a
// second after they are found.
func disruptionOptions() operator.Options {
	var o operator.Options
	o.Disruption.PassInterval = time.Second
	o.Disruption.ValidationDelay = time.Second
	o.Disruption.ReplacementTimeout = time.Minute
	return o
}

// inPool pins a deployment's pods to a nodepool.
func inPool(pool string) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{apisv1.NodePoolLabelKey: pool} }
}

// spreadByHost keeps a deployment's pods on different nodes.
func spreadByHost(app string) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) {
		s.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
			{TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
		}}}
	}
}

// budgets sets a nodepool's disruption budgets.
func budgets(bs ...apisv1.Budget) func(*apisv1.NodePool) {
	return func(np *apisv1.NodePool) { np.Spec.Disruption.Budgets = bs }
}

func (e *env) scale(name string, replicas int32) {
	e.t.Helper()
	d := &appsv1.Deployment{}
	if err := e.kube.Get(e.ctx, client.ObjectKey{Namespace: "default", Name: name}, d); err != nil {
		e.t.Fatal(err)
	}
	orig := d.DeepCopy()
	d.Spec.Replicas = &replicas
	if err := e.kube.Patch(e.ctx, d, client.MergeFrom(orig)); err != nil {
		e.t.Fatalf("scaling %s to %d: %v", name, replicas, err)
	}
}

func (e *env) poolClaims(pool string) []apisv1.NodeClaim {
	e.t.Helper()
	var l apisv1.NodeClaimList
	if err := e.kube.List(e.ctx, &l, client.MatchingLabels{apisv1.NodePoolLabelKey: pool}); err != nil {
		e.t.Fatal(err)
	}
	return l.Items
}

func (e *env) node(name string) *corev1.Node {
	e.t.Helper()
	n := &corev1.Node{}
	if err := e.kube.Get(e.ctx, clientKey(name), n); err != nil {
		return nil
	}
	return n
}

// disrupting returns the nodepool's NodeClaims that are being disrupted: deleted, or with a
// node tainted karpenter.sh/disrupted.
func (e *env) disrupting(pool string) []string {
	e.t.Helper()
	tainted := map[string]bool{}
	for _, n := range e.nodes() {
		if n.Labels[apisv1.NodePoolLabelKey] == pool && disruptionctrl.HasDisruptedTaint(&n) {
			tainted[n.Spec.ProviderID] = true
		}
	}
	var out []string
	for _, c := range e.poolClaims(pool) {
		if c.DeletionTimestamp != nil || (c.Status.ProviderID != "" && tainted[c.Status.ProviderID]) {
			out = append(out, c.Name)
		}
	}
	sort.Strings(out)
	return out
}

// holds polls cond for the whole window and fails at the first poll where it does not hold.
func (e *env) holds(window time.Duration, what string, cond func() (bool, string)) {
	e.t.Helper()
	deadline := time.Now().Add(window)
	for time.Now().Before(deadline) {
		if ok, msg := cond(); !ok {
			e.t.Fatalf("%s stopped holding: %s", what, msg)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// nodeOf returns the node a running pod of app is on.
func (e *env) nodeOf(app string) string {
	e.t.Helper()
	pods := e.podsRunning(app, 1, 90*time.Second)
	return pods[0].Spec.NodeName
}

// hasEvent reports whether an event with reason about the object called name carries all of
// the words in its message.
func (e *env) hasEvent(reason, name string, words ...string) bool {
	for _, ev := range e.events(reason) {
		if ev.InvolvedObject.Name != name {
			continue
		}
		all := true
		for _, w := range words {
			all = all && strings.Contains(ev.Message, w)
		}
		if all {
			return true
		}
	}
	return false
}

// underutilized makes one node of nodepool "small" that holds app (1.5 cpu) next to a 5-cpu
// filler: an m5.2xlarge, which app alone leaves underutilized once the filler is gone. It
// returns the node's name.
func underutilized(e *env, podMutate ...func(*corev1.PodSpec)) string {
	e.t.Helper()
	e.create(nodeClass("default"), nodePool("small", "default", []string{"m5"}, budgets(apisv1.Budget{Nodes: "100%"})),
		deployment("filler", 1, "5", "1Gi", inPool("small")),
		deployment("app", 1, "1500m", "1Gi", append([]func(*corev1.PodSpec){inPool("small")}, podMutate...)...))
	e.podsRunning("filler", 1, 90*time.Second)
	node := e.nodeOf("app")
	if n := e.node(node); n == nil || n.Labels[apisv1.LabelInstanceType] != "m5.2xlarge" {
		e.t.Fatalf("want app and filler on one m5.2xlarge, app is on %s", node)
	}
	return node
}

// untouched says whether a node is still there, untainted, with its claim not deleted.
func (e *env) untouched(node string) (bool, string) {
	n := e.node(node)
	if n == nil {
		return false, "node " + node + " is gone"
	}
	if disruptionctrl.HasDisruptedTaint(n) {
		return false, "node " + node + " is tainted disrupted"
	}
	for _, c := range e.nodeClaims() {
		if c.Status.NodeName == node && c.DeletionTimestamp != nil {
			return false, "claim " + c.Name + " is being deleted"
		}
	}
	return true, ""
}

// scaleDownConsolidates scales spread to one pod and filler to none, then waits until the
// empty wide nodes are gone and the underutilized node big (holding app) is replaced by one
// m5.large that app runs on.
func (e *env) scaleDownConsolidates(big string, timeout time.Duration) {
	e.t.Helper()
	t := e.t
	e.scale("spread", 1)
	e.scale("filler", 0)
	e.eventually(timeout, "the empty nodes deleted and the underutilized node replaced", func() (bool, string) {
		wide, small := e.poolClaims("wide"), e.poolClaims("small")
		var state []string
		for _, c := range append(wide, small...) {
			state = append(state, claimState(&c)+c.Labels[apisv1.LabelInstanceType])
		}
		if len(wide) != 1 || len(small) != 1 || e.node(big) != nil {
			return false, strings.Join(state, " ")
		}
		return small[0].Labels[apisv1.LabelInstanceType] == "m5.large" && small[0].DeletionTimestamp == nil, strings.Join(state, " ")
	})
	e.podsRunning("spread", 1, 60*time.Second)
	if node := e.nodeOf("app"); e.node(node).Labels[apisv1.LabelInstanceType] != "m5.large" {
		t.Errorf("app runs on %s, not on the cheaper replacement", node)
	}
}

// Scaling down deletes the nodes left empty and replaces a node left underutilized by a cheaper
// one; every pod keeps running.
func TestDisruptionScaleDownDeletesEmptyAndReplacesUnderutilized(t *testing.T) {
	e := start(t, disruptionOptions())
	e.create(nodePool("wide", "default", []string{"m5"}, budgets(apisv1.Budget{Nodes: "100%"})),
		deployment("spread", 3, "3", "1Gi", inPool("wide"), spreadByHost("spread")))
	big := underutilized(e)
	e.podsRunning("spread", 3, 90*time.Second)
	if n := len(e.poolClaims("wide")); n != 3 {
		t.Fatalf("want three nodes for three spread pods, got %d", n)
	}

	e.scaleDownConsolidates(big, 90*time.Second)
	if !slices.ContainsFunc(e.events(disruptionctrl.EventTerminating), func(ev corev1.Event) bool { return strings.Contains(ev.Message, "Emptiness") }) {
		t.Error("no DisruptionTerminating event for emptiness")
	}
	if !e.hasEvent(disruptionctrl.EventLaunching, big, "Consolidation", "m5.large") {
		t.Errorf("no DisruptionLaunching event on %s naming the replacement", big)
	}
	if !e.hasEvent(disruptionctrl.EventWaitingReadiness, big) {
		t.Errorf("no DisruptionWaitingReadiness event on %s", big)
	}
}

// A PodDisruptionBudget that allows no eviction holds an underutilized node; once it is gone,
// the node is replaced.
func TestDisruptionPDBBlocks(t *testing.T) {
	e := start(t, disruptionOptions())
	e.create(&policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "app"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: new(intstr.FromInt32(0)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "app"}}},
	})
	node := underutilized(e)
	e.scale("filler", 0)
	e.eventually(30*time.Second, "a DisruptionBlocked event naming the PodDisruptionBudget", func() (bool, string) {
		if ok, msg := e.untouched(node); !ok {
			t.Fatalf("the node was disrupted despite the PDB: %s", msg)
		}
		return e.hasEvent(disruptionctrl.EventBlocked, node, "PodDisruptionBudget default/app"), "no such event yet"
	})
	e.holds(8*time.Second, "the PDB holding the node", func() (bool, string) { return e.untouched(node) })

	if err := e.kube.Delete(e.ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "app"}}); err != nil {
		t.Fatal(err)
	}
	e.eventually(60*time.Second, "the node replaced once the PDB is gone", func() (bool, string) {
		return e.node(node) == nil, fmt.Sprintf("claims %v", e.disrupting("small"))
	})
	e.podsRunning("app", 1, 60*time.Second)
}

// A budget of one node lets only one node be disrupting at a time, however many are empty.
func TestDisruptionBudgetOfOneSerializes(t *testing.T) {
	e := start(t, disruptionOptions())
	e.create(nodeClass("default"), nodePool("one", "default", []string{"m5"}, budgets(apisv1.Budget{Nodes: "1"})),
		deployment("spread", 4, "3", "1Gi", inPool("one"), spreadByHost("spread")))
	e.podsRunning("spread", 4, 90*time.Second)
	if n := len(e.poolClaims("one")); n != 4 {
		t.Fatalf("want four nodes, got %d", n)
	}
	e.scale("spread", 0)
	seen := e.watchDisrupting("one")
	e.eventually(120*time.Second, "the empty nodes all removed", func() (bool, string) {
		left := e.poolClaims("one")
		return len(left) == 0, fmt.Sprintf("%d claims left", len(left))
	})
	if most, at := seen.most(); most != 1 {
		t.Errorf("at most %d nodes disrupting at once, want exactly 1 (%v)", most, at)
	}
}

// concurrentDisruption records, from watches rather than polls, the most NodeClaims of one pool that
// were being disrupted at the same moment.
type concurrentDisruption struct {
	mu      sync.Mutex
	claims  map[string]string // claim name → provider ID, while the claim exists
	deleted map[string]bool   // claims with a deletion timestamp
	tainted map[string]bool   // provider IDs of nodes with the disrupted taint
	peak    int
	peakAt  []string
}

// watchDisrupting watches the pool's NodeClaims and the cluster's Nodes for the rest of the test.
// A claim counts as disrupting while it exists and is being deleted or its node carries the
// karpenter.sh/disrupted taint; every watch event updates the count, so a disruption that
// starts and ends between two polls is still seen.
func (e *env) watchDisrupting(pool string) *concurrentDisruption {
	e.t.Helper()
	wc, err := client.NewWithWatch(e.cp.RESTConfig(), client.Options{Scheme: operator.Scheme})
	if err != nil {
		e.t.Fatal(err)
	}
	cw, err := wc.Watch(e.ctx, &apisv1.NodeClaimList{}, client.MatchingLabels{apisv1.NodePoolLabelKey: pool})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(cw.Stop)
	nw, err := wc.Watch(e.ctx, &corev1.NodeList{}, client.MatchingLabels{apisv1.NodePoolLabelKey: pool})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(nw.Stop)
	d := &concurrentDisruption{claims: map[string]string{}, deleted: map[string]bool{}, tainted: map[string]bool{}}
	go func() {
		for ev := range cw.ResultChan() {
			c, ok := ev.Object.(*apisv1.NodeClaim)
			if !ok {
				continue
			}
			d.mu.Lock()
			if ev.Type == watch.Deleted {
				delete(d.claims, c.Name)
				delete(d.deleted, c.Name)
			} else {
				d.claims[c.Name] = c.Status.ProviderID
				d.deleted[c.Name] = c.DeletionTimestamp != nil
			}
			d.count()
			d.mu.Unlock()
		}
	}()
	go func() {
		for ev := range nw.ResultChan() {
			n, ok := ev.Object.(*corev1.Node)
			if !ok {
				continue
			}
			d.mu.Lock()
			d.tainted[n.Spec.ProviderID] = ev.Type != watch.Deleted && disruptionctrl.HasDisruptedTaint(n)
			d.count()
			d.mu.Unlock()
		}
	}()
	return d
}

// count updates the peak; the caller holds mu.
func (d *concurrentDisruption) count() {
	var now []string
	for name, pid := range d.claims {
		if d.deleted[name] || (pid != "" && d.tainted[pid]) {
			now = append(now, name)
		}
	}
	if len(now) > d.peak {
		sort.Strings(now)
		d.peak, d.peakAt = len(now), now
	}
}

// most returns the peak and the claims disrupting at it.
func (d *concurrentDisruption) most() (int, []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.peak, d.peakAt
}

// allowedOnlyFrom returns the budgets that allow disruption only in the hour from at: a zero
// budget covering the other 23 hours of each day.
func allowedOnlyFrom(at time.Time) apisv1.Budget {
	end := at.Add(time.Hour).UTC()
	schedule := fmt.Sprintf("%d %d * * *", end.Minute(), end.Hour())
	return apisv1.Budget{Nodes: "0", Schedule: &schedule, Duration: &metav1.Duration{Duration: 23 * time.Hour}}
}

// Disruption allowed only in a daily window is blocked outside it: an empty node stays while
// the window is two hours away, and goes once the window is moved over now.
func TestDisruptionScheduleWindowBlocksOutsideIt(t *testing.T) {
	e := start(t, disruptionOptions())
	e.create(nodeClass("default"), nodePool("windowed", "default", []string{"m5"}, budgets(allowedOnlyFrom(time.Now().Add(2*time.Hour)))),
		deployment("spread", 2, "3", "1Gi", inPool("windowed"), spreadByHost("spread")))
	e.podsRunning("spread", 2, 90*time.Second)
	e.scale("spread", 1)
	kept := e.podsRunning("spread", 1, 60*time.Second)[0].Spec.NodeName
	var empty string
	for _, c := range e.poolClaims("windowed") {
		if c.Status.NodeName != kept {
			empty = c.Status.NodeName
		}
	}
	e.eventually(30*time.Second, "the empty node blocked by the budget", func() (bool, string) {
		for _, c := range e.poolClaims("windowed") {
			if ok, msg := e.untouched(c.Status.NodeName); !ok {
				t.Fatalf("a node was disrupted outside the window: %s", msg)
			}
		}
		return e.hasEvent(disruptionctrl.EventBlocked, empty, "budgets of nodepool windowed"), "no DisruptionBlocked event on " + empty
	})
	e.holds(6*time.Second, "the window holding the empty node", func() (bool, string) { return e.untouched(empty) })
	e.podsRunning("spread", 1, 30*time.Second)

	np := &apisv1.NodePool{}
	if err := e.kube.Get(e.ctx, clientKey("windowed"), np); err != nil {
		t.Fatal(err)
	}
	orig := np.DeepCopy()
	np.Spec.Disruption.Budgets = []apisv1.Budget{allowedOnlyFrom(time.Now().Add(-10 * time.Minute))}
	if err := e.kube.Patch(e.ctx, np, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	e.eventually(60*time.Second, "the empty node deleted inside the window", func() (bool, string) {
		return e.node(empty) == nil && len(e.poolClaims("windowed")) == 1, fmt.Sprintf("%d claims", len(e.poolClaims("windowed")))
	})
	e.podsRunning("spread", 1, 30*time.Second)
}

// karpenter.sh/do-not-disrupt on a pod holds its underutilized node until it is removed.
func TestDisruptionDoNotDisruptPodHoldsNode(t *testing.T) {
	e := start(t, disruptionOptions())
	node := underutilized(e)
	pod := e.podsRunning("app", 1, 30*time.Second)[0]
	orig := pod.DeepCopy()
	pod.Annotations = map[string]string{apisv1.DoNotDisruptAnnotationKey: "true"}
	if err := e.kube.Patch(e.ctx, &pod, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	e.scale("filler", 0)
	e.eventually(30*time.Second, "a DisruptionBlocked event naming the pod", func() (bool, string) {
		if ok, msg := e.untouched(node); !ok {
			t.Fatalf("the node was disrupted despite do-not-disrupt: %s", msg)
		}
		return e.hasEvent(disruptionctrl.EventBlocked, node, pod.Name, apisv1.DoNotDisruptAnnotationKey), "no such event yet"
	})
	e.holds(6*time.Second, "do-not-disrupt holding the node", func() (bool, string) { return e.untouched(node) })

	orig = pod.DeepCopy()
	pod.Annotations = map[string]string{}
	if err := e.kube.Patch(e.ctx, &pod, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	e.eventually(60*time.Second, "the node replaced once the annotation is gone", func() (bool, string) {
		return e.node(node) == nil, fmt.Sprintf("disrupting %v", e.disrupting("small"))
	})
	e.podsRunning("app", 1, 60*time.Second)
}

// Changing a nodepool's template drifts its nodes: each is replaced by a node of the new
// template, and the claims record why.
func TestDisruptionTemplateChangeDrifts(t *testing.T) {
	e := start(t, disruptionOptions())
	e.create(nodeClass("default"), nodePool("drifty", "default", []string{"m5"}, budgets(apisv1.Budget{Nodes: "100%"})),
		deployment("spread", 2, "3", "1Gi", inPool("drifty"), spreadByHost("spread")))
	e.podsRunning("spread", 2, 90*time.Second)
	old := map[string]bool{}
	for _, c := range e.poolClaims("drifty") {
		old[c.Name] = true
	}
	np := &apisv1.NodePool{}
	if err := e.kube.Get(e.ctx, clientKey("drifty"), np); err != nil {
		t.Fatal(err)
	}
	orig := np.DeepCopy()
	np.Spec.Template.Labels = map[string]string{"team": "blue"}
	if err := e.kube.Patch(e.ctx, np, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	e.eventually(90*time.Second, "every node replaced by one of the new template", func() (bool, string) {
		var state []string
		done := true
		for _, c := range e.poolClaims("drifty") {
			if cond := c.GetCondition(apisv1.ConditionTypeDisruptionReason); cond != nil {
				reasons[c.Name] = cond.Reason
			}
			state = append(state, claimState(&c))
			done = done && !old[c.Name] && c.Labels["team"] == "blue"
		}
		return done, strings.Join(state, " ")
	})
	e.podsRunning("spread", 2, 60*time.Second)
	for _, n := range e.nodes() {
		if n.Labels[apisv1.NodePoolLabelKey] == "drifty" && n.Labels["team"] != "blue" {
			t.Errorf("node %s does not carry the new template's label", n.Name)
		}
	}
	if !slices.ContainsFunc(e.events(disruptionctrl.EventTerminating), func(ev corev1.Event) bool { return strings.Contains(ev.Message, "drifted") }) {
		t.Error("no DisruptionTerminating event for drift")
	}
	for name, r := range reasons {
		if r != string(apisv1.DisruptionReasonDrifted) {
			t.Errorf("claim %s was disrupted with reason %q", name, r)
		}
	}
}

// A node whose expireAfter runs out is replaced, and its pod moves to the replacement.
func TestDisruptionExpireAfterReplaces(t *testing.T) {
	e := start(t, disruptionOptions())
	e.create(nodeClass("default"), nodePool("short", "default", []string{"m5"}, func(np *apisv1.NodePool) {
		np.Spec.Template.Spec.ExpireAfter = apisv1.NewNillableDuration(20 * time.Second)
		np.Spec.Disruption.ConsolidateAfter = apisv1.NewNillableDuration(time.Hour) // only expiration acts
	}), deployment("app", 1, "1", "1Gi", inPool("short")))
	first := e.nodeOf("app")
	var claim string
	for _, c := range e.poolClaims("short") {
		claim = c.Name
	}
	e.eventually(90*time.Second, "the expired node replaced", func() (bool, string) {
		pods := e.podsRunning("app", 1, 60*time.Second)
		return e.node(first) == nil && pods[0].Spec.NodeName != first, "node " + first + " still there"
	})
	if !e.hasEvent(disruptionctrl.EventTerminating, claim, "Expiration", "expired at") {
		t.Errorf("no DisruptionTerminating event on claim %s for expiration", claim)
	}
}

// The controller stopped in the middle of a command (a node tainted, its replacement
// starting) and started again leaves no node tainted for good and loses no pod: the new
// process removes the orphaned taint and finishes the work.
func TestDisruptionControllerKilledMidCommand(t *testing.T) {
	e := start(t, disruptionOptions())
	e.create(nodeClass("slow", func(nc *simv1alpha1.SimNodeClass) { nc.Spec.BootDelay = &metav1.Duration{Duration: 5 * time.Second} }),
		nodePool("drifty", "slow", []string{"m5"}, budgets(apisv1.Budget{Nodes: "100%"})),
		deployment("spread", 2, "3", "1Gi", inPool("drifty"), spreadByHost("spread")))
	e.podsRunning("spread", 2, 90*time.Second)
	old := map[string]bool{}
	for _, c := range e.poolClaims("drifty") {
		old[c.Name] = true
	}
	np := &apisv1.NodePool{}
	if err := e.kube.Get(e.ctx, clientKey("drifty"), np); err != nil {
		t.Fatal(err)
	}
	orig := np.DeepCopy()
	np.Spec.Template.Labels = map[string]string{"team": "blue"}
	if err := e.kube.Patch(e.ctx, np, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	// Wait for a command between its taint and its deletion, and stop the controller there.
	var victim string
	e.eventually(30*time.Second, "a node tainted by a running command", func() (bool, string) {
		claims := map[string]apisv1.NodeClaim{}
		for _, c := range e.poolClaims("drifty") {
			claims[c.Status.ProviderID] = c
		}
		for _, n := range e.nodes() {
			if c, ok := claims[n.Spec.ProviderID]; ok && c.DeletionTimestamp == nil && disruptionctrl.HasDisruptedTaint(&n) {
				victim = n.Name
				return true, ""
			}
		}
		return false, "none yet"
	})
	e.stop()
	t.Logf("stopped the controller with %s tainted", victim)
	e.startOperator()

	e.eventually(30*time.Second, "the orphaned taint removed, or the node on its way out", func() (bool, string) {
		n := e.node(victim)
		if n == nil || !disruptionctrl.HasDisruptedTaint(n) {
			return true, ""
		}
		for _, c := range e.poolClaims("drifty") {
			if c.Status.NodeName == victim && c.DeletionTimestamp != nil {
				return true, ""
			}
		}
		return false, victim + " still tainted"
	})
	e.eventually(120*time.Second, "the drift finished with no node left tainted", func() (bool, string) {
		var state []string
		done := true
		for _, c := range e.poolClaims("drifty") {
			state = append(state, claimState(&c))
			done = done && !old[c.Name] && c.DeletionTimestamp == nil
		}
		for _, n := range e.nodes() {
			if disruptionctrl.HasDisruptedTaint(&n) {
				done = false
				state = append(state, "tainted:"+n.Name)
			}
		}
		return done, strings.Join(state, " ")
	})
	e.podsRunning("spread", 2, 60*time.Second)
	names := map[string]bool{}
	for _, c := range e.nodeClaims() {
		names[c.Name] = true
	}
	for _, in := range e.instances() {
		if in.Status.Phase != simv1alpha1.InstanceTerminated && !names[in.Spec.NodeClaim] {
			t.Errorf("instance %s belongs to no claim (%s): leaked", in.Name, in.Spec.NodeClaim)
		}
	}
}

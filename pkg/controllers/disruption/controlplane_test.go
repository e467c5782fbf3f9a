package disruption_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	disruptionctrl "github.com/tenon-sh/tenon/pkg/controllers/disruption"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/ctrltest"
	"github.com/tenon-sh/tenon/pkg/controllers/nodepool/static"
	"github.com/tenon-sh/tenon/pkg/disruption"
	"github.com/tenon-sh/tenon/pkg/events"
	"github.com/tenon-sh/tenon/pkg/state"
)

// TestOnControlPlane runs the controller against a real control plane with the simulated
// cloud and tenon's NodeClaim controllers.
func TestOnControlPlane(t *testing.T) {
	e := ctrltest.Start(t)
	t.Run("RollbackWhenReplacementNeverInitializes", func(t *testing.T) { testRollback(t, e) })
	t.Run("CleanupOrphanTaints", func(t *testing.T) { testCleanupOrphanTaints(t, e) })
	t.Run("OrphanTaintsCleanedWhileRunning", func(t *testing.T) { testOrphanTaintsWhileRunning(t, e) })
	t.Run("LastPodEventRecorded", func(t *testing.T) { testLastPodEventRecorded(t, e) })
	t.Run("DriftedConsolidatableAndUnconsolidatable", func(t *testing.T) { testClaimConditionsAndUnconsolidatable(t, e) })
	t.Run("StaticNodePoolDriftReplacesOneAtATime", func(t *testing.T) { testStaticDrift(t, e) })
	t.Run("WholePodGroupDriftsTogether", func(t *testing.T) { testWholeGroupDriftsTogether(t, e) })
}

// pool is a nodepool of m5 on-demand nodes that only drift disrupts.
func pool(name, class string) *apisv1.NodePool {
	np := &apisv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
	np.Spec.Template.Spec.NodeClassRef = ctrltest.NodeClassRef(class)
	np.Spec.Template.Spec.Requirements = []apisv1.NodeSelectorRequirementWithMinValues{
		ctrltest.Req(apisv1.LabelInstanceFamily, corev1.NodeSelectorOpIn, "m5"),
		ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand),
	}
	np.Spec.Disruption.ConsolidateAfter = apisv1.NillableDuration{} // Never
	np.Spec.Disruption.Budgets = []apisv1.Budget{{Nodes: "100%"}}
	return np
}

// claimOf creates an initialized m5.large NodeClaim of the nodepool, stamped with its hash, and
// returns its node's name.
func claimOf(t *testing.T, e *ctrltest.Env, np *apisv1.NodePool, name string) (string, *apisv1.NodeClaim) {
	t.Helper()
	stored := &apisv1.NodePool{}
	e.Get(t, "", np.Name, stored)
	nc := ctrltest.NewClaim(name, np.Name, np.Spec.Template.Spec.NodeClassRef.Name,
		ctrltest.Req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large"),
		ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand))
	nc.Labels[apisv1.LabelInstanceFamily] = "m5"
	nc.Annotations = map[string]string{apisv1.NodePoolHashAnnotationKey: stored.Hash(), apisv1.NodePoolHashVersionAnnotationKey: apisv1.NodePoolHashVersion}
	e.Create(t, nc)
	nc = e.WaitCondition(t, name, apisv1.ConditionTypeInitialized)
	return nc.Status.NodeName, nc
}

// runController starts a manager with the NodeClaim controllers and the disruption controller,
// its mirror following PodGroups too.
func runController(t *testing.T, e *ctrltest.Env, opts disruptionctrl.Options) (*ctrltest.Manager, *state.Cluster) {
	t.Helper()
	cluster := state.NewCluster(clock.RealClock{})
	mopts := ctrltest.FastOptions()
	mopts.Setup = func(mgr manager.Manager, m *ctrltest.Manager) error {
		if err := cluster.Register(context.Background(), mgr.GetCache()); err != nil {
			return err
		}
		if err := cluster.RegisterPodGroups(context.Background(), mgr.GetCache()); err != nil { // the control plane serves them
			return err
		}
		_, err := disruptionctrl.Register(mgr, disruptionctrl.Deps{
			Cluster: cluster, Cloud: m.Provider, Filter: m.Unavailable,
			Recorder: events.New(mgr.GetEventRecorderFor("tenon"), events.Options{}), //nolint:staticcheck // the provisioner records through the same API
		}, opts)
		return err
	}
	return e.StartManager(t, mopts), cluster
}

// A drift replacement that never initializes is rolled back: it is deleted, the candidate is
// untainted and unmarked, and then left alone for the failure backoff.
func testRollback(t *testing.T, e *ctrltest.Env) {
	e.NodeClass(t, "rollback", ctrltest.FastSpec())
	np := pool("rollback", "rollback")
	e.Create(t, np)
	results := make(chan disruptionctrl.CommandResult, 16)
	_, cluster := runController(t, e, disruptionctrl.Options{
		PassInterval: 300 * time.Millisecond, ValidationDelay: 200 * time.Millisecond,
		ReplacementTimeout: 3 * time.Second, FailureBackoff: time.Hour,
		OnCommand: func(r disruptionctrl.CommandResult) { results <- r },
	})
	node, claim := claimOf(t, e, np, "rollback-a")
	e.Namespace(t, "rollback")
	pod := ctrltest.NewPod("rollback", "app", node)
	pod.Spec.NodeSelector = map[string]string{apisv1.NodePoolLabelKey: np.Name} // movable to any node of the pool
	e.Create(t, pod)
	e.PodRunning(t, "rollback", "app", node)

	// The template gains a startup taint nothing removes: every node drifts, and a replacement
	// never initializes.
	patchPool(t, e, np.Name, func(stored *apisv1.NodePool) {
		stored.Spec.Template.Spec.StartupTaints = []corev1.Taint{{Key: "example.com/never", Effect: corev1.TaintEffectNoSchedule}}
	})

	var res disruptionctrl.CommandResult
	select {
	case res = <-results:
	case <-time.After(ctrltest.Timeout):
		t.Fatal("no command ended")
	}
	if res.Result != disruptionctrl.ResultFailed || len(res.Replacements) != 1 || res.Command.Candidates[0] != node ||
		!strings.Contains(fmt.Sprint(res.Err), "did not initialize") {
		t.Fatalf("want a failed drift replacement of %s that timed out, got %s %v replacements %v: %v",
			node, res.Result, res.Command.Candidates, res.Replacements, res.Err)
	}
	replacement := res.Replacements[0]
	e.WaitGone(t, "", replacement, &apisv1.NodeClaim{})
	if n := e.Node(t, node); n == nil || disruptionctrl.HasDisruptedTaint(n) {
		t.Errorf("the candidate must be back in service, untainted: %+v", n)
	}
	if c := e.Claim(t, claim.Name); c == nil || c.DeletionTimestamp != nil {
		t.Errorf("the candidate's claim must not be deleted: %+v", c)
	}
	if cluster.IsMarkedForDeletion(node) || cluster.IsMarkedForDeletion(claim.Name) {
		t.Error("the candidate is still marked for deletion")
	}
	e.WaitEvent(t, node, disruptionctrl.EventFailed)
	// Backing off: no command touches the node again.
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case r := <-results:
			t.Fatalf("a command ran during the backoff: %s on %v", r.Result, r.Command.Candidates)
		case <-time.After(100 * time.Millisecond):
		}
		if n := e.Node(t, node); n == nil || disruptionctrl.HasDisruptedTaint(n) {
			t.Fatal("the node was disrupted during the backoff")
		}
	}
}

// At start-up the taints no command owns are removed, except from nodes on their way out.
func testCleanupOrphanTaints(t *testing.T, e *ctrltest.Env) {
	ctx := context.Background()
	e.NodeClass(t, "orphans", ctrltest.FastSpec())
	np := pool("orphans", "orphans")
	e.Create(t, np)
	m, _ := runController(t, e, disruptionctrl.Options{Disabled: true})
	orphan, _ := claimOf(t, e, np, "orphans-a")
	leaving, leavingClaim := claimOf(t, e, np, "orphans-b")
	marked, markedClaim := claimOf(t, e, np, "orphans-c")
	m.Stop() // nothing else acts on the nodes from here on

	foreign := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "orphans-foreign"}, Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/i-0"},
		Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}
	e.Create(t, foreign)
	for _, name := range []string{orphan, leaving, marked, foreign.Name} {
		n := e.Node(t, name)
		orig := n.DeepCopy()
		n.Spec.Taints = append(n.Spec.Taints, apisv1.DisruptedNoScheduleTaint)
		if err := e.Client.Patch(ctx, n, client.MergeFrom(orig)); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Client.Delete(ctx, leavingClaim); err != nil { // held by its termination finalizer
		t.Fatal(err)
	}
	cluster := state.NewCluster(clock.RealClock{})
	cluster.MarkForDeletion(markedClaim.Name)
	c, err := disruptionctrl.New(disruptionctrl.Deps{Client: e.Client, Cluster: cluster, Cloud: m.Provider, Recorder: record.NewFakeRecorder(10)}, disruptionctrl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CleanupOrphanTaints(ctx); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{orphan: false, leaving: true, marked: true, foreign.Name: true} {
		if got := disruptionctrl.HasDisruptedTaint(e.Node(t, name)); got != want {
			t.Errorf("node %s tainted %v after the cleanup, want %v", name, got, want)
		}
	}
}

// A disrupted taint that appears while the controller runs, owned by no command, is removed
// within the orphan interval, not only at the next start-up.
func testOrphanTaintsWhileRunning(t *testing.T, e *ctrltest.Env) {
	ctx := context.Background()
	e.NodeClass(t, "late-orphans", ctrltest.FastSpec())
	np := pool("late-orphans", "late-orphans")
	e.Create(t, np)
	runController(t, e, disruptionctrl.Options{PassInterval: time.Hour, OrphanTaintInterval: 300 * time.Millisecond})
	name, _ := claimOf(t, e, np, "late-orphans-a")
	n := e.Node(t, name)
	orig := n.DeepCopy()
	n.Spec.Taints = append(n.Spec.Taints, apisv1.DisruptedNoScheduleTaint)
	if err := e.Client.Patch(ctx, n, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for disruptionctrl.HasDisruptedTaint(e.Node(t, name)) {
		if time.Now().After(deadline) {
			t.Fatalf("node %s still carries the orphaned disrupted taint after 15s", name)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A pod arriving on a node is recorded in its NodeClaim's status.lastPodEventTime, so that
// consolidateAfter survives a restart of the controller.
func testLastPodEventRecorded(t *testing.T, e *ctrltest.Env) {
	e.NodeClass(t, "podevents", ctrltest.FastSpec())
	np := pool("podevents", "podevents")
	e.Create(t, np)
	runController(t, e, disruptionctrl.Options{PassInterval: 300 * time.Millisecond})
	name, nc := claimOf(t, e, np, "podevents-a")
	before := time.Now().Add(-time.Second)
	e.Create(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "podevents-pod"},
		Spec: corev1.PodSpec{NodeName: name, Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := &apisv1.NodeClaim{}
		e.Get(t, "", nc.Name, got)
		if at := got.Status.LastPodEventTime.Time; !at.Before(before.Truncate(time.Second)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("status.lastPodEventTime of %s is %v after a pod arrived at about %v", nc.Name, got.Status.LastPodEventTime, before)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The disruption loop writes Karpenter's NodeClaim conditions: Consolidatable once
// consolidateAfter has passed, Drifted (with the drift's reason) while the claim no longer
// matches its nodepool, removed when it matches again; and a node consolidation looked at and
// left gets an Unconsolidatable event with the reason, on the Node and on the NodeClaim.
func testClaimConditionsAndUnconsolidatable(t *testing.T, e *ctrltest.Env) {
	ctx := context.Background()
	e.NodeClass(t, "conds", ctrltest.FastSpec())
	np := pool("conds", "conds")
	np.Spec.Disruption.ConsolidateAfter = apisv1.NewNillableDuration(0)
	e.Create(t, np)
	runController(t, e, disruptionctrl.Options{PassInterval: 300 * time.Millisecond})
	node, nc := claimOf(t, e, np, "conds-a")
	e.Namespace(t, "conds")
	pod := ctrltest.NewPod("conds", "app", node)
	pod.Spec.NodeSelector = map[string]string{apisv1.NodePoolLabelKey: np.Name}
	e.Create(t, pod)
	e.PodRunning(t, "conds", "app", node)

	// m5.large is the cheapest m5: the node can be neither deleted nor replaced for less.
	got := e.WaitCondition(t, nc.Name, apisv1.ConditionTypeConsolidatable)
	if got.IsTrue(apisv1.ConditionTypeDrifted) {
		t.Errorf("a claim matching its nodepool is Drifted: %+v", got.GetCondition(apisv1.ConditionTypeDrifted))
	}
	for _, name := range []string{node, nc.Name} {
		ev := e.WaitEvent(t, name, disruptionctrl.EventUnconsolidatable)
		if ev.Type != corev1.EventTypeNormal || ev.Message == "" {
			t.Errorf("Unconsolidatable event on %s: %s %q", name, ev.Type, ev.Message)
		}
	}

	// Keep the node (do-not-disrupt) and change the template: the claim is Drifted, not replaced.
	n := e.Node(t, node)
	orig := n.DeepCopy()
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[apisv1.DoNotDisruptAnnotationKey] = "true"
	if err := e.Client.Patch(ctx, n, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	setTemplateLabel := func(v string) {
		stored := &apisv1.NodePool{}
		e.Get(t, "", np.Name, stored)
		before := stored.DeepCopy()
		if v == "" {
			delete(stored.Spec.Template.Labels, "team")
		} else {
			stored.Spec.Template.Labels = map[string]string{"team": v}
		}
		if err := e.Client.Patch(ctx, stored, client.MergeFrom(before)); err != nil {
			t.Fatal(err)
		}
	}
	setTemplateLabel("blue")
	got = e.WaitCondition(t, nc.Name, apisv1.ConditionTypeDrifted)
	if c := got.GetCondition(apisv1.ConditionTypeDrifted); c.Reason != disruptionctrl.DriftNodePool {
		t.Errorf("Drifted reason %q, want %s", c.Reason, disruptionctrl.DriftNodePool)
	}
	setTemplateLabel("")
	ctrltest.Eventually(t, "the Drifted condition removed once the claim matches again", func() (bool, string) {
		c := e.Claim(t, nc.Name).GetCondition(apisv1.ConditionTypeDrifted)
		return c == nil, fmt.Sprintf("%+v", c)
	})
}

// A static nodepool of two whose template changes: drift replaces both nodes, one at a time as
// its budget of one node allows, each by one NodeClaim of the pool launched before the old one
// goes, while the static controller keeps the replicas without doubling or deleting a
// replacement.
func testStaticDrift(t *testing.T, e *ctrltest.Env) {
	ctx := context.Background()
	e.NodeClass(t, "static-drift", ctrltest.FastSpec())
	np := pool("static-drift", "static-drift")
	np.Spec.Replicas = new(int64(2))
	np.Spec.Disruption.Budgets = []apisv1.Budget{{Nodes: "1"}}
	e.Create(t, np)
	results := make(chan disruptionctrl.CommandResult, 256) // commands on earlier subtests' nodes arrive too
	cluster := state.NewCluster(clock.RealClock{})
	mopts := ctrltest.FastOptions()
	mopts.Setup = func(mgr manager.Manager, m *ctrltest.Manager) error {
		if err := cluster.Register(ctx, mgr.GetCache()); err != nil {
			return err
		}
		if err := static.Register(mgr, static.Deps{CloudProvider: m.Provider, Filter: m.Unavailable}, static.Options{}); err != nil {
			return err
		}
		_, err := disruptionctrl.Register(mgr, disruptionctrl.Deps{
			Cluster: cluster, Cloud: m.Provider, Filter: m.Unavailable,
			Recorder: events.New(mgr.GetEventRecorderFor("tenon"), events.Options{}), //nolint:staticcheck // the provisioner records through the same API
		}, disruptionctrl.Options{StaticCapacity: true, PassInterval: 300 * time.Millisecond, ValidationDelay: 200 * time.Millisecond,
			OnCommand: func(r disruptionctrl.CommandResult) { results <- r }})
		return err
	}
	e.StartManager(t, mopts)

	// live lists the pool's NodeClaims not being deleted, and how many of those are initialized.
	// ours holds the nodes of the pool's claims seen so far: the controller also disrupts the
	// nodes earlier subtests left behind, and those commands are not this test's.
	ours := map[string]bool{}
	live := func() (names []string, initialized int) {
		list := &apisv1.NodeClaimList{}
		if err := e.Client.List(ctx, list, client.MatchingLabels{apisv1.NodePoolLabelKey: np.Name}); err != nil {
			t.Fatal(err)
		}
		for _, nc := range list.Items {
			if nc.Status.NodeName != "" {
				ours[nc.Status.NodeName] = true
			}
			if nc.DeletionTimestamp.IsZero() {
				names = append(names, nc.Name)
				if nc.IsTrue(apisv1.ConditionTypeInitialized) {
					initialized++
				}
			}
		}
		return names, initialized
	}
	var first []string
	ctrltest.Eventually(t, "the static nodepool has its 2 initialized nodeclaims", func() (bool, string) {
		names, init := live()
		first = names
		return len(names) == 2 && init == 2, fmt.Sprintf("%v, %d initialized", names, init)
	})

	patchPool(t, e, np.Name, func(stored *apisv1.NodePool) {
		stored.Spec.Template.Labels = map[string]string{"example.com/revision": "2"}
	})
	ctrltest.Eventually(t, "both original nodeclaims are replaced", func() (bool, string) {
		names, init := live()
		if len(names) > 3 {
			t.Fatalf("%d live nodeclaims %v: more than the replicas and the one replacement the budget allows", len(names), names)
		}
		originals := 0
		for _, n := range names {
			for _, f := range first {
				if n == f {
					originals++
				}
			}
		}
		if originals < 1 && init < 1 {
			t.Fatalf("no original and no initialized replacement left: %v", names)
		}
		return originals == 0 && len(names) == 2 && init == 2, fmt.Sprintf("%v, %d initialized, %d originals", names, init, originals)
	})
	succeeded := 0
	ctrltest.Eventually(t, "two drift commands succeeded", func() (bool, string) {
		for {
			select {
			case r := <-results:
				if !slices.ContainsFunc(r.Command.Candidates, func(n string) bool { return ours[n] }) {
					continue // a node of an earlier subtest
				}
				if r.Result == disruptionctrl.ResultFailed {
					t.Fatalf("command %s of %v failed: %v", r.Command.Method, r.Command.Candidates, r.Err)
				}
				if r.Result != disruptionctrl.ResultSucceeded {
					continue
				}
				succeeded++
				if r.Command.Method != disruption.MethodDrift || len(r.Command.Candidates) != 1 ||
					len(r.Command.Replacements) != 1 || r.Command.Replacements[0].NodePool != np.Name {
					t.Errorf("command %s of %v with %d replacements; want a drift of one node replaced by one claim of %s",
						r.Command.Method, r.Command.Candidates, len(r.Command.Replacements), np.Name)
				}
			default:
				return succeeded == 2, fmt.Sprintf("%d succeeded", succeeded)
			}
		}
	})
}

// patchPool changes the stored NodePool called name with a merge patch.
func patchPool(t *testing.T, e *ctrltest.Env, name string, mutate func(*apisv1.NodePool)) {
	t.Helper()
	stored := &apisv1.NodePool{}
	e.Get(t, "", name, stored)
	orig := stored.DeepCopy()
	mutate(stored)
	if err := e.Client.Patch(context.Background(), stored, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
}

package termination_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/ctrltest"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/termination"
)

// TestOnControlPlane runs the controllers against a real control plane with the simulated
// cloud. The grace-period and Node-deletion cases run in parallel; the drain case, which
// restarts the manager half-way, runs after them.
func TestOnControlPlane(t *testing.T) {
	e := ctrltest.Start(t)
	opts := ctrltest.FastOptions()
	m := e.StartManager(t, opts)
	e.NodeClass(t, "term", ctrltest.FastSpec())
	t.Run("parallel", func(t *testing.T) {
		t.Run("TerminationGracePeriod", func(t *testing.T) { t.Parallel(); testGracePeriod(t, e) })
		t.Run("NodeDeletion", func(t *testing.T) { t.Parallel(); testNodeDeletion(t, e) })
		t.Run("EarlierAnnotatedTime", func(t *testing.T) { t.Parallel(); testEarlierAnnotatedTime(t, e) })
		t.Run("EarlierGracePeriod", func(t *testing.T) { t.Parallel(); testEarlierGracePeriod(t, e) })
		t.Run("WaitsForVolumeAttachments", func(t *testing.T) { t.Parallel(); testWaitsForVolumeAttachments(t, e, m) })
		t.Run("VolumeAttachmentsTimeOut", func(t *testing.T) { t.Parallel(); testVolumeAttachmentsTimeOut(t, e, m) })
		t.Run("InvalidDoNotDisruptIsReported", func(t *testing.T) { t.Parallel(); testInvalidDoNotDisrupt(t, e) })
	})
	t.Run("DrainAcrossRestart", func(t *testing.T) { testDrain(t, e, m, opts) })
}

// ready creates a NodeClaim of SimNodeClass term and waits until it is initialized; it
// returns the claim and its Node's name.
func ready(t *testing.T, e *ctrltest.Env, name string, mut func(*apisv1.NodeClaim)) (*apisv1.NodeClaim, string) {
	t.Helper()
	claim := ctrltest.NewClaim(name, "default", "term",
		ctrltest.Req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large"),
		ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand))
	if mut != nil {
		mut(claim)
	}
	e.Create(t, claim)
	claim = e.WaitCondition(t, name, apisv1.ConditionTypeInitialized)
	return claim, claim.Status.NodeName
}

func podExists(t *testing.T, e *ctrltest.Env, ns, name string) (*corev1.Pod, bool) {
	t.Helper()
	pod := &corev1.Pod{}
	return pod, e.Get(t, ns, name, pod)
}

func testDrain(t *testing.T, e *ctrltest.Env, m *ctrltest.Manager, opts ctrltest.Options) {
	ctx := context.Background()
	claim, node := ready(t, e, "drain-1", nil)
	e.Namespace(t, "drain")
	guarded := ctrltest.NewPod("drain", "guarded", node)
	critical := ctrltest.NewPod("drain", "critical", node)
	critical.Spec.PriorityClassName = "system-cluster-critical"
	tolerant := ctrltest.NewPod("drain", "tolerant", node, apisv1.DisruptedTaintKey)
	for _, p := range []*corev1.Pod{ctrltest.NewPod("drain", "plain", node), guarded, critical, tolerant} {
		e.Create(t, p)
	}
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "drain", Name: "guarded"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: &intstr.IntOrString{Type: intstr.Int, IntVal: 0},
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}},
		},
	}
	e.Create(t, pdb)
	for _, name := range []string{"plain", "guarded", "critical", "tolerant"} {
		e.PodRunning(t, "drain", name, node)
	}

	if err := e.Client.Delete(ctx, claim); err != nil {
		t.Fatal(err)
	}
	e.WaitGone(t, "drain", "plain", &corev1.Pod{})
	e.WaitEvent(t, "plain", termination.ReasonEvicted)
	e.WaitEvent(t, "guarded", termination.ReasonEvictionBlocked)
	ctrltest.Eventually(t, "the claim reports the drain", func() (bool, string) {
		c := e.Claim(t, claim.Name)
		cond := c.GetCondition(apisv1.ConditionTypeDrained)
		return cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason == termination.ReasonDraining, fmt.Sprintf("%+v", cond)
	})
	n := e.Node(t, node)
	if !slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&apisv1.DisruptedNoScheduleTaint) }) {
		t.Errorf("the draining Node is not tainted: %v", n.Spec.Taints)
	}
	// The PDB holds: a while later the guarded pod and, behind it, the critical one are
	// still there, not terminating.
	time.Sleep(time.Second)
	for _, name := range []string{"guarded", "critical"} {
		if p, ok := podExists(t, e, "drain", name); !ok || p.DeletionTimestamp != nil {
			t.Errorf("pod %s was removed while a PodDisruptionBudget blocks the non-critical pods", name)
		}
	}

	// A new controller picks the termination up where the old one stopped.
	m.Stop()
	m2 := e.StartManager(t, opts)
	if err := e.Client.Delete(ctx, pdb); err != nil {
		t.Fatal(err)
	}
	e.WaitGone(t, "drain", "guarded", &corev1.Pod{})
	e.WaitGone(t, "drain", "critical", &corev1.Pod{})
	e.WaitGone(t, "", claim.Name, &apisv1.NodeClaim{})
	e.WaitGone(t, "", node, &corev1.Node{})
	if len(e.Events(t, "tolerant", termination.ReasonEvicted)) > 0 {
		t.Error("the pod tolerating the disrupted taint was evicted")
	}
	if _, err := m2.Provider.Get(ctx, claim.Status.ProviderID); !cloudprovider.IsNodeClaimNotFound(err) {
		t.Errorf("the instance is still there: %v", err)
	}
	e.WaitEvent(t, claim.Name, termination.ReasonTerminated)
}

func testGracePeriod(t *testing.T, e *ctrltest.Env) {
	ctx := context.Background()
	claim, node := ready(t, e, "grace-1", func(c *apisv1.NodeClaim) { c.Spec.TerminationGracePeriod = ctrltest.Dur("5s") })
	e.Namespace(t, "grace")
	protected := ctrltest.NewPod("grace", "protected", node)
	protected.Annotations = map[string]string{apisv1.DoNotDisruptAnnotationKey: "true"}
	e.Create(t, protected)
	e.PodRunning(t, "grace", "protected", node)

	if err := e.Client.Delete(ctx, claim); err != nil {
		t.Fatal(err)
	}
	var deleted time.Time
	ctrltest.Eventually(t, "the claim is annotated with its termination time", func() (bool, string) {
		c := e.Claim(t, claim.Name)
		if c == nil {
			return false, "gone"
		}
		v := c.Annotations[apisv1.NodeTerminationTimestampAnnotationKey]
		deleted = c.DeletionTimestamp.Time
		return v == c.DeletionTimestamp.Add(5*time.Second).Format(time.RFC3339), v
	})
	time.Sleep(time.Until(deleted.Add(2500 * time.Millisecond)))
	if p, ok := podExists(t, e, "grace", "protected"); !ok || p.DeletionTimestamp != nil {
		t.Fatal("the do-not-disrupt pod was removed long before the terminationGracePeriod ran out")
	}
	if e.Claim(t, claim.Name) == nil {
		t.Fatal("the claim finished terminating while its do-not-disrupt pod runs")
	}
	e.WaitGone(t, "", claim.Name, &apisv1.NodeClaim{})
	// The pod's own 1s grace period starts 1s before the claim's runs out.
	if early := deleted.Add(4 * time.Second).Sub(time.Now()); early > 0 {
		t.Errorf("the claim was gone %v before its terminationGracePeriod allowed", early)
	}
	e.WaitEvent(t, "protected", termination.ReasonDeleted)
	e.WaitGone(t, "", node, &corev1.Node{})
}

func testNodeDeletion(t *testing.T, e *ctrltest.Env) {
	claim, node := ready(t, e, "nodedel-1", nil)
	if err := e.Client.Delete(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}); err != nil {
		t.Fatal(err)
	}
	e.WaitEvent(t, claim.Name, termination.ReasonNodeDeleted)
	e.WaitGone(t, "", claim.Name, &apisv1.NodeClaim{})
	e.WaitGone(t, "", node, &corev1.Node{})
}

// A termination time annotated before the deletion (as the interruption controller does with
// a notice's deadline) wins over a later terminationGracePeriod: the drain ends by it.
func testEarlierAnnotatedTime(t *testing.T, e *ctrltest.Env) {
	ctx := context.Background()
	claim, node := ready(t, e, "annotated-1", func(c *apisv1.NodeClaim) { c.Spec.TerminationGracePeriod = ctrltest.Dur("1h") })
	e.Namespace(t, "annotated")
	held := ctrltest.NewPod("annotated", "annotated-held", node)
	held.Annotations = map[string]string{apisv1.DoNotDisruptAnnotationKey: "true"}
	e.Create(t, held)
	e.PodRunning(t, "annotated", "annotated-held", node)

	by := time.Now().Add(4 * time.Second).UTC().Format(time.RFC3339)
	orig := claim.DeepCopy()
	claim.Annotations[apisv1.NodeTerminationTimestampAnnotationKey] = by
	if err := e.Client.Patch(ctx, claim, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	if err := e.Client.Delete(ctx, claim); err != nil {
		t.Fatal(err)
	}
	ev := e.WaitEvent(t, "annotated-held", termination.ReasonDeleted)
	at, _ := time.Parse(time.RFC3339, by)
	// The pod's 1s grace period starts 1s before the termination time; event times have
	// whole seconds.
	if earliest := at.Add(-2 * time.Second); ev.FirstTimestamp.Time.Before(earliest) {
		t.Errorf("the do-not-disrupt pod was deleted at %v, before %v", ev.FirstTimestamp.Time, earliest)
	}
	if c := e.Claim(t, claim.Name); c != nil && c.Annotations[apisv1.NodeTerminationTimestampAnnotationKey] != by {
		t.Errorf("the termination time became %q, want the earlier annotated %q", c.Annotations[apisv1.NodeTerminationTimestampAnnotationKey], by)
	}
	e.WaitGone(t, "", claim.Name, &apisv1.NodeClaim{})
	e.WaitGone(t, "", node, &corev1.Node{})
}

// A terminationGracePeriod that ends before an annotated termination time wins: the
// annotation is moved to the earlier time.
func testEarlierGracePeriod(t *testing.T, e *ctrltest.Env) {
	ctx := context.Background()
	claim, node := ready(t, e, "graceful-1", func(c *apisv1.NodeClaim) {
		c.Spec.TerminationGracePeriod = ctrltest.Dur("3s")
		c.Annotations = map[string]string{apisv1.NodeTerminationTimestampAnnotationKey: time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}
	})
	e.Namespace(t, "graceful")
	held := ctrltest.NewPod("graceful", "graceful-held", node)
	held.Annotations = map[string]string{apisv1.DoNotDisruptAnnotationKey: "true"}
	e.Create(t, held)
	e.PodRunning(t, "graceful", "graceful-held", node)
	if err := e.Client.Delete(ctx, claim); err != nil {
		t.Fatal(err)
	}
	ctrltest.Eventually(t, "the termination time is the deletion plus the grace period", func() (bool, string) {
		c := e.Claim(t, claim.Name)
		if c == nil {
			return false, "gone before the annotation was seen"
		}
		v := c.Annotations[apisv1.NodeTerminationTimestampAnnotationKey]
		return v == c.DeletionTimestamp.Add(3*time.Second).UTC().Format(time.RFC3339), v
	})
	e.WaitGone(t, "", claim.Name, &apisv1.NodeClaim{})
	e.WaitGone(t, "", node, &corev1.Node{})
}

// volumeAttachment creates a VolumeAttachment of persistent volume pv on node, as the CSI
// attacher would for an EBS volume.
func volumeAttachment(t *testing.T, e *ctrltest.Env, name, node, pv string) *storagev1.VolumeAttachment {
	t.Helper()
	va := &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: "ebs.csi.aws.com", NodeName: node,
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}},
	}
	e.Create(t, va)
	return va
}

func volumesDetached(t *testing.T, e *ctrltest.Env, name string) *metav1.Condition {
	t.Helper()
	c := e.Claim(t, name)
	if c == nil {
		return nil
	}
	return c.GetCondition(apisv1.ConditionTypeVolumesDetached)
}

// A terminating NodeClaim keeps its instance while a VolumeAttachment of its Node remains
// (VolumesDetached Unknown, an AwaitingVolumeDetachment event on the Node), and finishes once
// the attachment is gone.
func testWaitsForVolumeAttachments(t *testing.T, e *ctrltest.Env, m *ctrltest.Manager) {
	ctx := context.Background()
	claim, node := ready(t, e, "volumes-1", nil)
	va := volumeAttachment(t, e, "volumes-1-pv", node, "pv-volumes-1")
	if err := e.Client.Delete(ctx, claim); err != nil {
		t.Fatal(err)
	}
	ctrltest.Eventually(t, "the claim waits for the VolumeAttachment", func() (bool, string) {
		c := volumesDetached(t, e, claim.Name)
		return c != nil && c.Status == metav1.ConditionUnknown && c.Reason == termination.ReasonAwaitingVolumeDetachment, fmt.Sprintf("%+v", c)
	})
	e.WaitEvent(t, node, termination.ReasonAwaitingVolumeDetachment)
	time.Sleep(2 * time.Second)
	if _, err := m.Provider.Get(ctx, claim.Status.ProviderID); err != nil {
		t.Fatalf("the instance was deleted while a VolumeAttachment of its node remains: %v", err)
	}
	if e.Claim(t, claim.Name) == nil {
		t.Fatal("the claim finished terminating while a VolumeAttachment of its node remains")
	}
	if err := e.Client.Delete(ctx, va); err != nil {
		t.Fatal(err)
	}
	e.WaitGone(t, "", claim.Name, &apisv1.NodeClaim{})
	if _, err := m.Provider.Get(ctx, claim.Status.ProviderID); !cloudprovider.IsNodeClaimNotFound(err) {
		t.Errorf("the instance is still there once the VolumeAttachment went: %v", err)
	}
}

// With a terminationGracePeriod, the wait for VolumeAttachments ends with it: VolumesDetached
// turns False (TerminationGracePeriodElapsed) and the instance is deleted anyway.
func testVolumeAttachmentsTimeOut(t *testing.T, e *ctrltest.Env, m *ctrltest.Manager) {
	ctx := context.Background()
	claim, node := ready(t, e, "volumes-2", func(c *apisv1.NodeClaim) { c.Spec.TerminationGracePeriod = ctrltest.Dur("4s") })
	va := volumeAttachment(t, e, "volumes-2-pv", node, "pv-volumes-2")
	defer func() { _ = e.Client.Delete(ctx, va) }()
	var gone *apisv1.NodeClaim
	ctrltest.Eventually(t, "the claim records the timeout", func() (bool, string) {
		if gone == nil {
			if err := e.Client.Delete(ctx, claim); err != nil {
				return false, err.Error()
			}
			gone = claim
		}
		c := volumesDetached(t, e, claim.Name)
		return c == nil || c.Status == metav1.ConditionFalse && c.Reason == termination.ReasonGracePeriodElapsed, fmt.Sprintf("%+v", c)
	})
	e.WaitGone(t, "", claim.Name, &apisv1.NodeClaim{})
	if _, err := m.Provider.Get(ctx, claim.Status.ProviderID); !cloudprovider.IsNodeClaimNotFound(err) {
		t.Errorf("the instance is still there after the terminationGracePeriod: %v", err)
	}
	e.WaitEvent(t, claim.Name, termination.ReasonGracePeriodElapsed)
}

// A do-not-disrupt value that is neither "true" nor a duration protects nothing: the drain
// evicts the pod and says why with an InvalidDoNotDisruptAnnotation warning on it.
func testInvalidDoNotDisrupt(t *testing.T, e *ctrltest.Env) {
	claim, node := ready(t, e, "invalid-dnd-1", nil)
	e.Namespace(t, "invalid-dnd")
	pod := ctrltest.NewPod("invalid-dnd", "invalid-dnd-app", node)
	pod.Annotations = map[string]string{apisv1.DoNotDisruptAnnotationKey: "forever"}
	e.Create(t, pod)
	e.PodRunning(t, "invalid-dnd", "invalid-dnd-app", node)
	if err := e.Client.Delete(context.Background(), claim); err != nil {
		t.Fatal(err)
	}
	ev := e.WaitEvent(t, "invalid-dnd-app", termination.ReasonInvalidDoNotDisrupt)
	if ev.Type != corev1.EventTypeWarning || !strings.Contains(ev.Message, `"forever"`) {
		t.Errorf("event %s %q", ev.Type, ev.Message)
	}
	e.WaitEvent(t, "invalid-dnd-app", termination.ReasonEvicted)
	e.WaitGone(t, "", claim.Name, &apisv1.NodeClaim{})
}

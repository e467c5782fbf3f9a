package status_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/ctrltest"
	"github.com/tenon-sh/tenon/pkg/controllers/nodepool/status"
)

// TestOnControlPlane runs the controllers against a real control plane with the simulated
// cloud; the subtests share it and run in parallel.
func TestOnControlPlane(t *testing.T) {
	e := ctrltest.Start(t)
	e.StartManager(t, ctrltest.FastOptions())
	t.Run("parallel", func(t *testing.T) {
		t.Run("Counts", func(t *testing.T) { t.Parallel(); testCounts(t, e) })
		t.Run("NodeClassReadiness", func(t *testing.T) { t.Parallel(); testNodeClassReadiness(t, e) })
		t.Run("Validation", func(t *testing.T) { t.Parallel(); testValidation(t, e) })
	})
}

func newPool(name, nodeClass string, reqs ...apisv1.NodeSelectorRequirementWithMinValues) *apisv1.NodePool {
	reqs = append(reqs, ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand))
	return &apisv1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apisv1.NodePoolSpec{Template: apisv1.NodeClaimTemplate{Spec: apisv1.NodeClaimTemplateSpec{
			Requirements: reqs, NodeClassRef: ctrltest.NodeClassRef(nodeClass),
		}}},
	}
}

type want struct {
	nodes       int64
	cpu         int64
	ready       metav1.ConditionStatus
	nodeClass   metav1.ConditionStatus
	validation  metav1.ConditionStatus
	hashStamped bool
}

func (w want) String() string {
	return fmt.Sprintf("nodes=%d cpu=%d Ready=%s NodeClassReady=%s ValidationSucceeded=%s hash stamped=%v",
		w.nodes, w.cpu, w.ready, w.nodeClass, w.validation, w.hashStamped)
}

// waitPool waits until the NodePool's status and annotations are w.
func waitPool(t *testing.T, e *ctrltest.Env, name string, w want) *apisv1.NodePool {
	t.Helper()
	var np *apisv1.NodePool
	cond := func(t string) metav1.ConditionStatus {
		if c := np.GetCondition(t); c != nil {
			return c.Status
		}
		return ""
	}
	ctrltest.Eventually(t, "NodePool "+name+" reaches "+w.String(), func() (bool, string) {
		np = &apisv1.NodePool{}
		if !e.Get(t, "", name, np) {
			return false, "no NodePool"
		}
		got := want{ready: cond(apisv1.ConditionTypeReady), nodeClass: cond(apisv1.ConditionTypeNodeClassReady),
			validation: cond(apisv1.ConditionTypeValidationSucceeded),
			hashStamped: np.Annotations[apisv1.NodePoolHashAnnotationKey] == np.Hash() &&
				np.Annotations[apisv1.NodePoolHashVersionAnnotationKey] == apisv1.NodePoolHashVersion}
		if np.Status.Nodes != nil {
			got.nodes = *np.Status.Nodes
		}
		cpu := np.Status.Resources[corev1.ResourceCPU]
		got.cpu = cpu.Value()
		return got == w, got.String()
	})
	return np
}

func testCounts(t *testing.T, e *ctrltest.Env) {
	e.NodeClass(t, "counts", ctrltest.FastSpec())
	e.Create(t, newPool("counts", "counts"))
	ok := metav1.ConditionTrue
	waitPool(t, e, "counts", want{ready: ok, nodeClass: ok, validation: ok, hashStamped: true})
	for _, name := range []string{"counts-1", "counts-2"} {
		e.Create(t, ctrltest.NewClaim(name, "counts", "counts",
			ctrltest.Req(apisv1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large"),
			ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand)))
	}
	for _, name := range []string{"counts-1", "counts-2"} {
		e.WaitCondition(t, name, apisv1.ConditionTypeInitialized)
	}
	waitPool(t, e, "counts", want{nodes: 2, cpu: 4, ready: ok, nodeClass: ok, validation: ok, hashStamped: true})

	if err := e.Client.Delete(context.Background(), &apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "counts-1"}}); err != nil {
		t.Fatal(err)
	}
	e.WaitGone(t, "", "counts-1", &apisv1.NodeClaim{})
	waitPool(t, e, "counts", want{nodes: 1, cpu: 2, ready: ok, nodeClass: ok, validation: ok, hashStamped: true})

	// A template change moves the hash; the annotation follows.
	np := &apisv1.NodePool{}
	e.Get(t, "", "counts", np)
	orig := np.DeepCopy()
	np.Spec.Template.Labels = map[string]string{"team": "b"}
	if err := e.Client.Update(context.Background(), np); err != nil {
		t.Fatalf("updating the template: %v (was %v)", err, orig.Spec.Template.Labels)
	}
	if np.Hash() == orig.Hash() {
		t.Fatal("the template change did not change the hash")
	}
	waitPool(t, e, "counts", want{nodes: 1, cpu: 2, ready: ok, nodeClass: ok, validation: ok, hashStamped: true})
}

func testNodeClassReadiness(t *testing.T, e *ctrltest.Env) {
	e.Create(t, newPool("later", "later"))
	no, ok := metav1.ConditionFalse, metav1.ConditionTrue
	np := waitPool(t, e, "later", want{ready: no, nodeClass: no, validation: ok, hashStamped: true})
	if c := np.GetCondition(apisv1.ConditionTypeNodeClassReady); c.Reason != status.ReasonNodeClassNotReady {
		t.Errorf("NodeClassReady %+v", c)
	}
	e.WaitEvent(t, "later", status.ReasonNodeClassNotReady)
	e.NodeClass(t, "later", ctrltest.FastSpec())
	waitPool(t, e, "later", want{ready: ok, nodeClass: ok, validation: ok, hashStamped: true})
}

func testValidation(t *testing.T, e *ctrltest.Env) {
	e.NodeClass(t, "invalid", ctrltest.FastSpec())
	// The schema accepts each requirement; together they allow no capacity type.
	e.Create(t, newPool("invalid", "invalid", ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpNotIn, apisv1.CapacityTypeOnDemand)))
	no, ok := metav1.ConditionFalse, metav1.ConditionTrue
	np := waitPool(t, e, "invalid", want{ready: no, nodeClass: ok, validation: no, hashStamped: true})
	if c := np.GetCondition(apisv1.ConditionTypeValidationSucceeded); c.Reason != status.ReasonValidationFailed {
		t.Errorf("ValidationSucceeded %+v", c)
	}
	e.WaitEvent(t, "invalid", status.ReasonValidationFailed)
}

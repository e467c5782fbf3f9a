package e2e

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenonv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/tenon/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// spotOrOnDemand lets a NodePool buy spot as well as on demand.
func spotOrOnDemand(np *apisv1.NodePool) {
	for i, r := range np.Spec.Template.Spec.Requirements {
		if r.Key == apisv1.CapacityTypeLabelKey {
			np.Spec.Template.Spec.Requirements[i].Values = []string{apisv1.CapacityTypeSpot, apisv1.CapacityTypeOnDemand}
		}
	}
}

// commitmentStatus returns the Commitment's status once its controller has evaluated it.
func (e *env) commitmentStatus(name string) (tenonv1alpha1.CommitmentStatus, bool) {
	e.t.Helper()
	c := &tenonv1alpha1.Commitment{}
	if err := e.kube.Get(e.ctx, clientKey(name), c); err != nil {
		return tenonv1alpha1.CommitmentStatus{}, false
	}
	return c.Status, meta.FindStatusCondition(c.Status.Conditions, tenonv1alpha1.ConditionActive) != nil
}

// claimOfPod returns the NodeClaim whose node runs the app's single running pod.
func (e *env) claimOfPod(app string) apisv1.NodeClaim {
	e.t.Helper()
	node := e.podsRunning(app, 1, 90*time.Second)[0].Spec.NodeName
	for _, c := range e.nodeClaims() {
		if c.Status.NodeName == node {
			return c
		}
	}
	e.t.Fatalf("no NodeClaim for node %s", node)
	return apisv1.NodeClaim{}
}

// With a Compute Savings Plan that has room for one m5.xlarge, the first such node is bought on
// demand (it adds nothing to the bill) where spot is otherwise cheaper; the plan used up, the
// next is spot. Consolidation leaves the covered node alone (removing it saves nothing), and
// replaces it once the plan is gone and its on-demand price is what it costs.
func TestCommitmentsPriceWhatTheBillAdds(t *testing.T) {
	e := start(t, disruptionOptions())
	sp := &tenonv1alpha1.Commitment{ObjectMeta: metav1.ObjectMeta{Name: "compute-sp"}, Spec: tenonv1alpha1.CommitmentSpec{
		// m5.xlarge is $0.192/h on demand: $0.1344 at 30% off, within the $0.14 committed.
		ComputeSavingsPlan: &tenonv1alpha1.ComputeSavingsPlan{HourlyCommitment: "0.14", DefaultDiscount: "30"},
	}}
	e.create(nodeClass("default"), sp)
	e.eventually(30*time.Second, "the Commitment evaluated and active", func() (bool, string) {
		st, ok := e.commitmentStatus("compute-sp")
		return ok && meta.IsStatusConditionTrue(st.Conditions, tenonv1alpha1.ConditionActive), fmt.Sprintf("status %+v", st)
	})
	e.create(nodePool("mixed", "default", []string{"m5"}, spotOrOnDemand),
		deployment("first", 1, "3", "4Gi", inPool("mixed")))
	first := e.claimOfPod("first")
	if ct, it := first.Labels[apisv1.CapacityTypeLabelKey], first.Labels[apisv1.LabelInstanceType]; ct != apisv1.CapacityTypeOnDemand || it != "m5.xlarge" {
		t.Fatalf("the first node is %s %s; want an on-demand m5.xlarge, covered by the plan", ct, it)
	}
	e.eventually(30*time.Second, "the plan's status counting the node", func() (bool, string) {
		st, _ := e.commitmentStatus("compute-sp")
		return st.CoveredInstances == 1 && st.Utilization == "96.0%", fmt.Sprintf("covered %d, utilization %q", st.CoveredInstances, st.Utilization)
	})

	e.create(deployment("second", 1, "3", "4Gi", inPool("mixed")))
	second := e.claimOfPod("second")
	if ct := second.Labels[apisv1.CapacityTypeLabelKey]; ct != apisv1.CapacityTypeSpot {
		t.Fatalf("the second node is %s %s; want spot, the plan being used up", ct, second.Labels[apisv1.LabelInstanceType])
	}
	// Passes run every second: a covered node is not replaced by spot.
	e.holds(15*time.Second, "the covered node kept", func() (bool, string) { return e.untouched(first.Status.NodeName) })

	if err := e.kube.Delete(e.ctx, sp); err != nil {
		t.Fatal(err)
	}
	e.eventually(90*time.Second, "the uncovered on-demand node replaced", func() (bool, string) {
		ok, msg := e.untouched(first.Status.NodeName)
		return !ok, "still untouched " + msg
	})
	e.eventually(90*time.Second, "the first pod running on spot", func() (bool, string) {
		c := e.claimOfPod("first")
		ct := c.Labels[apisv1.CapacityTypeLabelKey]
		return ct == apisv1.CapacityTypeSpot && c.Status.NodeName != first.Status.NodeName, "on " + ct + " node " + c.Status.NodeName
	})
}

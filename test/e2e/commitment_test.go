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

// With a Compute Savings Plan that has room for one m5.xlarge, one of three such nodes bought
// in one batch is on demand (it adds nothing to the bill) where spot is otherwise cheaper, and
// the other two are spot: the launches take the plan's room one after another. Consolidation
// leaves the covered node alone (removing it saves nothing), and replaces it once the plan is
// gone and its on-demand price is what it costs.
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
		deployment("web", 3, "3", "4Gi", inPool("mixed"), spreadByHost("web")))
	e.podsRunning("web", 3, 90*time.Second)
	var covered apisv1.NodeClaim
	byCapacity := map[string]int{}
	for _, c := range e.poolClaims("mixed") {
		ct := c.Labels[apisv1.CapacityTypeLabelKey]
		byCapacity[ct]++
		if ct == apisv1.CapacityTypeOnDemand {
			covered = c
		}
	}
	if byCapacity[apisv1.CapacityTypeOnDemand] != 1 || byCapacity[apisv1.CapacityTypeSpot] != 2 {
		t.Fatalf("nodes by capacity type %v; want one on demand, covered by the plan, and two spot", byCapacity)
	}
	if it := covered.Labels[apisv1.LabelInstanceType]; it != "m5.xlarge" {
		t.Fatalf("the on-demand node is %s; want m5.xlarge, the plan's room", it)
	}
	e.eventually(30*time.Second, "the plan's status counting the node", func() (bool, string) {
		st, _ := e.commitmentStatus("compute-sp")
		return st.CoveredInstances == 1 && st.Utilization == "96.0%", fmt.Sprintf("covered %d, utilization %q", st.CoveredInstances, st.Utilization)
	})
	// Passes run every second: the covered node is not replaced by spot.
	e.holds(15*time.Second, "the covered node kept", func() (bool, string) { return e.untouched(covered.Status.NodeName) })

	if err := e.kube.Delete(e.ctx, sp); err != nil {
		t.Fatal(err)
	}
	e.eventually(120*time.Second, "every pod on spot once the plan is gone", func() (bool, string) {
		onDemand := 0
		for _, c := range e.poolClaims("mixed") {
			if c.Labels[apisv1.CapacityTypeLabelKey] == apisv1.CapacityTypeOnDemand {
				onDemand++
			}
		}
		return onDemand == 0 && len(e.podsRunning("web", 3, 90*time.Second)) == 3, fmt.Sprintf("%d on-demand nodes", onDemand)
	})
}

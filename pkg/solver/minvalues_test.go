package solver

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

func withMin(r scheduling.Requirement, n int) scheduling.Requirement {
	r.MinValues = n
	return r
}

// distinctValues counts the values of key among a claim's options.
func distinctValues(c *Claim, key string) int {
	seen := map[string]bool{}
	for _, it := range c.InstanceTypes {
		if r, ok := it.Requirements.Get(key); ok {
			for _, v := range r.Values() {
				seen[v] = true
			}
		}
	}
	return len(seen)
}

// requireMinValues fails unless every claim keeps at least n values of key and every pod not
// placed is unschedulable for minValues.
func requireMinValues(t *testing.T, plan *Plan, key string, n int) {
	t.Helper()
	for _, c := range plan.Claims {
		if got := distinctValues(c, key); got < n {
			t.Errorf("claim %s keeps %d values of %s (%v), minValues %d", c.Hostname, got, key, claimTypes(c), n)
		}
	}
	for _, u := range plan.Unschedulable {
		if len(u.Reasons) == 0 || u.Reasons[0].Kind != ReasonMinValues || u.Reasons[0].Key != key {
			t.Errorf("pod %s unschedulable for %v, want minValues of %s", u.Pod.Name, u.Reasons, key)
		}
	}
}

func TestMinValuesKeptAsPodsJoinAClaim(t *testing.T) {
	its := types(t, "m5.large", "m5.xlarge", "m5.2xlarge", "m5.4xlarge")
	np := nodePool("default", its, onDemand(withMin(scheduling.In(apisv1.LabelInstanceType, "m5.large", "m5.xlarge", "m5.2xlarge", "m5.4xlarge"), 3)))
	plan := solveOK(t, &Snapshot{NodePools: []NodePool{np}, Pods: pods(12, "1", "1Gi")})
	if len(plan.Unschedulable) != 0 {
		t.Fatalf("unschedulable: %v", plan.Unschedulable[0].Reasons)
	}
	requireMinValues(t, plan, apisv1.LabelInstanceType, 3)
}

func TestMinValuesUnschedulableWhenThePodLeavesTooFew(t *testing.T) {
	its := types(t, "m5.large", "m5.xlarge", "m5.2xlarge", "m5.4xlarge")
	np := nodePool("default", its, onDemand(withMin(scheduling.In(apisv1.LabelInstanceType, "m5.large", "m5.xlarge", "m5.2xlarge", "m5.4xlarge"), 3)))
	plan := solveOK(t, &Snapshot{NodePools: []NodePool{np}, Pods: pods(1, "6", "1Gi")})
	if len(plan.Unschedulable) != 1 {
		t.Fatalf("a 6-cpu pod leaves 2 of 3 types: want it unschedulable, got %s", describe(plan))
	}
	requireMinValues(t, plan, apisv1.LabelInstanceType, 3)
}

func TestMinValuesCountsDistinctValuesNotTypes(t *testing.T) {
	// Over c5 and m5, instance-cpu > 48 has three values (64, 72, 96) on seven types. A 70-cpu
	// pod leaves five types but only two values (72, 96): it is unschedulable; a 60-cpu pod
	// keeps all three.
	np := nodePool("default", aws(t).Types, onDemand(
		scheduling.In(apisv1.LabelInstanceFamily, "c5", "m5"),
		withMin(scheduling.MustRequirement(apisv1.LabelInstanceCPU, corev1.NodeSelectorOpGt, "48"), 3)))
	plan := solveOK(t, &Snapshot{NodePools: []NodePool{np}, Pods: append(pods(1, "70", "8Gi"), pods(1, "60", "8Gi")...)})
	if len(plan.Unschedulable) != 1 || plan.Unschedulable[0].Pod.Spec.Containers[0].Resources.Requests.Cpu().Value() != 70 {
		t.Fatalf("want the 70-cpu pod alone unschedulable, got %s", describe(plan))
	}
	requireMinValues(t, plan, apisv1.LabelInstanceCPU, 3)
}

func TestMinValuesOnExistsAfterFilteringByResources(t *testing.T) {
	// instance-type Exists minValues 3 over c5 and m5: a 70-cpu pod leaves five types; a
	// 90-cpu pod asking 300Gi leaves two (m5.24xlarge, m5.metal) and is unschedulable.
	np := nodePool("default", aws(t).Types, onDemand(
		scheduling.In(apisv1.LabelInstanceFamily, "c5", "m5"),
		withMin(scheduling.Exists(apisv1.LabelInstanceType), 3)))
	plan := solveOK(t, &Snapshot{NodePools: []NodePool{np}, Pods: append(pods(1, "70", "8Gi"), pods(1, "90", "300Gi")...)})
	if len(plan.Unschedulable) != 1 || plan.Unschedulable[0].Pod.Spec.Containers[0].Resources.Requests.Cpu().Value() != 90 {
		t.Fatalf("want the 90-cpu 300Gi pod alone unschedulable, got %s", describe(plan))
	}
	requireMinValues(t, plan, apisv1.LabelInstanceType, 3)
}

func TestMinValuesBestEffortRelaxesAndRecordsIt(t *testing.T) {
	its := types(t, "m5.large", "m5.xlarge", "m5.2xlarge", "m5.4xlarge")
	np := nodePool("default", its, onDemand(withMin(scheduling.In(apisv1.LabelInstanceType, "m5.large", "m5.xlarge", "m5.2xlarge", "m5.4xlarge"), 3)))
	snap := &Snapshot{NodePools: []NodePool{np}, Pods: pods(1, "6", "1Gi")}
	plan, err := Solve(snap, Options{MinValuesPolicy: MinValuesBestEffort})
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(snap, plan); err != nil {
		t.Fatal(err)
	}
	if len(plan.Claims) != 1 || len(plan.Unschedulable) != 0 {
		t.Fatalf("BestEffort places the pod on what is left: %s", describe(plan))
	}
	c := plan.Claims[0]
	r, _ := c.Requirements.Get(apisv1.LabelInstanceType)
	if !c.MinValuesRelaxed || r.MinValues != 2 {
		t.Fatalf("want the claim to record minValues relaxed to 2, got relaxed=%v minValues=%d", c.MinValuesRelaxed, r.MinValues)
	}
}

func TestParseMinValuesPolicy(t *testing.T) {
	for in, want := range map[string]MinValuesPolicy{"": MinValuesStrict, "Strict": MinValuesStrict, "BestEffort": MinValuesBestEffort} {
		if got, err := ParseMinValuesPolicy(in); err != nil || got != want {
			t.Errorf("%q: got %q, %v", in, got, err)
		}
	}
	if _, err := ParseMinValuesPolicy("strict"); err == nil {
		t.Error("want an error for an unknown policy")
	}
}

func TestVerifyRejectsAClaimBelowMinValues(t *testing.T) {
	its := types(t, "m5.large", "m5.xlarge", "m5.2xlarge", "m5.4xlarge")
	np := nodePool("default", its, onDemand(scheduling.In(apisv1.LabelInstanceType, "m5.large", "m5.xlarge", "m5.2xlarge", "m5.4xlarge")))
	snap := &Snapshot{NodePools: []NodePool{np}, Pods: pods(1, "6", "1Gi")}
	plan := solveOK(t, snap) // options m5.2xlarge and m5.4xlarge
	snap.NodePools[0].Requirements = onDemand(withMin(scheduling.In(apisv1.LabelInstanceType, "m5.large", "m5.xlarge", "m5.2xlarge", "m5.4xlarge"), 3))
	if err := Verify(snap, plan); err == nil {
		t.Fatal("Verify accepted a claim with two options under instance-type minValues 3")
	}
}

func TestNarrowKeepsMinValues(t *testing.T) {
	its := types(t, "m5.large", "m5.xlarge", "m5.2xlarge", "m5.4xlarge")
	np := nodePool("default", its, onDemand(withMin(scheduling.In(apisv1.LabelInstanceType, "m5.large", "m5.xlarge", "m5.2xlarge", "m5.4xlarge"), 3)))
	plan := solveOK(t, &Snapshot{NodePools: []NodePool{np}, Pods: pods(1, "1", "1Gi")})
	c := plan.Claims[0]
	if len(c.InstanceTypes) != 4 {
		t.Fatalf("want four options, got %v", claimTypes(c))
	}
	if c.Narrow(func(it *catalog.InstanceType, _ float64) bool {
		return it.Name != "m5.4xlarge" && it.Name != "m5.2xlarge"
	}) {
		t.Fatalf("Narrow left %v under instance-type minValues 3", claimTypes(c))
	}
	if len(c.InstanceTypes) != 4 {
		t.Fatalf("a refused Narrow must leave the claim as it was, got %v", claimTypes(c))
	}
	if !c.Narrow(func(it *catalog.InstanceType, _ float64) bool { return it.Name != "m5.4xlarge" }) || len(c.InstanceTypes) != 3 {
		t.Fatalf("Narrow to three options refused or wrong: %v", claimTypes(c))
	}
}

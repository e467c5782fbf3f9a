package solver

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestRequestsBeyondInt64AreUnschedulableNotWrapped: requests too large for an int64, alone
// or once summed, make the pod unschedulable with a reason that names its own amounts; they
// never wrap to a small or negative amount that a cheap node would seem to hold.
func TestRequestsBeyondInt64AreUnschedulableNotWrapped(t *testing.T) {
	its := types(t, "c6gd.medium", "m5.large", "m5.24xlarge")
	twoContainers := pod("", "6Ei")
	twoContainers.Spec.Containers = append(twoContainers.Spec.Containers, *twoContainers.Spec.Containers[0].DeepCopy())
	twoContainers.Spec.Containers[1].Name = "twin"
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"cpu beyond int64", pod("99999999999999999999999", ""), "cpu=99999999999999999999999"},
		{"two containers of 6Ei", twoContainers, "memory=12Ei"},
		{"millicores beyond int64", pod("1e16", "1e30"), "memory=1e"},
		{"large but countable", pod("1e15", ""), "cpu=1P"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := &Snapshot{NodePools: []NodePool{nodePool("default", its, onDemand())}, Pods: []*corev1.Pod{tc.pod}}
			plan := solveOK(t, snap)
			if len(plan.Claims) != 0 || len(plan.Unschedulable) != 1 {
				t.Fatalf("want the pod unschedulable, got %s", describe(plan))
			}
			r := plan.Unschedulable[0].Reasons
			if len(r) != 1 || r[0].Kind != ReasonResources || !strings.Contains(r[0].String(), tc.want) {
				t.Fatalf("reason %q, want a resources reason naming %s", plan.Unschedulable[0].Message(), tc.want)
			}
		})
	}
}

// TestHugeRequestBesideNormalPodsLeavesTheirPlanAlone: one pod beyond int64 is unschedulable,
// and the pods beside it are planned as without it (a saturated class does not poison the
// bound or the node room).
func TestHugeRequestBesideNormalPodsLeavesTheirPlanAlone(t *testing.T) {
	its := types(t, "m5.large", "m5.xlarge")
	normal := pods(3, "1", "1Gi")
	snap := &Snapshot{NodePools: []NodePool{nodePool("default", its, onDemand())}, Pods: normal}
	want := solveOK(t, snap)
	huge := pod("1", "")
	huge.Spec.Containers[0].Resources.Requests[corev1.ResourceEphemeralStorage] = resource.MustParse("1e40")
	snap.Pods = append(append([]*corev1.Pod(nil), normal...), huge)
	got := solveOK(t, snap)
	if len(got.Unschedulable) != 1 || got.Unschedulable[0].Pod != huge {
		t.Fatalf("want only the huge pod unschedulable, got %s", describe(got))
	}
	if got.Price != want.Price || got.LowerBound != want.LowerBound || len(got.Claims) != len(want.Claims) {
		t.Fatalf("price %v bound %v claims %d, want %v %v %d", got.Price, got.LowerBound, len(got.Claims), want.Price, want.LowerBound, len(want.Claims))
	}
}

// TestHugeRequestNeverSharesAClassWithOneItsMillisWrapOnto: 2^64 + 1617 millicores comes out
// of Quantity.MilliValue as 1; the pod must not be grouped with (and planned like) a 1m pod.
func TestHugeRequestNeverSharesAClassWithOneItsMillisWrapOnto(t *testing.T) {
	its := types(t, "m5.large")
	small, huge := pod("1m", ""), pod("18446744073709551617m", "")
	snap := &Snapshot{NodePools: []NodePool{nodePool("default", its, onDemand())}, Pods: []*corev1.Pod{small, huge}}
	plan := solveOK(t, snap)
	if len(plan.Unschedulable) != 1 || plan.Unschedulable[0].Pod != huge || len(plan.Claims) != 1 {
		t.Fatalf("want only the huge pod unschedulable, got %s", describe(plan))
	}
}

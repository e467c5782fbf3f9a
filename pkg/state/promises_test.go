package state

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"pgregory.net/rapid"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// A pending pod promised to a NodeClaim is held by the claim (in flight, then registered) and
// is not pending for another plan, until the promise ends: the pod binds, the claim goes or
// launches too small, its node fills with other pods, or PromiseTTL passes after registration.
func TestPromises(t *testing.T) {
	pending := func(name, cpu string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}}}
	}
	claim := func(name string) *apisv1.NodeClaim {
		return &apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{apisv1.NodePoolLabelKey: "default"}},
			Spec: apisv1.NodeClaimSpec{Resources: apisv1.ResourceRequirements{Requests: rl("3", "2Gi")}}}
	}
	setup := func() (*Cluster, *clocktesting.FakeClock, []*corev1.Pod) {
		clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
		c := NewCluster(clk)
		c.UpdateNodeClaim(claim("a"))
		pods := []*corev1.Pod{pending("p1", "1"), pending("p2", "2")}
		for _, p := range pods {
			c.UpdatePod(p)
		}
		c.Promise("a", pods)
		return c, clk, pods
	}
	held := func(t *testing.T, c *Cluster, name string) int {
		t.Helper()
		nodes, err := c.SolverNodes(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes {
			if n.Name == name {
				return len(n.Pods)
			}
		}
		t.Fatalf("no solver node %s in %+v", name, nodes)
		return 0
	}
	register := func(c *Cluster, clk *clocktesting.FakeClock, allocatable corev1.ResourceList) *corev1.Node {
		nc := claim("a")
		nc.Status.ProviderID, nc.Status.Allocatable = "sim://a", allocatable
		c.UpdateNodeClaim(nc)
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", CreationTimestamp: metav1.NewTime(clk.Now())},
			Spec: corev1.NodeSpec{ProviderID: "sim://a"}, Status: corev1.NodeStatus{Allocatable: allocatable}}
		c.UpdateNode(n)
		return n
	}

	t.Run("in flight", func(t *testing.T) {
		c, _, pods := setup()
		if !c.Promised()(pods[0]) || !c.Promised()(pods[1]) || held(t, c, "a") != 2 {
			t.Fatalf("promised %v %v, claim holds %d; want both promised and held", c.Promised()(pods[0]), c.Promised()(pods[1]), held(t, c, "a"))
		}
		bound := pods[0].DeepCopy()
		bound.Spec.NodeName = "elsewhere"
		c.UpdatePod(bound)
		if c.Promised()(bound) || held(t, c, "a") != 1 {
			t.Errorf("a bound pod is no longer promised (%v) nor held by the claim (holds %d)", c.Promised()(bound), held(t, c, "a"))
		}
		c.DeletePod("default", "p2")
		if held(t, c, "a") != 0 {
			t.Error("a deleted pod is held by the claim")
		}
	})
	t.Run("a later promise replaces an earlier one", func(t *testing.T) {
		c, _, pods := setup()
		c.UpdateNodeClaim(claim("b"))
		c.Promise("b", pods[:1])
		if held(t, c, "a") != 1 || held(t, c, "b") != 1 {
			t.Errorf("claims hold %d and %d; want 1 and 1", held(t, c, "a"), held(t, c, "b"))
		}
	})
	t.Run("claim deleted or marked", func(t *testing.T) {
		c, _, pods := setup()
		c.MarkForDeletion("a")
		if c.Promised()(pods[0]) || held(t, c, "a") != 0 {
			t.Error("a claim marked for deletion keeps its promise")
		}
		c.UnmarkForDeletion("a")
		c.DeleteNodeClaim("a")
		if c.Promised()(pods[0]) {
			t.Error("a deleted claim keeps its promise")
		}
	})
	t.Run("launched too small", func(t *testing.T) {
		c, _, pods := setup()
		nc := claim("a")
		nc.Status.Allocatable = rl("2", "8Gi") // the plan asked for 3 CPUs
		c.UpdateNodeClaim(nc)
		if c.Promised()(pods[0]) || held(t, c, "a") != 0 {
			t.Error("a claim launched smaller than planned keeps its promise")
		}
	})
	t.Run("registered", func(t *testing.T) {
		c, clk, pods := setup()
		register(c, clk, rl("4", "8Gi"))
		if !c.Promised()(pods[0]) || held(t, c, "node-a") != 2 {
			t.Fatalf("the registered node holds %d promised pods; want 2", held(t, c, "node-a"))
		}
		if !c.NominatedNodes()["node-a"] {
			t.Error("a registered node holding promised pods is not reported as nominated (disruption leaves such nodes alone)")
		}
		clk.Step(PromiseTTL + time.Second)
		if c.Promised()(pods[0]) || held(t, c, "node-a") != 0 {
			t.Error("a promise outlives PromiseTTL after registration")
		}
		if c.NominatedNodes()["node-a"] {
			t.Error("a node whose promise ended is still reported as nominated")
		}
	})
	t.Run("registered, kube-scheduler still binding a burst", func(t *testing.T) {
		c, clk, pods := setup()
		register(c, clk, rl("4", "8Gi"))
		// Another pod, pending, is bound elsewhere every few seconds: kube-scheduler is still
		// working through its queue, so the promise holds past PromiseTTL.
		bindOne := func(i int) {
			p := pending(fmt.Sprintf("burst-%d", i), "100m")
			c.UpdatePod(p)
			p = p.DeepCopy()
			p.Spec.NodeName = "elsewhere"
			c.UpdatePod(p)
		}
		for i := 0; clk.Since(time.Unix(1000, 0)) < 2*PromiseTTL; i++ {
			clk.Step(5 * time.Second)
			bindOne(i)
		}
		if !c.Promised()(pods[0]) || held(t, c, "node-a") != 2 {
			t.Fatalf("a promise ended at %s while kube-scheduler was still binding (holds %d)", clk.Since(time.Unix(1000, 0)), held(t, c, "node-a"))
		}
		// Once kube-scheduler has bound nothing for a while, the promise ends.
		clk.Step(schedulerBusy + time.Second)
		if c.Promised()(pods[0]) {
			t.Error("a promise outlives PromiseTTL once kube-scheduler went quiet")
		}
		// However busy kube-scheduler stays, no promise outlives MaxSchedulerWait.
		c, clk, pods = setup()
		register(c, clk, rl("4", "8Gi"))
		for i := 0; clk.Since(time.Unix(1000, 0)) <= MaxSchedulerWait; i++ {
			clk.Step(5 * time.Second)
			bindOne(i)
		}
		if c.Promised()(pods[0]) {
			t.Error("a promise outlives MaxSchedulerWait")
		}
	})
	t.Run("registered node filled by others", func(t *testing.T) {
		c, clk, pods := setup()
		n := register(c, clk, rl("4", "8Gi"))
		other := pending("other", "2")
		other.Spec.NodeName = n.Name
		c.UpdatePod(other)
		if c.Promised()(pods[0]) || held(t, c, "node-a") != 1 {
			t.Errorf("a node with no room left for its promised pods keeps them (holds %d)", held(t, c, "node-a"))
		}
	})
}

// Whatever happens to pods, claims and nodes, a pod the mirror holds on a claim (SolverNodes) is
// pending, is held by one machine only, and is not pending for another plan (Promised); and a
// pending pod whose claim is gone is pending for a plan again.
func TestPropertyPromisesNeverCountAPodTwice(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
		c := NewCluster(clk)
		const nPods, nClaims = 8, 3
		pods := make([]*corev1.Pod, nPods)
		for i := range pods {
			pods[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "default"}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("1")}}}}}}
			c.UpdatePod(pods[i])
		}
		claimName := func(i int) string { return fmt.Sprintf("claim-%d", i) }
		for i := range nClaims {
			c.UpdateNodeClaim(&apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: claimName(i)},
				Spec: apisv1.NodeClaimSpec{Resources: apisv1.ResourceRequirements{Requests: rl("3", "1Gi")}}})
		}
		for step := range rapid.IntRange(1, 30).Draw(rt, "steps") {
			i := rapid.IntRange(0, nPods-1).Draw(rt, "pod")
			ci := rapid.IntRange(0, nClaims-1).Draw(rt, "claim")
			switch rapid.IntRange(0, 7).Draw(rt, "op") {
			case 0, 1:
				var ps []*corev1.Pod
				for j := range nPods {
					if rapid.Bool().Draw(rt, "promised") {
						ps = append(ps, pods[j])
					}
				}
				c.Promise(claimName(ci), ps)
			case 2:
				p := pods[i].DeepCopy()
				p.Spec.NodeName = "bound-" + claimName(ci)
				c.UpdatePod(p)
			case 3:
				c.DeletePod("default", pods[i].Name)
			case 4:
				c.DeleteNodeClaim(claimName(ci))
			case 5: // launched, as asked or smaller, and perhaps registered
				nc := &apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: claimName(ci)},
					Spec: apisv1.NodeClaimSpec{Resources: apisv1.ResourceRequirements{Requests: rl("3", "1Gi")}},
					Status: apisv1.NodeClaimStatus{ProviderID: "sim://" + claimName(ci),
						Allocatable: rl(rapid.SampledFrom([]string{"2", "4", "8"}).Draw(rt, "cpu"), "8Gi")}}
				c.UpdateNodeClaim(nc)
				if rapid.Bool().Draw(rt, "register") {
					c.UpdateNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-" + claimName(ci), CreationTimestamp: metav1.NewTime(clk.Now())},
						Spec: corev1.NodeSpec{ProviderID: nc.Status.ProviderID}, Status: corev1.NodeStatus{Allocatable: nc.Status.Allocatable}})
				}
			case 6:
				clk.Step(time.Duration(rapid.IntRange(1, 90).Draw(rt, "seconds")) * time.Second)
			case 7:
				c.MarkForDeletion(claimName(ci))
			}
			for claim, keys := range c.promised {
				if len(keys) == 0 {
					rt.Fatalf("step %d: an empty promise to %s is kept", step, claim)
				}
			}
			nodes, err := c.SolverNodes(nil)
			if err != nil {
				rt.Fatal(err)
			}
			promised := c.Promised()
			holder := map[string]string{}
			for _, n := range nodes {
				for _, p := range n.Pods {
					if p.Spec.NodeName != "" {
						continue // bound, not held
					}
					k := p.Namespace + "/" + p.Name
					if prev, ok := holder[k]; ok {
						rt.Fatalf("step %d: pod %s held by %s and %s", step, k, prev, n.Name)
					}
					holder[k] = n.Name
					if !promised(p) {
						rt.Fatalf("step %d: pod %s held by %s but pending for another plan", step, k, n.Name)
					}
				}
			}
			for _, p := range c.Pods() {
				if promised(p) {
					if p.Spec.NodeName != "" {
						rt.Fatalf("step %d: bound pod %s promised", step, p.Name)
					}
					if _, ok := holder[p.Namespace+"/"+p.Name]; !ok {
						rt.Fatalf("step %d: pod %s promised but held by no machine", step, p.Name)
					}
				}
			}
		}
	})
}

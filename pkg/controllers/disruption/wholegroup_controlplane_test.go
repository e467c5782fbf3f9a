package disruption_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	disruptionctrl "github.com/tenon-sh/tenon/pkg/controllers/disruption"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/ctrltest"
	"github.com/tenon-sh/tenon/pkg/disruption"
	"github.com/tenon-sh/tenon/pkg/state"
)

// testWholeGroupDriftsTogether: two nodes run the two pods of a PodGroup whose disruption mode
// is All, a third an ordinary pod; when the NodePool drifts, the group's nodes are replaced in
// one command (the budget of 2 counting them together), never one without the other.
func testWholeGroupDriftsTogether(t *testing.T, e *ctrltest.Env) {
	if served, err := state.PodGroupsServed(discovery.NewDiscoveryClientForConfigOrDie(e.CP.RESTConfig())); err != nil || !served {
		t.Fatalf("the control plane does not serve PodGroups (%v)", err)
	}
	e.NodeClass(t, "whole", ctrltest.FastSpec())
	np := pool("whole", "whole")
	np.Spec.Disruption.Budgets = []apisv1.Budget{{Nodes: "2"}}
	e.Create(t, np)
	results := make(chan disruptionctrl.CommandResult, 256) // commands on earlier subtests' nodes arrive too
	_, cluster := runController(t, e, disruptionctrl.Options{PassInterval: 300 * time.Millisecond, ValidationDelay: 200 * time.Millisecond,
		OnCommand: func(r disruptionctrl.CommandResult) { results <- r }})

	e.Namespace(t, "whole")
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "whole", Name: "train"}}
	pg.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: 2}
	pg.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}
	e.Create(t, pg)
	var nodes []string
	for i, name := range []string{"whole-a", "whole-b", "whole-c"} {
		node, _ := claimOf(t, e, np, name)
		nodes = append(nodes, node)
		pod := ctrltest.NewPod("whole", name, node)
		// Bound where the test puts it, and movable to any node of the pool.
		pod.Spec.NodeSelector = map[string]string{apisv1.NodePoolLabelKey: np.Name}
		pod.Spec.NodeName = node
		if i < 2 {
			group := pg.Name
			pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &group}
		}
		e.Create(t, pod)
		e.PodRunning(t, "whole", name, node)
	}
	group := nodes[:2]
	ctrltest.Eventually(t, "the controller knows the PodGroup is disrupted whole", func() (bool, string) {
		return slices.Contains(cluster.WholeGroups(), "whole/train"), fmt.Sprint(cluster.WholeGroups())
	})

	patchPool(t, e, np.Name, func(stored *apisv1.NodePool) {
		stored.Spec.Template.Labels = map[string]string{"example.com/revision": "2"}
	})

	groupDone, otherDone := false, false
	ctrltest.Eventually(t, "the group's nodes and the other node are replaced", func() (bool, string) {
		for {
			select {
			case r := <-results:
				cs := r.Command.Candidates
				in := 0
				for _, n := range group {
					if slices.Contains(cs, n) {
						in++
					}
				}
				if in == 1 {
					t.Fatalf("command %s (%s) of %v takes one of the group's nodes %v", r.Command.Method, r.Result, cs, group)
				}
				if r.Result == disruptionctrl.ResultFailed && (in > 0 || slices.Contains(cs, nodes[2])) {
					t.Fatalf("command %s of %v failed: %v", r.Command.Method, cs, r.Err)
				}
				if r.Result != disruptionctrl.ResultSucceeded || r.Command.Method != disruption.MethodDrift {
					continue
				}
				if in == 2 {
					groupDone = true
				}
				if slices.Contains(cs, nodes[2]) && in == 0 {
					otherDone = true
				}
			default:
				return groupDone && otherDone, fmt.Sprintf("group replaced %v, other node replaced %v", groupDone, otherDone)
			}
		}
	})
}

package e2e

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	"github.com/tenon-sh/tenon/pkg/operator"
)

// A controller restarted in the middle of a scale-up leaks no instance and launches nothing
// twice: every instance belongs to exactly one NodeClaim, and every claim has one node.
func TestRestartMidScaleUpLeaksNothing(t *testing.T) {
	e := start(t, operator.Options{})
	e.create(nodeClass("default", func(nc *simv1alpha1.SimNodeClass) { nc.Spec.BootDelay = &metav1.Duration{Duration: 3 * time.Second} }),
		nodePool("general", "default", []string{"m5", "c5"}), deployment("web", 30, "1", "2Gi"))
	e.eventually(30*time.Second, "NodeClaims launching", func() (bool, string) {
		return len(e.instances()) > 0, fmt.Sprintf("%d claims, %d instances", len(e.nodeClaims()), len(e.instances()))
	})
	e.stop() // the controller dies mid scale-up
	e.startOperator()
	e.podsRunning("web", 30, 120*time.Second)

	claims := e.nodeClaims()
	byClaim := map[string]int{}
	for _, in := range e.instances() {
		if in.Status.Phase == simv1alpha1.InstanceTerminated {
			continue
		}
		byClaim[in.Spec.NodeClaim]++
	}
	names := map[string]bool{}
	for _, c := range claims {
		names[c.Name] = true
		if byClaim[c.Name] != 1 {
			t.Errorf("claim %s has %d instances", c.Name, byClaim[c.Name])
		}
	}
	for claim, n := range byClaim {
		if !names[claim] {
			t.Errorf("%d instances belong to no claim (%s): leaked", n, claim)
		}
	}
	if nodes := e.nodes(); len(nodes) != len(claims) {
		t.Errorf("%d nodes for %d claims", len(nodes), len(claims))
	}
}

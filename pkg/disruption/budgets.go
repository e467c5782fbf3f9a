package disruption

import (
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// budgets tracks, per NodePool and reason, how many more nodes a pass may disrupt: what the
// NodePool's active budgets allow for its total nodes, less the nodes already being deleted and
// the nodes that are not ready, less what the pass has committed.
type budgets struct {
	left map[string]map[apisv1.DisruptionReason]int
}

func newBudgets(s *Snapshot) *budgets {
	total, busy := map[string]int{}, map[string]int{}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		total[n.NodePool]++
		if n.Deleting || n.NotReady {
			busy[n.NodePool]++
		}
	}
	b := &budgets{left: map[string]map[apisv1.DisruptionReason]int{}}
	for name, np := range s.NodePools {
		m := map[apisv1.DisruptionReason]int{}
		for _, r := range []apisv1.DisruptionReason{apisv1.DisruptionReasonEmpty, apisv1.DisruptionReasonDrifted, apisv1.DisruptionReasonUnderutilized} {
			m[r] = max(np.AllowedDisruptions(s.Now, total[name], r)-busy[name], 0)
		}
		b.left[name] = m
	}
	return b
}

// allows reports whether n more nodes of pool may be disrupted for reason. Expiration ("") is
// not held back by budgets.
func (b *budgets) allows(pool string, reason apisv1.DisruptionReason, n int) bool {
	if reason == "" {
		return true
	}
	return b.left[pool][reason] >= n
}

// take commits n disruptions of pool for reason; every reason's allowance shrinks, since a
// node disrupted for one reason is disrupting for all.
func (b *budgets) take(pool string, n int) {
	for r, v := range b.left[pool] {
		b.left[pool][r] = v - n
	}
}

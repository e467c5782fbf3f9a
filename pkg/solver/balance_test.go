package solver

import (
	"maps"
	"testing"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// zonesOf counts the plan's new claims per zone, reading each claim's pinned requirement.
func zonesOf(t *testing.T, plan *Plan) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, c := range plan.Claims {
		r, ok := c.Requirements.Get(apisv1.LabelZone)
		if !ok || len(r.Values()) != 1 || r.IsComplement() {
			out["unpinned"]++
			continue
		}
		if r.Values()[0] != c.Offering.Zone {
			t.Errorf("claim pinned to %s launches in %s", r.Values()[0], c.Offering.Zone)
		}
		out[c.Offering.Zone]++
	}
	return out
}

func TestZoneBalance(t *testing.T) {
	threeZones := scheduling.In(apisv1.LabelZone, "us-east-1a", "us-east-1b", "us-east-1c")
	cases := []struct {
		name   string
		skew   int
		pods   int
		pinned int // pods with a zone selector on us-east-1a
		existA int // existing nodes of the pool in us-east-1a
		want   map[string]int
	}{
		{name: "off: every claim goes where it is cheapest", skew: 0, pods: 6, want: map[string]int{"unpinned": 6}},
		{name: "skew 1 spreads six claims two by two", skew: 1, pods: 6, want: map[string]int{"us-east-1a": 2, "us-east-1b": 2, "us-east-1c": 2}},
		{name: "existing nodes count", skew: 1, pods: 4, existA: 2, want: map[string]int{"us-east-1b": 2, "us-east-1c": 2}},
		{name: "claims pinned by their pods count and keep their zone", skew: 1, pods: 3, pinned: 3, want: map[string]int{"us-east-1a": 3, "us-east-1b": 2, "us-east-1c": 1}},
		{name: "a larger skew lets the cheapest zone take more", skew: 3, pods: 3, want: map[string]int{"us-east-1a": 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			np := nodePool("general", types(t, "m5.large"), onDemand(threeZones), func(p *NodePool) { p.ZoneMaxSkew = tc.skew })
			snap := &Snapshot{NodePools: []NodePool{np}}
			for i := range tc.existA {
				it := types(t, "m5.large")[0]
				labels := it.NodeLabels(&it.Offerings[0])
				labels[apisv1.LabelZone] = "us-east-1a"
				snap.Nodes = append(snap.Nodes, Node{Name: "existing-" + string(rune('a'+i)), NodePool: "general", Labels: labels,
					Allocatable: scheduling.Resources{}, Initialized: true})
			}
			// Each pod fills an m5.large (2 vCPU): one claim per pod.
			snap.Pods = pods(tc.pods, "1500m", "1Gi")
			snap.Pods = append(snap.Pods, pods(tc.pinned, "1500m", "1Gi", nodeSelector(apisv1.LabelZone, "us-east-1a"))...)
			plan := solveOK(t, snap)
			got := zonesOf(t, plan)
			if !maps.Equal(got, tc.want) {
				t.Errorf("claims by zone %v, want %v", got, tc.want)
			}
			var sum float64
			for _, c := range plan.Claims {
				sum += c.Price
			}
			if d := sum - plan.Price; d > 1e-9 || d < -1e-9 {
				t.Errorf("plan price %g, claims add up to %g", plan.Price, sum)
			}
		})
	}
}

package solver

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// TestPropertyAmend: amending a prepared snapshot with the nodes a disruption command changes
// (some marked for deletion, some given pods, claims in flight added, named to sort anywhere)
// compiles the same targets in the same order, the same anti-affinity terms and selector keys,
// and solves exactly as WithNodes on the changed snapshot, round after round.
func TestPropertyAmend(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		snap := drawSnapshot(t)
		prep, err := Prepare(snap)
		if err != nil {
			t.Fatal(err)
		}
		its := genTypes()
		added := 0
		for round := 0; round < 4; round++ {
			next := *snap
			next.Nodes = slices.Clone(snap.Nodes)
			var changed []int
			for i := range next.Nodes {
				switch rapid.IntRange(0, 4).Draw(t, "change") {
				case 0:
					next.Nodes[i].MarkedForDeletion = true
					changed = append(changed, i)
				case 1:
					if len(snap.Pods) > 0 {
						p := snap.Pods[rapid.IntRange(0, len(snap.Pods)-1).Draw(t, "pod")]
						next.Nodes[i].Pods = append(slices.Clip(next.Nodes[i].Pods), p)
						changed = append(changed, i)
					}
				case 2:
					changed = append(changed, i) // listed, though unchanged
				}
			}
			for k := rapid.IntRange(0, 4).Draw(t, "new"); k > 0; k-- {
				it := rapid.SampledFrom(its).Draw(t, "newType")
				name := fmt.Sprintf("%s-%d", rapid.SampledFrom([]string{"a", "node", "replacement", "z"}).Draw(t, "prefix"), added)
				added++
				n := Node{
					Name:        name,
					Labels:      map[string]string{apisv1.LabelZone: rapid.SampledFrom(genZones).Draw(t, "newZone"), apisv1.LabelHostname: name},
					Allocatable: it.Allocatable(),
					Initialized: rapid.Bool().Draw(t, "newInit"),
					InFlight:    rapid.Bool().Draw(t, "newInFlight"),
				}
				for j := rapid.IntRange(0, 2).Draw(t, "newPods"); j > 0 && len(snap.Pods) > 0; j-- {
					n.Pods = append(n.Pods, snap.Pods[rapid.IntRange(0, len(snap.Pods)-1).Draw(t, "newPod")])
				}
				next.Nodes = append(next.Nodes, n)
			}
			amended, err := prep.Amend(&next, changed)
			if err != nil {
				t.Fatal(err)
			}
			want, err := prep.WithNodes(&next)
			if err != nil {
				t.Fatal(err)
			}
			if err := samePrepared(amended, want); err != nil {
				t.Fatalf("round %d (changed %v): %v", round, changed, err)
			}
			exclude := drawExclude(t, &next)
			got, err := amended.Solve(next.Pods, Options{ExcludeNodes: exclude})
			if err != nil {
				t.Fatal(err)
			}
			plan, err := want.Solve(next.Pods, Options{ExcludeNodes: exclude})
			if err != nil {
				t.Fatal(err)
			}
			if got.Price != plan.Price || len(got.Claims) != len(plan.Claims) || !slices.Equal(got.Placements, plan.Placements) ||
				len(got.Unschedulable) != len(plan.Unschedulable) {
				t.Fatalf("round %d: amended solve %s differs from a re-prepared one %s", round, describe(got), describe(plan))
			}
			var reqs []scheduling.Resources
			for _, p := range next.Pods {
				if r, err := scheduling.PodRequests(p); err == nil {
					reqs = append(reqs, r)
				}
			}
			fo := FloorOptions{ExcludeNodes: exclude, InitializedOnly: rapid.Bool().Draw(t, "initializedOnly")}
			if a, b := amended.CapacityFloor(reqs, fo).Price, want.CapacityFloor(reqs, fo).Price; a != b {
				t.Fatalf("round %d: amended floor $%v, re-prepared $%v", round, a, b)
			}
			prep, snap = amended, &next
		}
	})
}

// samePrepared reports how two preparations of one snapshot differ in what they compiled of
// its nodes.
func samePrepared(a, b *Prepared) error {
	ta, tb := a.base.targets, b.base.targets
	if len(ta) != len(tb) {
		return fmt.Errorf("%d targets against %d", len(ta), len(tb))
	}
	for i := range ta {
		x, y := ta[i], tb[i]
		if x.node != y.node || x.idx != y.idx || x.base != y.base || x.host != y.host || x.sig != y.sig || x.key != y.key ||
			x.free0 != y.free0 || !slices.Equal(x.ports, y.ports) || !maps.Equal(x.labels, y.labels) {
			return fmt.Errorf("target %d: %s (idx %d, base %d, sig %d, free %v) against %s (idx %d, base %d, sig %d, free %v)",
				i, x.node.Name, x.idx, x.base, x.sig, x.free0, y.node.Name, y.idx, y.base, y.sig, y.free0)
		}
	}
	if len(a.anti) != len(b.anti) {
		return fmt.Errorf("%d anti-affinity terms of running pods against %d", len(a.anti), len(b.anti))
	}
	for i := range a.anti {
		if a.anti[i].base != b.anti[i].base || a.anti[i].id != b.anti[i].id || a.anti[i].key != b.anti[i].key {
			return fmt.Errorf("anti-affinity term %d: %+v against %+v", i, a.anti[i], b.anti[i])
		}
	}
	if !maps.Equal(a.existingKeys, b.existingKeys) {
		return fmt.Errorf("selector keys %v against %v", slices.Sorted(maps.Keys(a.existingKeys)), slices.Sorted(maps.Keys(b.existingKeys)))
	}
	return nil
}

package disruption

import (
	"fmt"
	"hash/maphash"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// settled returns a fleet of about 100 nodes that consolidation has settled, and the last
// pass's decision (nothing to do, with its memory).
func settled(t *testing.T) (*fleet, *Decision) {
	t.Helper()
	fx := fragmented(t, 100)
	fx.dropEmpty(t)
	opts := Options{}
	for range 200 {
		d, err := Decide(fx.snapshot(), opts)
		if err != nil {
			t.Fatal(err)
		}
		opts.Cursor, opts.Memory = d.Cursor, d.Memory
		if len(d.Commands) == 0 && d.Outcome != OutcomeTruncated {
			// One more pass, so that its memory holds the verdicts of a pass that acted on nothing.
			if d, err = Decide(fx.snapshot(), opts); err != nil {
				t.Fatal(err)
			}
			return fx, d
		}
		fx.apply(d)
		fx.now = fx.now.Add(10 * time.Minute)
	}
	t.Fatal("the fleet did not settle in 200 passes")
	return nil, nil
}

// decideBoth runs a pass with the memory and one without.
func decideBoth(t *testing.T, fx *fleet, last *Decision) (warm, cold *Decision) {
	t.Helper()
	warm, err := Decide(fx.snapshot(), Options{Cursor: last.Cursor, Memory: last.Memory})
	if err != nil {
		t.Fatal(err)
	}
	cold, err = Decide(fx.snapshot(), Options{Cursor: last.Cursor, RejectionTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	return warm, cold
}

func commandSummary(d *Decision) string {
	var out []string
	for _, c := range d.Commands {
		out = append(out, fmt.Sprintf("%s %v → %d", c.Method, c.Candidates, len(c.Replacements)))
	}
	return fmt.Sprint(out)
}

// On a settled fleet that has not changed, a pass with the last pass's memory simulates nothing
// and leaves every node alone for the same reasons as a pass that simulates them all.
func TestRememberedVerdictsOfAQuietFleet(t *testing.T) {
	fx, last := settled(t)
	warm, cold := decideBoth(t, fx, last)
	if warm.Simulations != 0 || cold.Simulations == 0 {
		t.Errorf("simulations: %d with the memory (want 0), %d without (want some)", warm.Simulations, cold.Simulations)
	}
	if len(warm.Commands)+len(cold.Commands) != 0 {
		t.Fatalf("a settled fleet's pass acted: %s / %s", commandSummary(warm), commandSummary(cold))
	}
	if got, want := skipSummary(warm), skipSummary(cold); got != want {
		t.Errorf("skips with the memory %s, without %s", got, want)
	}
	if !warm.Prepared.SharesPools(last.Memory.prepared) || cold.Prepared.SharesPools(last.Memory.prepared) {
		t.Error("the pass with the memory compiled its pools again, or the pass without reused them")
	}
	sameSkips(t, warm, cold)
}

// sameSkips fails t for each node the pass with the memory left alone for another reason than
// the pass without it.
func sameSkips(t *testing.T, warm, cold *Decision) {
	t.Helper()
	byNode := map[string]Skip{}
	for _, s := range cold.Skips {
		byNode[s.Node] = s
	}
	for _, s := range warm.Skips {
		if c := byNode[s.Node]; c != s {
			t.Errorf("node %s: remembered %s %q, simulated %s %q", s.Node, s.Reason, s.Message, c.Reason, c.Message)
		}
	}
}

// What the memory must not hide: a node with room for the pods others could not place, new
// prices, and time. After each, the pass with the memory decides what the pass without does.
func TestRememberedVerdictsGiveWay(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(fx *fleet)
		// resimulated: the pass with the memory simulates as much as the pass without.
		resimulated bool
	}{
		{name: "a large node with room joins", change: func(fx *fleet) {
			it := fx.sp.InstanceTypes[slices.IndexFunc(fx.sp.InstanceTypes, func(it *catalog.InstanceType) bool { return it.Name == "m5.24xlarge" })]
			fx.add("big", claimOf(fx, it), nil, fx.now.Add(-time.Hour))
			fx.meta[len(fx.meta)-1].DoNotDisrupt = true // it stays, and takes others' pods
		}},
		{name: "every price halves", resimulated: true, change: halvePrices},
		{name: "the verdicts grow old", resimulated: true, change: func(fx *fleet) { fx.now = fx.now.Add(DefaultRejectionTTL) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx, last := settled(t)
			tc.change(fx)
			warm, cold := decideBoth(t, fx, last)
			if got, want := commandSummary(warm), commandSummary(cold); got != want {
				t.Errorf("commands with the memory %s, without %s", got, want)
			}
			if tc.resimulated && tc.name == "every price halves" && warm.Prepared.SharesPools(last.Memory.prepared) {
				t.Error("the pools were reused with other prices")
			}
			if tc.resimulated && warm.Simulations != cold.Simulations {
				t.Errorf("%d simulations with the memory, %d without; want all of them again", warm.Simulations, cold.Simulations)
			}
			t.Logf("%d simulations with the memory, %d without; commands %s", warm.Simulations, cold.Simulations, commandSummary(cold))
		})
	}
}

// halvePrices gives the fleet's pool copies of its instance types at half their prices.
func halvePrices(fx *fleet) {
	types := make([]*catalog.InstanceType, len(fx.sp.InstanceTypes))
	for i, it := range fx.sp.InstanceTypes {
		cp := *it
		cp.Offerings = slices.Clone(it.Offerings)
		for j := range cp.Offerings {
			cp.Offerings[j].Price /= 2
		}
		types[i] = &cp
	}
	fx.sp.InstanceTypes = types
}

// claimOf is a claim of the fleet's pool launching it on demand.
func claimOf(fx *fleet, it *catalog.InstanceType) *solver.Claim {
	o := it.Offerings[slices.IndexFunc(it.Offerings, func(o catalog.Offering) bool { return o.CapacityType == apisv1.CapacityTypeOnDemand })]
	return &solver.Claim{NodePool: fx.sp.Name, InstanceType: it, Offering: o, Price: o.Price}
}

// A pod object seen before on its node is not read again: its mark comes from the memory, and
// a node's fingerprint is the one reading every pod afresh gives, whatever moved. A pod that
// changes (a new object) changes its node's fingerprint.
func TestPodMarksCarriedOver(t *testing.T) {
	fx := fragmented(t, 100)
	seed := maphash.MakeSeed()
	marks := map[string]podsMark{}
	for i := range fx.nodes {
		_, marks[fx.nodes[i].Name] = markNode(seed, &fx.nodes[i], podRequests{}, podsMark{})
	}
	var changed, other *solver.Node
	for i := range fx.nodes {
		n := &fx.nodes[i]
		reqs := podRequests{}
		fresh, _ := markNode(seed, n, podRequests{}, podsMark{})
		carried, _ := markNode(seed, n, reqs, marks[n.Name])
		if fresh != carried {
			t.Fatalf("node %s: fingerprint %+v read afresh, %+v from the memory's pods", n.Name, fresh, carried)
		}
		for _, p := range n.Pods {
			if _, ok := reqs[p]; !ok {
				t.Fatalf("node %s: the requests of pod %s were not handed on", n.Name, p.Name)
			}
		}
		switch {
		case changed == nil && len(n.Pods) > 1:
			changed = n
		case other == nil && len(n.Pods) > 0:
			other = n
		}
	}
	if changed == nil || other == nil {
		t.Fatal("too few nodes hold pods")
	}
	// A pod moved from another node, the node's own in another order and one gone: the same
	// fingerprint as read afresh.
	moved := *changed
	kept := slices.Clone(changed.Pods[1:])
	slices.Reverse(kept)
	moved.Pods = append([]*corev1.Pod{other.Pods[0]}, kept...)
	fresh, _ := markNode(seed, &moved, podRequests{}, podsMark{})
	if carried, _ := markNode(seed, &moved, podRequests{}, marks[changed.Name]); carried != fresh {
		t.Fatalf("node %s with pods moved: fingerprint %+v read afresh, %+v from the memory's pods", changed.Name, fresh, carried)
	}
	before, _ := markNode(seed, changed, podRequests{}, marks[changed.Name])
	p := changed.Pods[0].DeepCopy()
	p.Labels = map[string]string{"app": "another"}
	changed.Pods = append([]*corev1.Pod{p}, changed.Pods[1:]...)
	if after, _ := markNode(seed, changed, podRequests{}, marks[changed.Name]); after.pods == before.pods {
		t.Errorf("node %s: a pod relabelled as a new object left its fingerprint as it was", changed.Name)
	}
}

// Pods pending take room in the plan with a node and in the plan without it alike: on a settled
// fleet with a pod pending that fills a new node by itself, a pass with the memory simulates
// none of the nodes again and leaves each alone for the reason a pass without the memory finds.
func TestRememberedVerdictsHoldWhilePodsPend(t *testing.T) {
	fx, last := settled(t)
	var largest *catalog.InstanceType
	for _, it := range fx.sp.InstanceTypes {
		if largest == nil || it.Allocatable()[scheduling.CPU] > largest.Allocatable()[scheduling.CPU] {
			largest = it
		}
	}
	room := largest.Allocatable()
	big := pod(fmt.Sprintf("%dm", room[scheduling.CPU]), fmt.Sprint(room[scheduling.Memory]))
	big.Status.Phase = corev1.PodPending
	snap := fx.snapshot()
	snap.Solver.Pods = []*corev1.Pod{big}
	warm, err := Decide(snap, Options{Cursor: last.Cursor, Memory: last.Memory})
	if err != nil {
		t.Fatal(err)
	}
	cold, err := Decide(snap, Options{Cursor: last.Cursor, RejectionTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(warm.Commands)+len(cold.Commands) != 0 {
		t.Fatalf("a settled fleet's pass acted: %s / %s", commandSummary(warm), commandSummary(cold))
	}
	// The pending pod's plan is one solve; the candidates are not simulated again.
	if warm.Simulations > 1 || cold.Simulations <= 1 {
		t.Errorf("simulations: %d with the memory (want at most the backlog's plan), %d without", warm.Simulations, cold.Simulations)
	}
	sameSkips(t, warm, cold)
}

// A node's Generation is found by its name whether or not the disruption nodes are in the
// solver nodes' order, and the pass's memory keeps it.
func TestGenerationsFoundByName(t *testing.T) {
	fx := fragmented(t, 20)
	for _, reversed := range []bool{false, true} {
		s := fx.snapshot()
		s.Nodes = slices.Clone(s.Nodes)
		for i := range s.Nodes {
			s.Nodes[i].Generation = uint64(1000 + i)
		}
		want := map[string]uint64{}
		for _, n := range s.Nodes {
			want[n.Name] = n.Generation
		}
		if reversed {
			slices.Reverse(s.Nodes)
		}
		gens := generations(s)
		for i, n := range s.Solver.Nodes {
			if got := gens(i, n.Name); got != want[n.Name] {
				t.Fatalf("reversed=%v: node %s: generation %d, want %d", reversed, n.Name, got, want[n.Name])
			}
		}
		d, err := Decide(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for name, g := range want {
			if got := d.Memory.nodes[name].mark.gen; got != g {
				t.Errorf("reversed=%v: node %s: the memory keeps generation %d, want %d", reversed, name, got, g)
			}
		}
	}
}

// A driver that hands over the last pass's prepared snapshot as if nothing but the nodes had
// changed, when the instance types did (every price halved), does not make the pass solve with
// the old prices: where the memory can tell, the pass prepares afresh and decides as a pass
// given nothing does.
func TestAPreparedSnapshotWithOtherPoolsIsNotUsed(t *testing.T) {
	fx, last := settled(t)
	halvePrices(fx)
	stale := fx.snapshot()
	stale.Prepared = last.Prepared
	got, err := Decide(stale, Options{Cursor: last.Cursor, Memory: last.Memory})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Decide(fx.snapshot(), Options{Cursor: last.Cursor, Memory: last.Memory})
	if err != nil {
		t.Fatal(err)
	}
	if got.Prepared.SharesPools(last.Prepared) {
		t.Error("the pass solved on the pools of the last pass, whose prices were not these")
	}
	if a, b := commandSummary(got), commandSummary(want); a != b {
		t.Errorf("commands %s, and %s when the pass was given no prepared snapshot", a, b)
	}
	sameSkips(t, got, want)
}

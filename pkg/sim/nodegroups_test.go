package sim

import (
	"testing"

	"github.com/tenon-sh/tenon/pkg/manifest"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// The node-groups baseline gives each GPU shape a group its pods fill: 1-GPU pods of 12 CPUs
// get a 1-GPU type with room for 12 CPUs, not the 8-GPU type that is cheapest per pod when
// full of them (two per node, six GPUs stranded), and 8-GPU pods an 8-GPU type.
func TestNodeGroupsGiveEachGPUShapeAGroupItFills(t *testing.T) {
	set, err := manifest.Load("../../examples/simulate/gpu-nodepools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	env := traceEnv(t, set, "0,36000,40,12000,16384,1,\n60,36000,4,24000,98304,8,\n")
	k := newKsched(env, false)
	groups, err := chooseGroups(env, k, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		cpu, gpus int64
	}{{12000, 1}, {24000, 8}} {
		found := false
		for _, g := range groups {
			a := g.kt.alloc
			if a[scheduling.CPU] >= s.cpu && a[scheduling.NvidiaGPU] == s.gpus {
				found = true
			}
		}
		if !found {
			var names []string
			for _, g := range groups {
				names = append(names, g.kt.it.Name)
			}
			t.Errorf("no group of %d GPUs with room for %dm CPU; groups %v", s.gpus, s.cpu, names)
		}
	}
	// Least-waste counts GPUs: one 1-GPU pod wastes less on the 1-GPU group than on an
	// 8-GPU one.
	var one, eight *group
	for i := range groups {
		switch groups[i].kt.alloc[scheduling.NvidiaGPU] {
		case 1:
			one = &groups[i]
		case 8:
			eight = &groups[i]
		}
	}
	if one == nil || eight == nil {
		t.Fatal("no 1-GPU and 8-GPU groups")
	}
	r, err := newRun(env, exact().withDefaults(), Policy{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	g := &nodeGroups{k: k, groups: groups}
	pod := []PodID{0} // a 1-GPU pod of the first job
	if _, w1 := g.estimate(r.view, *one, pod); func() bool { _, w8 := g.estimate(r.view, *eight, pod); return w1 >= w8 }() {
		t.Errorf("a 1-GPU pod wastes no less on %s than on %s", one.kt.it.Name, eight.kt.it.Name)
	}
}

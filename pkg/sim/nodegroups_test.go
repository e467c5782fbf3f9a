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

// The least-waste score counts GPUs: with two groups whose CPU and memory waste favour the
// 8-GPU one for a 1-GPU pod (it has just the CPU and memory the pod needs, the 1-GPU group much
// more), the GPUs it would leave idle make the 1-GPU group the better choice.
func TestLeastWasteCountsIdleGPUs(t *testing.T) {
	set, err := manifest.Load("../../examples/simulate/gpu-nodepools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	env := traceEnv(t, set, "0,3600,1,9000,36864,1,\n")
	k := newKsched(env, false)
	groups, err := chooseGroups(env, k, nil)
	if err != nil || len(groups) == 0 {
		t.Fatalf("groups %v, %v", groups, err)
	}
	r, err := newRun(env, exact().withDefaults(), Policy{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	alloc := func(cpu, mem, gpus int64) scheduling.Resources {
		var a scheduling.Resources
		a[scheduling.CPU], a[scheduling.Memory], a[scheduling.NvidiaGPU], a[scheduling.Pods] = cpu, mem, gpus, 110
		return a
	}
	one, eight := groups[0], groups[0] // the type admits the pod; only the room differs
	one.kt.alloc = alloc(16000, 64<<30, 1)
	eight.kt.alloc = alloc(10000, 40<<30, 8)
	g := &nodeGroups{k: k, groups: []group{one, eight}}
	_, w1 := g.estimate(r.view, one, []PodID{0})
	_, w8 := g.estimate(r.view, eight, []PodID{0})
	if w1 >= w8 {
		t.Errorf("waste %.3f on the 1-GPU group, %.3f on the 8-GPU one: idle GPUs must count", w1, w8)
	}
}

package bound

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// Realistic random problems for benchmarks and for checks too large for brute force: catalogs
// of instance families (2–192 vCPU, 2/4/8 GiB per vCPU, a few GPU families, pod limits that grow
// with size) priced linearly in CPU and memory with noise, and classes whose type lists come from
// requirement-like filters (architecture, family, minimum size, GPU).

type typeInfo struct {
	arm      bool
	ratio    int // GiB per vCPU
	cpu, gpu int
}

var sizes = []int{2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192}

func resources(cpuMilli, memBytes, pods, gpu int64) scheduling.Resources {
	var r scheduling.Resources
	r[scheduling.CPU], r[scheduling.Memory], r[scheduling.Pods], r[scheduling.NvidiaGPU] = cpuMilli, memBytes, pods, gpu
	return r
}

func catalog(rng *rand.Rand, n int) ([]Type, []typeInfo) {
	const gib = 1 << 30
	var types []Type
	var infos []typeInfo
	for family := 0; len(types) < n; family++ {
		info := typeInfo{arm: family%4 == 1, ratio: []int{2, 4, 8}[family%3]}
		factor := 0.85 + 0.3*rng.Float64()
		if info.arm {
			factor *= 0.85
		}
		gpuFamily := family%6 == 2
		for _, cpu := range sizes {
			if len(types) == n {
				break
			}
			info.cpu, info.gpu = cpu, 0
			if gpuFamily {
				if cpu < 8 {
					continue
				}
				info.gpu = max(1, cpu/24)
			}
			mem := int64(cpu*info.ratio) * gib
			price := factor * (0.031*float64(cpu) + 0.0045*float64(cpu*info.ratio) + 0.9*float64(info.gpu))
			price *= 1 + 0.1*(rng.Float64()-0.5)
			capacity := resources(int64(cpu)*1000-100-int64(cpu)*10, mem-mem/14, int64(min(737, max(29, cpu*9))), int64(info.gpu))
			types = append(types, Type{Name: "t", Price: math.Round(price*1e4) / 1e4, Capacity: capacity})
			infos = append(infos, info)
		}
	}
	return types, infos
}

// workload draws k classes against a catalog.
func workload(rng *rand.Rand, k int, infos []typeInfo) ([]Class, []Group) {
	const mib = 1 << 20
	var classes []Class
	var groups []Group
	for range k {
		cpu := []int64{100, 250, 500, 1000, 2000, 4000, 8000}[rng.IntN(7)]
		mem := cpu * []int64{1, 2, 4, 8}[rng.IntN(4)] * mib * 1024 / 1000
		c := Class{Count: 1 + rng.IntN(30), Demand: resources(cpu, mem, 1, 0), Group: -1}
		filter := rng.IntN(10)
		if filter == 9 {
			c.Demand[scheduling.NvidiaGPU] = 1
			c.Count = 1 + rng.IntN(6)
		}
		minCPU := []int{4, 8, 16}[rng.IntN(3)]
		for t, info := range infos {
			ok := info.gpu == 0
			switch filter {
			case 4, 5:
				ok = ok && !info.arm
			case 6:
				ok = ok && info.arm
			case 7:
				ok = ok && info.ratio >= 4
			case 8:
				ok = ok && info.cpu >= minCPU
			case 9:
				ok = info.gpu > 0
			}
			if ok {
				c.Types = append(c.Types, t)
			}
		}
		if len(c.Types) == 0 { // no GPU family in a small catalog
			c.Demand[scheduling.NvidiaGPU] = 0
			for t, info := range infos {
				if info.gpu == 0 {
					c.Types = append(c.Types, t)
				}
			}
		}
		switch r := rng.IntN(20); {
		case r < 3:
			c.Group = len(groups)
			groups = append(groups, Group{PerNode: 1})
		case r < 5:
			c.Group = len(groups)
			groups = append(groups, Group{PerNode: 2 + rng.IntN(3)})
		}
		classes = append(classes, c)
	}
	return classes, groups
}

func realistic(seed uint64, classes, types int) *Problem {
	rng := rand.New(rand.NewPCG(seed, 0x7e11011))
	ts, infos := catalog(rng, types)
	cs, gs := workload(rng, classes, infos)
	// A few reserved types (cheap, limited) and existing nodes (free, one each).
	for i := 0; i < len(ts)/50; i++ {
		t := rng.IntN(len(ts))
		ts[t].MaxCount = 1 + rng.IntN(3)
		ts[t].Price = math.Round(ts[t].Price*0.4*1e4) / 1e4
	}
	for i := 0; i < len(ts)/100; i++ {
		t := rng.IntN(len(ts))
		ts[t].MaxCount, ts[t].Price = 1, 0
	}
	return &Problem{Types: ts, Classes: cs, Groups: gs}
}

// firstFit packs a problem greedily (largest pods first, into the first open node that takes
// them, else a new node of the type cheapest per pod for the class) and returns its cost: an
// upper bound on the optimum, or +Inf if it got stuck.
func firstFit(p *Problem) float64 {
	type node struct {
		t     int
		free  scheduling.Resources
		group map[int]int
	}
	var nodes []*node
	used := make([]int, len(p.Types))
	order := make([]int, len(p.Classes))
	for i := range order {
		order[i] = i
	}
	size := func(c Class) int64 { return c.Demand[scheduling.CPU] + c.Demand[scheduling.Memory]>>20 }
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(size(p.Classes[b]), size(p.Classes[a])) })
	cost := 0.0
	for _, k := range order {
		c := p.Classes[k]
		perNode := math.MaxInt
		if c.Group >= 0 {
			perNode = p.Groups[c.Group].PerNode
		}
		for range c.Count {
			placed := false
			for _, n := range nodes {
				if slices.Contains(c.Types, n.t) && c.Demand.Fits(&n.free) && (c.Group < 0 || n.group[c.Group] < perNode) {
					n.free = n.free.Sub(c.Demand)
					if c.Group >= 0 {
						n.group[c.Group]++
					}
					placed = true
					break
				}
			}
			if placed {
				continue
			}
			best, bestPer := -1, math.Inf(1)
			for _, t := range c.Types {
				ty := p.Types[t]
				if !c.Demand.FitsIn(ty.Capacity) || (ty.MaxCount > 0 && used[t] >= ty.MaxCount) {
					continue
				}
				fit := int64(math.MaxInt64)
				for r, d := range c.Demand {
					if d > 0 {
						fit = min(fit, ty.Capacity[r]/d)
					}
				}
				fit = min(fit, int64(c.Count), int64(perNode))
				if per := ty.Price / float64(fit); per < bestPer {
					best, bestPer = t, per
				}
			}
			if best < 0 || perNode < 1 {
				return math.Inf(1)
			}
			n := &node{t: best, free: p.Types[best].Capacity.Sub(c.Demand), group: map[int]int{}}
			if c.Group >= 0 {
				n.group[c.Group] = 1
			}
			nodes = append(nodes, n)
			used[best]++
			cost += p.Types[best].Price
		}
	}
	return cost
}

package sim

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"time"
)

// PolicyResult is what one policy did and cost over the replay.
type PolicyResult struct {
	Policy string `json:"policy"`
	// CostUSD is what the instances cost from their launch until they were terminated (or
	// until the run ended).
	CostUSD float64 `json:"costUSD"`
	// Incomplete is set when the replay was stopped (a timeout, an interrupt) before its end:
	// the figures cover the virtual time up to EndHours only.
	Incomplete bool `json:"incomplete,omitempty"`
	// EndHours is the virtual time the run ended: the last pod finished, or Options.Until, or,
	// when the pods left could never start, the moment that was clear (an hour after it
	// stalled if nodes were still up, for the policy to take them away).
	EndHours float64 `json:"endHours"`
	// EndedIdle is set when the run was ended because, every job being in, no pod had run for
	// an hour while pods waited and the policy kept buying and removing nodes (gangs it bought
	// part of the capacity for, which never completed).
	EndedIdle bool `json:"endedIdle,omitempty"`

	PodsSubmitted int `json:"podsSubmitted"`
	PodsStarted   int `json:"podsStarted"`
	// PodsNeverStarted were submitted but never ran; PodsUnfinished ran but had work left at
	// the end.
	PodsNeverStarted int `json:"podsNeverStarted"`
	PodsUnfinished   int `json:"podsUnfinished"`
	// PodsUnplaceable are the pods of PodsNeverStarted that no instance type of any NodePool
	// can hold (the bound leaves them out too); the others were held back (limits, capacity
	// that could not be bought) until the run ended.
	PodsUnplaceable int `json:"podsUnplaceable"`
	// Pending time: from a pod's submission to its first start, over the pods that started.
	PendingP50Seconds float64 `json:"pendingP50Seconds"`
	PendingP99Seconds float64 `json:"pendingP99Seconds"`
	PendingMaxSeconds float64 `json:"pendingMaxSeconds"`

	NodesLaunched int `json:"nodesLaunched"`
	// NodesDisrupted counts the nodes taken away, by reason.
	NodesDisrupted map[Reason]int `json:"nodesDisrupted"`
	// Commands counts disruption commands by reason.
	Commands map[Reason]int `json:"commands"`
	// PodsEvicted counts evictions of running pods (by commands and interruptions);
	// CommandEvictions the pods on the nodes of disruption commands.
	PodsEvicted      int `json:"podsEvicted"`
	CommandEvictions int `json:"commandEvictions"`
	// SavingsPerHour is the $/h the disruption commands saved, summed over commands;
	// EvictionsPerDollar is CommandEvictions per dollar saved, counting each command's saving
	// over one hour.
	SavingsPerHour     float64 `json:"savingsPerHour"`
	EvictionsPerDollar float64 `json:"evictionsPerDollar"`

	// GPU-hours paid for and allocated to running pods; Stranded is their difference (GPUs
	// paid for and idle, booting nodes included).
	GPUHoursPaid     float64 `json:"gpuHoursPaid"`
	GPUHoursUsed     float64 `json:"gpuHoursUsed"`
	StrandedGPUHours float64 `json:"strandedGPUHours"`
	// Utilisation is allocated ÷ provisioned over the whole run (CPU, memory, GPU).
	Utilisation Utilisation `json:"utilisation"`

	Series  Series    `json:"series"`
	TypeMix []TypeUse `json:"typeMix"`
	Stats   Stats     `json:"stats"`
	// WallSeconds is how long the run took on this machine.
	WallSeconds float64  `json:"wallSeconds"`
	Assumptions []string `json:"assumptions,omitempty"`
	// Bill is the run's bill under Options.Commitments (absent without): CostUSD is then what
	// the instances would have cost at list prices.
	Bill *Bill `json:"bill,omitempty"`
}

// Bill is what a run came to with commitments.
type Bill struct {
	// CommitmentUSD is what the commitments cost over the run whether used or not; OverageUSD
	// the usage they left uncovered, at list prices; TotalUSD their sum.
	CommitmentUSD float64 `json:"commitmentUSD"`
	OverageUSD    float64 `json:"overageUSD"`
	TotalUSD      float64 `json:"totalUSD"`
	// Utilization is the commitments' mean utilisation (each commitment's share used, averaged
	// over the commitments) over the run's time.
	Utilization float64 `json:"utilization"`
}

// Utilisation is allocated ÷ provisioned per resource (0 when nothing was provisioned).
type Utilisation struct {
	CPU    float64 `json:"cpu"`
	Memory float64 `json:"memory"`
	// GPU counts a share of a shared GPU as its fraction of the GPU.
	GPU float64 `json:"gpu"`
	// GPUShares is the shares of shared GPUs allocated ÷ those of the nodes whose GPUs are
	// shared (0 when no GPU is shared).
	GPUShares float64 `json:"gpuShares,omitempty"`
}

// Series are per-bucket time series over the run: bucket i covers [i·Step, (i+1)·Step).
type Series struct {
	StepSeconds float64 `json:"stepSeconds"`
	// CostPerHour is the average $/h in each bucket.
	CostPerHour []float64 `json:"costPerHour"`
	// CPU, Memory and GPU are allocated ÷ provisioned in each bucket (0 when nothing was).
	CPU    []float64 `json:"cpu"`
	Memory []float64 `json:"memory"`
	GPU    []float64 `json:"gpu"`
	// GPUShares is the shares of shared GPUs allocated ÷ provisioned in each bucket.
	GPUShares []float64 `json:"gpuShares,omitempty"`
	// CommitmentUtilization is the commitments' mean utilisation in each bucket (with
	// Options.Commitments).
	CommitmentUtilization []float64 `json:"commitmentUtilization,omitempty"`
}

// finish closes the books of a run.
func (r *run) finish() *PolicyResult {
	m := r.met
	res := &PolicyResult{
		Policy: r.policy.Name, CostUSD: m.cost, EndHours: r.now.Hours(),
		PodsSubmitted: int(r.firstPod[r.nextJob]), PodsStarted: len(m.waits),
		NodesLaunched: m.nodes, NodesDisrupted: maps.Clone(m.disr), Commands: maps.Clone(m.cmds),
		PodsEvicted: m.evict, CommandEvictions: m.cmdEv, SavingsPerHour: m.saved,
		GPUHoursPaid: m.gpuH[0], GPUHoursUsed: m.gpuH[1], StrandedGPUHours: m.gpuH[0] - m.gpuH[1],
		TypeMix: m.typeMix(), Stats: r.stats, Assumptions: r.policy.Assumptions,
		PodsUnplaceable: r.unplaceable, Incomplete: r.incomplete, EndedIdle: r.churned,
	}
	for k, v := range res.Commands {
		if v == 0 {
			delete(res.Commands, k)
		}
	}
	if m.saved > 0 {
		res.EvictionsPerDollar = float64(m.cmdEv) / m.saved
	}
	for i := range r.pods[:res.PodsSubmitted] {
		p := &r.pods[i]
		switch {
		case !p.everRan:
			res.PodsNeverStarted++
		case p.State != PodDone || p.Work > 0:
			res.PodsUnfinished++
		}
	}
	waits := slices.Clone(m.waits)
	slices.Sort(waits)
	res.PendingP50Seconds = quantile(waits, 0.5)
	res.PendingP99Seconds = quantile(waits, 0.99)
	if len(waits) > 0 {
		res.PendingMaxSeconds = float64(waits[len(waits)-1])
	}
	var prov, all [numMetered]float64
	res.Series = Series{StepSeconds: m.step.Seconds(), CostPerHour: make([]float64, len(m.costB))}
	ratios := [numMetered]*[]float64{&res.Series.CPU, &res.Series.Memory, &res.Series.GPU, &res.Series.GPUShares}
	for k := range numMetered {
		*ratios[k] = make([]float64, len(m.costB))
	}
	for b := range m.costB {
		width := m.step.Hours()
		if end := time.Duration(b+1) * m.step; end > r.now {
			width = (r.now - time.Duration(b)*m.step).Hours()
		}
		if width > 0 {
			res.Series.CostPerHour[b] = m.costB[b] / width
		}
		for k := range numMetered {
			prov[k] += m.provB[k][b]
			all[k] += m.allB[k][b]
			(*ratios[k])[b] = ratio(m.allB[k][b], m.provB[k][b])
		}
	}
	res.Utilisation = Utilisation{CPU: ratio(all[mCPU], prov[mCPU]), Memory: ratio(all[mMem], prov[mMem]), GPU: ratio(all[mGPU], prov[mGPU]),
		GPUShares: ratio(all[mShare], prov[mShare])}
	if m.shareSlot < 0 {
		res.Series.GPUShares = nil
	}
	if r.bill != nil {
		res.Bill = &Bill{CommitmentUSD: m.fixedCost, OverageUSD: m.overCost, TotalUSD: m.fixedCost + m.overCost}
		var sum float64
		res.Series.CommitmentUtilization = make([]float64, len(m.costB))
		for b := range m.costB {
			width := m.step.Hours()
			if end := time.Duration(b+1) * m.step; end > r.now {
				width = (r.now - time.Duration(b)*m.step).Hours()
			}
			if b < len(m.utilB) && width > 0 {
				res.Series.CommitmentUtilization[b] = m.utilB[b] / width
				sum += m.utilB[b]
			}
		}
		if r.now > 0 {
			res.Bill.Utilization = sum / r.now.Hours()
		}
	}
	return res
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return math.Min(a/b, 1)
}

// quantile returns the q-quantile of sorted values (nearest rank).
func quantile(sorted []float32, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return float64(sorted[min(max(i, 0), len(sorted)-1)])
}

// DisruptedTotal returns the nodes taken away for any reason.
func (p *PolicyResult) DisruptedTotal() int {
	n := 0
	for _, v := range p.NodesDisrupted {
		n += v
	}
	return n
}

// Reasons returns the reasons of NodesDisrupted, sorted.
func (p *PolicyResult) Reasons() []Reason {
	return slices.SortedFunc(maps.Keys(p.NodesDisrupted), func(a, b Reason) int { return cmp.Compare(a, b) })
}

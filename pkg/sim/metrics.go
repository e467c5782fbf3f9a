package sim

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// reasonCancelled removes the replacements of a cancelled command; it is not a disruption.
const reasonCancelled Reason = ""

// metered resources: CPU cores, memory GiB, GPUs (in thousandths, so that a share of a
// shared GPU counts as its fraction), and shares of shared GPUs (Workload.GPUShares).
const (
	mCPU = iota
	mMem
	mGPU
	mShare
	numMetered
)

// metrics integrates a run's cost and utilisation over virtual time, event by event.
type metrics struct {
	r       *run
	step    time.Duration
	last    time.Duration
	rate    float64               // $/h of the instances alive
	prov    [numMetered]int64     // allocatable of the instances alive (milli-CPU, bytes, GPUs)
	alloc   [numMetered]int64     // requests of running pods and of DaemonSets on ready nodes
	cost    float64               // $ so far
	gpuH    [2]float64            // GPU-hours paid, allocated
	costB   []float64             // $ per bucket
	provB   [numMetered][]float64 // unit-hours provisioned per bucket
	allB    [numMetered][]float64 // unit-hours allocated per bucket
	waits   []float32             // seconds from submission to first start, per pod started
	types   map[typeKey]*TypeUse  // the instance-type mix
	disr    map[Reason]int        // nodes taken away, by reason
	evict   int                   // pods evicted (by anything)
	cmdEv   int                   // pods on the nodes of disruption commands
	cmds    map[Reason]int        // commands, by reason
	saved   float64               // $/h saved by commands
	lastF   time.Duration         // the last time a pod finished
	nodes   int                   // nodes launched
	billed  int                   // nodes billed now
	isReady map[NodeID]bool       // nodes whose DaemonSets count as allocated
	units   [numMetered]float64   // divisors from the vector units to metered units
	// With commitments (run.bill): the bill's rates now (fixed part, overage, the mean of the
	// commitments' utilisation), what they came to, and the utilisation per bucket.
	fixedRate, overRate, utilNow float64
	fixedCost, overCost          float64
	utilB                        []float64
	// shareSlot is the Resources slot of the workload's share resource (ResourceGPUShared or a
	// MIG profile's; -1: the workload shares no GPU), sharesPer the shares of one GPU.
	shareSlot int
	sharesPer int64
}

type typeKey struct{ name, ct string }

// TypeUse is how much a run used one instance type through one capacity type.
type TypeUse struct {
	Type         string  `json:"type"`
	CapacityType string  `json:"capacityType"`
	Nodes        int     `json:"nodes"`
	Hours        float64 `json:"hours"`
	CostUSD      float64 `json:"costUSD"`
}

// bucketStep is the width of the time-series buckets for a span of virtual time: span/n
// rounded up to a whole minute (n < 1 is taken as one bucket).
func bucketStep(span time.Duration, n int) time.Duration {
	step := (span/time.Duration(max(n, 1)) + time.Minute - 1) / time.Minute * time.Minute
	return max(step, time.Minute)
}

func newMetrics(r *run, span time.Duration, opts Options) *metrics {
	m := &metrics{
		r: r, step: bucketStep(span, opts.Buckets),
		types: map[typeKey]*TypeUse{}, disr: map[Reason]int{}, cmds: map[Reason]int{}, isReady: map[NodeID]bool{},
		units:     [numMetered]float64{1000, 1 << 30, 1000, 1},
		shareSlot: -1,
	}
	if n := r.env.Workload.GPUShares; n > 0 {
		if i, ok := scheduling.ResourceIndex(r.env.Workload.ShareResource); ok {
			m.shareSlot, m.sharesPer = i, n
		}
	}
	return m
}

// advance integrates everything from the last change to t.
func (m *metrics) advance(t time.Duration) {
	if t <= m.last {
		return
	}
	for b := m.r.bill; b != nil && b.until >= 0 && b.until < t; {
		// A commitment starts or ends before t: the bill changes there.
		at := b.until
		m.integrate(at)
		b.rebook(at)
		m.rebill()
	}
	m.integrate(t)
}

// rebill recomputes the bill's rates after the fleet or the commitments changed.
func (m *metrics) rebill() {
	b := m.r.bill
	if b == nil {
		return
	}
	bill := b.bill()
	m.fixedRate, m.overRate, m.utilNow = bill.Fixed, bill.Overage, 0
	if u := b.book.Utilization(bill); len(u) > 0 {
		for _, x := range u {
			m.utilNow += x
		}
		m.utilNow /= float64(len(u))
	}
}

// integrate integrates everything from the last change to t, no commitment starting or ending
// in between.
func (m *metrics) integrate(t time.Duration) {
	if t <= m.last {
		return
	}
	h := (t - m.last).Hours()
	m.cost += m.rate * h
	m.fixedCost += m.fixedRate * h
	m.overCost += m.overRate * h
	m.gpuH[0] += float64(m.prov[mGPU]) / 1000 * h
	m.gpuH[1] += float64(m.alloc[mGPU]) / 1000 * h
	for from := m.last; from < t; {
		b := int(from / m.step)
		to := min(t, time.Duration(b+1)*m.step)
		bh := (to - from).Hours()
		for len(m.costB) <= b {
			m.costB = append(m.costB, 0)
			for k := range numMetered {
				m.provB[k] = append(m.provB[k], 0)
				m.allB[k] = append(m.allB[k], 0)
			}
		}
		m.costB[b] += m.rate * bh
		if m.r.bill != nil {
			for len(m.utilB) <= b {
				m.utilB = append(m.utilB, 0)
			}
			m.utilB[b] += m.utilNow * bh
		}
		for k := range numMetered {
			m.provB[k][b] += float64(m.prov[k]) / m.units[k] * bh
			m.allB[k][b] += float64(m.alloc[k]) / m.units[k] * bh
		}
		from = to
	}
	m.last = t
}

// add adds sign times r to v: r is what pods request, or, when node is set, what a node has.
// A node whose GPUs are shared has them as shares alone (its nvidia.com/gpu in the catalog is
// not what its device plugin advertises); a pod asks for whole GPUs or for shares.
func (m *metrics) add(v *[numMetered]int64, r *scheduling.Resources, sign int64, node bool) {
	v[mCPU] += sign * r[scheduling.CPU]
	v[mMem] += sign * r[scheduling.Memory]
	gpu := r[scheduling.NvidiaGPU] * 1000
	if m.shareSlot >= 0 {
		sh := r[m.shareSlot]
		v[mShare] += sign * sh
		switch {
		case node && sh > 0:
			gpu = sh * 1000 / m.sharesPer
		case !node:
			gpu += sh * 1000 / m.sharesPer
		}
	}
	v[mGPU] += sign * gpu
}

func (m *metrics) launched(n *Node) {
	m.nodes++
	m.billed++
	m.rate += n.Price
	if m.r.bill != nil {
		m.r.bill.add(n)
		m.rebill()
	}
	alloc := n.Type.Allocatable()
	m.add(&m.prov, &alloc, +1, true)
	k := typeKey{n.Type.Name, n.Offering.CapacityType}
	if m.types[k] == nil {
		m.types[k] = &TypeUse{Type: k.name, CapacityType: k.ct}
	}
	m.types[k].Nodes++
}

func (m *metrics) ready(n *Node) {
	m.isReady[n.ID] = true
	m.add(&m.alloc, &n.daemons, +1, false)
}

// gone stops billing a node.
func (m *metrics) gone(n *Node) {
	m.billed--
	m.rate = max(m.rate-n.Price, 0)
	if m.billed == 0 {
		m.rate = 0 // no rounding drift left behind
	}
	if m.r.bill != nil {
		m.r.bill.remove(n)
		m.rebill()
	}
	alloc := n.Type.Allocatable()
	m.add(&m.prov, &alloc, -1, true)
	if m.isReady[n.ID] {
		delete(m.isReady, n.ID)
		m.add(&m.alloc, &n.daemons, -1, false)
	}
	u := m.types[typeKey{n.Type.Name, n.Offering.CapacityType}]
	h := (m.r.now - n.Launched).Hours()
	u.Hours += h
	u.CostUSD += h * n.Price
}

func (m *metrics) run(req *scheduling.Resources, sign int64) { m.add(&m.alloc, req, sign, false) }
func (m *metrics) started(wait time.Duration)                { m.waits = append(m.waits, float32(wait.Seconds())) }
func (m *metrics) finished(t time.Duration)                  { m.lastF = t }
func (m *metrics) evicted()                                  { m.evict++ }

func (m *metrics) disrupted(reason Reason) {
	if reason != reasonCancelled {
		m.disr[reason]++
	}
}

func (m *metrics) command(c *Command, pods int) {
	m.cmds[c.Reason]++
	m.cmdEv += pods
	m.saved += c.Savings
}

func (m *metrics) uncommand(c *Command) {
	m.cmds[c.Reason]--
	m.saved -= c.Savings
}

// typeMix returns the instance-type mix, dearest first, closing the books of the nodes still up.
func (m *metrics) typeMix() []TypeUse {
	for _, n := range m.r.nodes {
		if n.billed() {
			u := m.types[typeKey{n.Type.Name, n.Offering.CapacityType}]
			h := (m.r.now - n.Launched).Hours()
			u.Hours += h
			u.CostUSD += h * n.Price
		}
	}
	out := make([]TypeUse, 0, len(m.types))
	for _, k := range slices.SortedFunc(maps.Keys(m.types), func(a, b typeKey) int {
		return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.ct, b.ct))
	}) {
		out = append(out, *m.types[k])
	}
	slices.SortStableFunc(out, func(a, b TypeUse) int { return cmp.Compare(b.CostUSD, a.CostUSD) })
	return out
}

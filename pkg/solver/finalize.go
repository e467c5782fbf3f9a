package solver

import (
	"cmp"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// finalize decides every new claim's options and launch offering. Claims are settled in the
// order they were opened, with reservation capacity and limits counted afresh, so the result
// does not depend on the targets chosen on the way.
func (s *solve) finalize() {
	// Undo the holds taken while placing.
	for _, cl := range s.claims {
		if cl.resv >= 0 {
			s.reservations[cl.resv]++
		}
		p := cl.pool
		p.take(&p.types[cl.target].capacity, &scheduling.Resources{})
	}
	for _, cl := range s.claims {
		if len(cl.members) == 0 {
			continue // opened, but nothing joined it
		}
		out, reason := s.settle(cl)
		if out == nil {
			for _, m := range cl.members {
				m.c.placed -= len(m.pods)
				for _, pod := range m.pods {
					s.unschedulable = append(s.unschedulable, Unschedulable{Pod: pod, Reasons: []Reason{*reason}})
				}
			}
			continue
		}
		s.out = append(s.out, out)
	}
}

// optionBufs holds settle's scratch lists of options between solves: a solve settles few claims,
// and a list as long as a pool's types, grown afresh in every solve, was the largest allocation
// of a disruption pass's simulations.
var optionBufs = sync.Pool{New: func() any { return new([]option) }}

type option struct {
	ti    int
	price float64
	o     *offer
}

// settle computes a claim's options (types that hold everything on it, with a usable offer in
// its zones and capacity types, within limits), cheapest first, and takes the cheapest. It
// returns nil and the reason when no option is left, or too few for minValues under Strict.
func (s *solve) settle(cl *newClaim) (*Claim, *Reason) {
	p := cl.pool
	mask := offerBits(cl.zones, cl.cts)
	buf := optionBufs.Get().(*[]option)
	opts := (*buf)[:0]
	defer func() { clear(opts[:cap(opts)]); *buf = opts[:0]; optionBufs.Put(buf) }()
	sorted := true
	for ti := cl.types.Next(0); ti >= 0; ti = cl.types.Next(ti + 1) {
		t := p.types[ti]
		if !cl.used.Fits(&t.alloc) || !p.withinLimits(nil, &t.capacity) {
			continue
		}
		if o := t.cheapest(mask, s.reservations); o != nil {
			// Pool types are in price order of their cheapest offer; the claim's masks can only
			// make an offer dearer, which is when the options need sorting again.
			sorted = sorted && o.price == t.offers[0].price
			opts = append(opts, option{ti: ti, price: o.price, o: o})
		}
	}
	if len(opts) == 0 {
		return nil, &Reason{Kind: ReasonLimits, NodePool: p.name(), Detail: "no instance type that holds the claim fits in what the limits leave"}
	}
	if !sorted {
		slices.SortStableFunc(opts, func(a, b option) int {
			if c := cmp.Compare(a.price, b.price); c != 0 {
				return c
			}
			return strings.Compare(p.types[a.ti].it.Name, p.types[b.ti].it.Name)
		})
	}
	opts = s.truncate(cl, opts)
	relaxed, reason := s.settleMinValues(p, opts)
	if reason != nil {
		return nil, reason
	}
	launch := opts[0]
	lt := p.types[launch.ti]
	if launch.o.resv >= 0 {
		s.reservations[launch.o.resv]--
	}
	p.take(nil, &lt.capacity)

	out := &Claim{
		NodePool:          p.name(),
		Hostname:          s.hostname(cl.index),
		InstanceType:      lt.it,
		InstanceTypes:     make([]*catalog.InstanceType, len(opts)),
		Offering:          lt.it.Offerings[launch.o.index],
		Price:             launch.price,
		Requests:          cl.used,
		DaemonSetOverhead: lt.ds,
	}
	var bits uint64
	for i, o := range opts {
		t := p.types[o.ti]
		out.InstanceTypes[i] = t.it
		bits |= t.bits & mask
	}
	var zones []string
	for z, name := range s.zones {
		if bits>>(z*numCT)&(1<<numCT-1) != 0 {
			zones = append(zones, name)
		}
	}
	for ct, name := range ctNames {
		for z := range s.zones {
			if bits&(1<<(z*numCT+ct)) != 0 {
				out.CapacityTypes = append(out.CapacityTypes, name)
				break
			}
		}
	}
	reqs := p.reqs.Intersect(cl.residual)
	for _, m := range cl.members {
		reqs = reqs.Intersect(m.alt.reqs)
	}
	reqs = reqs.Add(scheduling.In(apisv1.LabelZone, zones...))
	reqs = reqs.Add(scheduling.In(apisv1.CapacityTypeLabelKey, out.CapacityTypes...))
	for _, r := range relaxed {
		if cur, ok := reqs.Get(r.key); ok {
			cur.MinValues = r.left
			reqs = reqs.Without(r.key).Add(cur)
		}
	}
	out.Requirements = reqs
	out.MinValuesRelaxed = len(relaxed) > 0
	out.Pods = make([]*corev1.Pod, 0, len(cl.members))
	for _, m := range cl.members {
		out.Pods = append(out.Pods, m.pods...)
	}
	return out, nil
}

// relaxedMinValue is a minValues requirement lowered to the distinct values left.
type relaxedMinValue struct {
	key  string
	left int
}

// settleMinValues checks a claim's final options against the pool's minValues requirements:
// under Strict a shortfall is the claim's reason to fail; under BestEffort it lowers the
// requirement to what is left.
func (s *solve) settleMinValues(p *pool, opts []option) ([]relaxedMinValue, *Reason) {
	if len(p.minValues) == 0 {
		return nil, nil
	}
	set := scheduling.NewBitset(len(p.types))
	for _, o := range opts {
		set.Set(o.ti)
	}
	var relaxed []relaxedMinValue
	for i := range p.minValues {
		mv := &p.minValues[i]
		left := countValues(mv.ki, set, mv.min)
		if left >= mv.min {
			continue
		}
		if s.strictMinValues() {
			return nil, minValuesReason(p, mv, left)
		}
		relaxed = append(relaxed, relaxedMinValue{key: mv.key, left: left})
	}
	return relaxed, nil
}

// truncate keeps at most MaxInstanceTypes options, but never fewer than a minValues requirement
// of the claim needs.
func (s *solve) truncate(cl *newClaim, opts []option) []option {
	limit := s.opts.MaxInstanceTypes
	if len(opts) <= limit {
		return opts
	}
	p := cl.pool
	for _, r := range p.reqs.Items() {
		if r.MinValues == 0 {
			continue
		}
		seen := map[string]bool{}
		for i, o := range opts {
			v, _ := p.types[o.ti].it.Label(r.Key)
			seen[v] = true
			if len(seen) >= r.MinValues {
				limit = max(limit, i+1)
				break
			}
		}
	}
	return opts[:min(limit, len(opts))]
}

// price is what the settled claims cost.
func (s *solve) price() float64 {
	var p float64
	for _, c := range s.out {
		p += c.Price
	}
	return p
}

// plan assembles the result.
func (s *solve) plan() *Plan {
	pl := &Plan{Placements: s.placements, Claims: s.out, Unschedulable: s.unschedulable}
	for _, c := range s.out {
		pl.Price += c.Price
	}
	pl.Relaxed = s.relaxed
	pl.Repaired = s.repaired
	pl.Guide = s.guideStats
	if !s.opts.SkipBound {
		pl.LowerBound, pl.Bound = s.lowerBound()
	}
	return pl
}

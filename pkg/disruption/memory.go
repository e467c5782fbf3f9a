package disruption

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"

	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// Memory is what one pass hands the next (Decision.Memory, passed back as Options.Memory): the
// single-node consolidation verdicts it simulated, so that a node whose verdict cannot have
// changed is not simulated again. On a quiet fleet nearly every pass rejects every node for the
// same reasons, and each rejection costs a solve over the whole fleet.
//
// A remembered rejection holds while all of these do:
//   - it is younger than Options.RejectionTTL;
//   - the node is as it was (its labels, taints, allocatable, price and pods);
//   - the pass's context is the same: the NodePools with their instance types, offerings,
//     prices and, where a pool has limits, its usage; the DaemonSets; the options;
//   - no other node gained room that could take a pod the simulation found no room for: each
//     node whose room grew, that appeared, that became initialized, or whose labels or taints
//     changed since the pass before has room, in every resource, for none of the node's pods
//     that the simulation put on new claims, on nodes not yet initialized, or nowhere.
//
// The last condition looks only at those pods, not at the pods the simulation housed on other
// nodes: one of those could move into the new room and leave its place to a pod that had none,
// so a rejection kept this way may miss a saving the new room made possible. Keeping it never
// makes tenon act; the saving waits for the TTL, or for any change to the node. A change the
// conditions do not see (a topology domain emptied elsewhere) is treated the same way, and so
// are pods pending, then or now: they take room in the plan with the node and in the plan
// without it alike, and what they could change is that the node's pods share a claim bought
// for them; once that claim is a node, its room is new room, which the last condition sees.
// (Judging every node again whenever a pod was pending made half of the simulations of a
// Philly replay, for a fifth of a percent of its commands; keeping the verdicts left the
// decisions of its first 20,000 jobs as they were, and moved the whole trace's cost by
// 0.005%: docs/performance.md.)
//
// Only verdicts found before the pass committed its first command are remembered: later ones
// were judged against a fleet where the pass's commands had run as planned, and the fleet the
// next pass sees differs (a replacement launches as another type, pods bind elsewhere than the
// plan's moves). Remembering those changed the fleet tenon settled on in a Philly replay
// (BenchmarkSimulatePhilly's package policy: $36,857 instead of $36,722 over 2,000 jobs); without
// them the replay settles on the same fleet as without any memory.
//
// BenchmarkConsolidate and BenchmarkQuietPass measure what it saves (docs/performance.md).
type Memory struct {
	seed    maphash.Seed
	context uint64
	// nodes holds what the pass read of each node and its pods, by node name.
	nodes map[string]nodeMemo
	// rejected holds the remembered verdicts by node name.
	rejected map[string]rejection
	// together holds, by the nodes it tried in order (and the kind of command), when a
	// multi-node search last found no set of them worth removing.
	together map[uint64]time.Time
	// prepared is the pass's prepared snapshot, and pools the fingerprint of what it compiled
	// besides the nodes: a next pass with the same pools, instance types, DaemonSets and
	// namespaces prepares only its nodes (Snapshot.Prepared), as the simulator's does.
	prepared *solver.Prepared
	pools    uint64
}

// nodeMemo is what a pass read of a node (mark) and of its pods (pods): a pod object a driver
// hands over is not changed afterwards (a changed pod is a new object, as the informers' are),
// so the next pass reuses the mark of a pod it finds again on that node.
type nodeMemo struct {
	mark nodeMark
	pods podsMark
}

// podsMark is what a pass read of the pods of one node: marks[i] is pods[i]'s.
type podsMark struct {
	pods  []*corev1.Pod
	marks []podMark
}

// same reports whether pods are the objects m was read from, in the same order.
func (m podsMark) same(pods []*corev1.Pod) bool {
	if len(m.pods) != len(pods) {
		return false
	}
	return len(pods) == 0 || &m.pods[0] == &pods[0] || slices.Equal(m.pods, pods)
}

// find returns the mark of pod p if m holds it, looking from index from on (the pods a node
// keeps stay in their order), and the index after it.
func (m podsMark) find(p *corev1.Pod, from int) (podMark, int, bool) {
	for k := range m.pods {
		i := (from + k) % len(m.pods)
		if m.pods[i] == p {
			return m.marks[i], i + 1, true
		}
	}
	return podMark{}, from, false
}

// podMark is a pod's fingerprint and requests as a pass read them.
type podMark struct {
	hash uint64
	req  podRequest
}

// nodeMark is what a pass saw of a node.
type nodeMark struct {
	attrs, pods uint64
	free        scheduling.Resources
	usable      bool // initialized, not in flight, not marked for deletion
	// gen is the node's Generation when the pass was given one (0: none).
	gen uint64
}

// rejection is a remembered verdict on a node.
type rejection struct {
	reason  SkipReason
	message string
	at      time.Time
	// price and capacityType are the node's as the pass saw them (the disruption view's, which
	// the verdict weighed; the node's fingerprint has the solver's).
	price        float64
	capacityType string
	// homeless are the requests of the node's pods that the simulation could not put on an
	// initialized node that was already there: they went to new claims, to nodes not yet
	// initialized, or nowhere.
	homeless []scheduling.Resources
}

// DefaultRejectionTTL is how long a remembered consolidation verdict is trusted at most.
const DefaultRejectionTTL = 30 * time.Minute

// remembered are the reasons a single-node simulation gives that Memory keeps: those decided by
// where the node's pods could go and at what price. Budgets, PDBs, ages and pool-wide scores are
// checked afresh each pass, without a solve.
var remembered = map[SkipReason]bool{
	SkipNotCheaper: true, SkipSavingsFloor: true, SkipUnschedulable: true, SkipSpotToSpot: true, SkipReserved: true,
}

// recall is the pass's view of the memory it was given and the one it builds.
type recall struct {
	// prev is the memory the pass was given when its verdicts may hold (nil otherwise); last
	// is that memory whatever it holds.
	prev, last *Memory
	next       *Memory
	// opened holds the free room of the nodes that may take pods they could not before.
	opened []scheduling.Resources
	ttl    time.Duration
	now    time.Time
	// committed is set once the pass commits a command: later verdicts are not remembered.
	committed bool
	reqs      podRequests
}

// newRecall compares the snapshot with the previous pass's memory.
func newRecall(s *Snapshot, opts Options, reqs podRequests) *recall {
	r := &recall{ttl: opts.RejectionTTL, now: s.Now, reqs: reqs}
	if r.ttl < 0 {
		return r
	}
	seed := maphash.MakeSeed()
	if opts.Memory != nil {
		seed = opts.Memory.seed
	}
	next := &Memory{seed: seed, nodes: make(map[string]nodeMemo, len(s.Solver.Nodes)), rejected: map[string]rejection{},
		together: map[uint64]time.Time{}}
	var prevNodes map[string]nodeMemo
	if opts.Memory != nil {
		prevNodes = opts.Memory.nodes
	}
	next.context = contextHash(seed, s, opts)
	next.pools = poolsHash(seed, s, next.context)
	gens := generations(s)
	for i := range s.Solver.Nodes {
		n := &s.Solver.Nodes[i]
		g := gens(i, n.Name)
		was := prevNodes[n.Name]
		if g != 0 && was.mark.gen == g && was.pods.same(n.Pods) {
			// The driver says the node has not changed, and its pods are the last pass's
			// objects: their marks and requests are known.
			next.nodes[n.Name] = was
			for i, p := range n.Pods {
				reqs[p] = was.pods.marks[i].req
			}
			continue
		}
		m, pm := markNode(seed, n, reqs, was.pods)
		m.gen = g
		next.nodes[n.Name] = nodeMemo{mark: m, pods: pm}
	}
	r.next = next
	prev := opts.Memory
	r.last = prev
	if prev == nil || prev.context != next.context {
		return r
	}
	r.prev = prev
	for name, nm := range next.nodes {
		m := &nm.mark
		was, ok := prev.nodes[name]
		if !m.usable {
			continue // takes no pod from a consolidation
		}
		if !ok || !was.mark.usable || was.mark.attrs != m.attrs || grew(&was.mark.free, &m.free) {
			r.opened = append(r.opened, m.free)
		}
	}
	return r
}

// generations returns the Generation the snapshot gives the solver node at index i, named name
// (0: none). The disruption nodes are most often in the solver nodes' order; a map is built
// only when they are not.
func generations(s *Snapshot) func(i int, name string) uint64 {
	var byName map[string]uint64
	return func(i int, name string) uint64 {
		if i < len(s.Nodes) && s.Nodes[i].Name == name {
			return s.Nodes[i].Generation
		}
		if byName == nil {
			byName = make(map[string]uint64, len(s.Nodes))
			for j := range s.Nodes {
				if g := s.Nodes[j].Generation; g != 0 {
					byName[s.Nodes[j].Name] = g
				}
			}
		}
		return byName[name]
	}
}

// podMarks returns the pass's marks of the node's pods, in their order (nil when it keeps none).
func (r *recall) podMarks(n *solver.Node) []podMark {
	if r.next == nil {
		return nil
	}
	if m, ok := r.next.nodes[n.Name]; ok && m.pods.same(n.Pods) {
		return m.pods.marks
	}
	return nil
}

// grew reports whether any resource of now exceeds then.
func grew(then, now *scheduling.Resources) bool {
	for i := range now {
		if now[i] > then[i] {
			return true
		}
	}
	return false
}

// lookup returns the remembered verdict on c if it still holds, carrying it into the next memory.
func (r *recall) lookup(c *candidate) (rejection, bool) {
	if r.prev == nil || c.unit != nil {
		return rejection{}, false
	}
	v, ok := r.prev.rejected[c.Name]
	if !ok || r.now.Sub(v.at) >= r.ttl || r.now.Before(v.at) {
		return rejection{}, false
	}
	if r.prev.nodes[c.Name].mark != r.next.nodes[c.Name].mark || v.price != c.Price || v.capacityType != c.CapacityType {
		return rejection{}, false
	}
	for i := range v.homeless {
		for j := range r.opened {
			if v.homeless[i].Fits(&r.opened[j]) {
				return rejection{}, false
			}
		}
	}
	r.next.rejected[c.Name] = v
	return v, true
}

// remember records a single-node verdict found this pass by the simulation o (nil: none ran).
func (r *recall) remember(c *candidate, s *Skip, o *outcome, w *world) {
	if r.next == nil || r.committed || c.unit != nil || !remembered[s.Reason] || o == nil {
		return
	}
	housed := make(map[*corev1.Pod]bool, len(c.place))
	for _, pl := range o.plan.Placements {
		if !pl.InFlight && !w.uninitialized[pl.Node] {
			housed[pl.Pod] = true
		}
	}
	v := rejection{reason: s.Reason, message: s.Message, at: r.now, price: c.Price, capacityType: c.CapacityType}
	for _, p := range c.place {
		if housed[p] {
			continue
		}
		req, err := r.reqs.of(p)
		if err != nil {
			return
		}
		v.homeless = append(v.homeless, req)
	}
	r.next.rejected[c.Name] = v
}

// A multi-node search that found nothing is remembered too, by its candidates in the order it
// tried them: it holds, within the TTL and in the same context, while none of those nodes
// changed and no node anywhere gained room (a stricter test than a single node's, since the
// search's simulations housed different pods each time).

// togetherKey names a multi-node search by its kind and candidates in order, with the price and
// capacity type each had in the disruption view (the search weighed them; the nodes'
// fingerprints have the solver's): a fingerprint under the memory's seed, as the nodes' are (two
// searches that share one would at worst leave the second undone until the TTL; never make
// tenon act).
func (r *recall) togetherKey(kind evalKind, cs []*candidate) uint64 {
	var h hasher
	h.h.SetSeed(r.next.seed)
	h.u64(uint64(kind))
	for _, c := range cs {
		h.str(c.Name)
		h.f64(c.Price)
		h.str(c.CapacityType)
	}
	return h.h.Sum64()
}

// fruitless reports whether a multi-node search over cs is remembered as finding nothing, and
// carries the verdict on when it is.
func (r *recall) fruitless(kind evalKind, cs []*candidate) bool {
	if r.prev == nil || len(r.opened) > 0 {
		return false
	}
	key := r.togetherKey(kind, cs)
	at, ok := r.prev.together[key]
	if !ok || r.now.Sub(at) >= r.ttl || r.now.Before(at) {
		return false
	}
	for _, c := range cs {
		if was, ok := r.prev.nodes[c.Name]; !ok || was.mark != r.next.nodes[c.Name].mark {
			return false
		}
	}
	r.next.together[key] = at
	return true
}

// foundNothing records that a multi-node search over cs, run to its end, found nothing.
func (r *recall) foundNothing(kind evalKind, cs []*candidate) {
	if r.next != nil && !r.committed {
		r.next.together[r.togetherKey(kind, cs)] = r.now
	}
}

// prepared returns the prepared snapshot the pass may start from: the snapshot's own, or else
// the previous pass's when the pools, instance types, DaemonSets and namespaces are the same
// (nil: prepare afresh). A snapshot's own is taken at the driver's word only where the memory
// cannot tell: when it has the previous pass's compiled pools (Decision.Prepared, after the
// pass's commands, shares them) and the pools' fingerprint says they changed since, the pass
// prepares afresh rather than solve at the old prices.
func (r *recall) prepared(s *Snapshot) *solver.Prepared {
	known := r.next != nil && r.last != nil
	changed := known && r.last.pools != r.next.pools
	switch {
	case s.Prepared != nil && changed && s.Prepared.SharesPools(r.last.prepared):
		return nil
	case s.Prepared != nil:
		return s.Prepared
	case known && !changed:
		return r.last.prepared
	}
	return nil
}

// handOn records the pass's prepared snapshot in the memory it hands on.
func (r *recall) handOn(p *solver.Prepared) {
	if r.next != nil {
		r.next.prepared = p
	}
}

// commit records that the pass committed a command.
func (r *recall) commit() { r.committed = true }

// memory is what the pass hands on (nil when remembering is off).
func (r *recall) memory() *Memory { return r.next }

// hasher writes the values a fingerprint covers.
type hasher struct {
	h   maphash.Hash
	buf [8]byte
}

func (h *hasher) str(s string) {
	h.h.WriteString(s)
	h.h.WriteByte(0)
}

func (h *hasher) u64(v uint64) {
	binary.LittleEndian.PutUint64(h.buf[:], v)
	h.h.Write(h.buf[:])
}

func (h *hasher) f64(v float64) { h.u64(math.Float64bits(v)) }

func (h *hasher) flag(b bool) {
	if b {
		h.h.WriteByte(1)
	} else {
		h.h.WriteByte(0)
	}
}

func (h *hasher) res(r *scheduling.Resources) {
	for _, v := range r {
		h.u64(uint64(v))
	}
}

// labels covers a map whatever its iteration order: the entries' hashes are summed, so no
// sort (a node's labels are hashed every pass).
func (h *hasher) labels(m map[string]string) {
	seed := h.h.Seed()
	var sum uint64
	for k, v := range m {
		sum += maphash.String(seed, k)*0x9e3779b97f4a7c15 ^ maphash.String(seed, v)
	}
	h.u64(uint64(len(m)))
	h.u64(sum)
}

func (h *hasher) taints(ts []corev1.Taint) {
	for _, t := range ts {
		h.str(t.Key)
		h.str(t.Value)
		h.str(string(t.Effect))
	}
	h.h.WriteByte(1)
}

// pod covers what decides where a pod may go and what it takes: identity, requests, labels and
// scheduling constraints (the spec's fields that the solver reads, as their string form). It
// returns the pod's requests, and whether they could be read.
func (h *hasher) pod(p *corev1.Pod, reqs podRequests) (scheduling.Resources, bool) {
	h.str(p.Namespace)
	h.str(p.Name)
	h.str(string(p.UID))
	req, err := reqs.of(p)
	if err == nil {
		h.res(&req)
	} else {
		h.str(err.Error())
	}
	h.labels(p.Labels)
	h.labels(p.Spec.NodeSelector)
	if a := p.Spec.Affinity; a != nil {
		h.str(a.String())
	}
	for _, c := range p.Spec.TopologySpreadConstraints {
		h.str(c.String())
	}
	for i := range p.Spec.Tolerations {
		t := &p.Spec.Tolerations[i]
		h.str(t.Key)
		h.str(string(t.Operator))
		h.str(t.Value)
		h.str(string(t.Effect))
		if t.TolerationSeconds != nil {
			h.u64(uint64(*t.TolerationSeconds))
		}
		h.h.WriteByte(3)
	}
	if p.Spec.Priority != nil {
		h.u64(uint64(*p.Spec.Priority))
	}
	h.h.WriteByte(2)
	return req, err == nil
}

// markNode fingerprints a node: its attributes and, apart, its pods; and its free room. A pod
// marked in prev is not read again; every pod's mark goes to next (when not nil), and its
// requests to reqs.
func markNode(seed maphash.Seed, n *solver.Node, reqs podRequests, prev podsMark) (nodeMark, podsMark) {
	var h hasher
	h.h.SetSeed(seed)
	h.str(n.Name)
	h.str(n.NodePool)
	h.labels(n.Labels)
	h.taints(n.Taints)
	h.res(&n.Allocatable)
	h.f64(n.Price)
	m := nodeMark{attrs: h.h.Sum64(), free: n.Allocatable, usable: n.Initialized && !n.InFlight && !n.MarkedForDeletion}
	h.h.Reset()
	out := podsMark{pods: n.Pods}
	same := prev.same(n.Pods)
	if same {
		out.marks = prev.marks // never changed once made: shared
	} else {
		out.marks = make([]podMark, len(n.Pods))
	}
	var ph hasher
	ph.h.SetSeed(seed)
	from := 0
	for i, p := range n.Pods {
		var pm podMark
		if same {
			pm = prev.marks[i]
		} else {
			var ok bool
			if pm, from, ok = prev.find(p, from); !ok {
				// A pod new to the node (new, or moved from another): read it.
				ph.h.Reset()
				ph.pod(p, reqs)
				pm = podMark{hash: ph.h.Sum64(), req: reqs[p]}
			}
			out.marks[i] = pm
		}
		reqs[p] = pm.req
		h.u64(pm.hash)
		if pm.req.err == nil {
			m.free = m.free.Sub(pm.req.r)
		}
	}
	m.pods = h.h.Sum64()
	return m, out
}

// contextHash fingerprints what every verdict of a pass depends on besides the nodes.
func contextHash(seed maphash.Seed, s *Snapshot, opts Options) uint64 {
	var h hasher
	h.h.SetSeed(seed)
	for i := range s.Solver.NodePools {
		p := &s.Solver.NodePools[i]
		h.str(p.Name)
		h.u64(uint64(p.Weight))
		h.str(p.Requirements.String())
		h.labels(p.Labels)
		h.taints(p.Taints)
		h.taints(p.StartupTaints)
		h.res(&p.Limits)
		limited := p.NodeLimit >= 0
		for _, l := range p.HasLimit {
			h.flag(l)
			limited = limited || l
		}
		h.u64(uint64(p.NodeLimit))
		if limited {
			h.res(&p.Usage)
			h.u64(uint64(p.Nodes))
		}
		h.u64(uint64(p.ZoneMaxSkew))
		for _, it := range p.InstanceTypes {
			h.str(it.Name)
			h.res(&it.Capacity)
			for j := range it.Offerings {
				o := &it.Offerings[j]
				h.str(o.Zone)
				h.str(o.CapacityType)
				h.f64(o.Price)
				h.flag(o.Available)
				h.str(o.ReservationID)
				h.u64(uint64(o.ReservationCapacity))
				h.u64(uint64(o.Window.Start.UnixNano()))
				h.u64(uint64(o.Window.End.UnixNano()))
			}
		}
	}
	for _, d := range s.Solver.DaemonSets {
		h.str(d.Namespace)
		h.str(d.Name)
		if d.Pod != nil {
			h.pod(d.Pod, podRequests{})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.NodePools)) {
		np := s.NodePools[name]
		h.str(name)
		if np == nil {
			continue
		}
		h.str(string(np.Spec.Disruption.ConsolidationPolicy))
		h.labels(np.Annotations)
	}
	h.str(strings.Join(s.WholeGroups, ","))
	o := opts
	o.Cursor, o.Memory = "", nil
	h.str(o.fingerprint())
	return h.h.Sum64()
}

// poolsHash fingerprints what a prepared snapshot compiled besides the nodes, beyond the
// verdicts' context: every pool's usage (limited or not), each instance type's requirements
// (by identity) and allocatable, the namespaces' labels and the gangs.
func poolsHash(seed maphash.Seed, s *Snapshot, context uint64) uint64 {
	var h hasher
	h.h.SetSeed(seed)
	h.u64(context)
	for i := range s.Solver.NodePools {
		p := &s.Solver.NodePools[i]
		h.res(&p.Usage)
		h.u64(uint64(p.Nodes))
		for _, it := range p.InstanceTypes {
			// The catalog's types are not changed in place: the same type is the same
			// pointer (a provider that copies its types each time only costs a Prepare).
			h.u64(uint64(uintptr(unsafe.Pointer(it))))
			a := it.Allocatable()
			h.res(&a)
		}
	}
	for _, ns := range slices.Sorted(maps.Keys(s.Solver.NamespaceLabels)) {
		h.str(ns)
		h.labels(s.Solver.NamespaceLabels[ns])
	}
	for _, g := range s.Solver.Gangs {
		h.str(fmt.Sprintf("%+v", g))
	}
	return h.h.Sum64()
}

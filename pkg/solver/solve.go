package solver

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// Options tune a solve.
type Options struct {
	// SkipBound leaves Plan.LowerBound at 0 (the disruption loop's inner simulations do not need it).
	SkipBound bool
	// BoundIterations caps the column generation of the lower bound (0: the bound package's default).
	BoundIterations int
	// BoundWork caps the work of the lower bound's LPs (bound.Work; 0: no cap). The bound stays
	// valid when the cap stops it, only looser; Plan.Bound says whether it did.
	BoundWork int64
	// GuideWork is the guided packing's budget (bound.Work): its LPs, and a second attempt's
	// placement, count against it (0: a few times the first-fit solve's work, see budget.go;
	// < 0: no cap).
	GuideWork int64
	// Deadline, if not nil, is asked between the LPs' rounds and pivots (guide and bound); once
	// it returns true they stop and the solve goes on with what they have. Only a driver
	// supplies it (the core reads no clock); a solve with a Deadline that fires is no longer
	// reproducible.
	Deadline func() bool
	// BoundDeadline is Deadline for the lower bound's LPs alone (tenon plan's --bound-budget).
	BoundDeadline func() bool
	// MaxInstanceTypes caps the options of each new claim (0: MaxInstanceTypes).
	MaxInstanceTypes int
	// ExcludeNodes lists nodes to treat as gone (the disruption loop's candidates).
	ExcludeNodes []string
	// HostnamePrefix names the placeholder hostnames of new claims ("" : "tenon-claim-").
	HostnamePrefix string
	// NoGuide turns guided packing off: the solve is first-fit decreasing alone (the disruption
	// loop's many small simulations gain little from it).
	NoGuide bool
	// Unguided, when not nil, is shown the placements of the first-fit solve on existing nodes
	// and claims in flight; when it returns true, the guided attempts are not made. When every
	// class of a solve is packable (no topology, affinity, host ports or preferences), a guided
	// attempt puts the same pods on the same nodes, in the same order: both try the nodes
	// before any new claim, class by class, and differ only in the new claims. A caller that
	// would refuse a plan for where it puts pods on existing nodes need not wait for them; with
	// a class that is not packable the guided attempts are made as usual.
	Unguided func(placements []Placement) bool
	// NoRepair turns the repair after placing off (repair.go): the plan is first-fit's (or the
	// guide's) as placed.
	NoRepair bool
	// repairLimit, when > 0, stops the repair after that many accepted moves (tests check the
	// plan after every move).
	repairLimit int
	// noPairRepair turns the pair repair off (tests and benchmarks measure what it adds).
	noPairRepair bool
	// noMergeRepair turns the merge repair off (repairmerge.go), likewise.
	noMergeRepair bool
	// ReservationsTaken counts, by reservation ID, slots already promised to claims the
	// snapshot does not show yet (a disruption pass's committed replacements): the solve counts
	// them off the reservations' remaining capacity.
	ReservationsTaken map[string]int
	// PoolsTaken is, by NodePool name, capacity and nodes already promised to claims the
	// snapshot's pool usage does not count yet (a disruption pass's committed replacements):
	// the solve counts them off the pool's limits.
	PoolsTaken map[string]PoolTaken
	// MinValuesPolicy says whether minValues is kept strictly ("" or Strict) or lowered to
	// what is left (BestEffort).
	MinValuesPolicy MinValuesPolicy
	// PreferencePolicy says whether preferences (preferred node and pod affinity and
	// anti-affinity, ScheduleAnyway spreads) are enforced until they cannot hold ("" or
	// Respect) or not at all (Ignore).
	PreferencePolicy PreferencePolicy
}

// solve holds the compiled state of one Solve.
type solve struct {
	snap    *Snapshot
	opts    Options
	prep    *Prepared
	pending []*corev1.Pod

	zones     []string // zone names by index
	zoneIDs   []string
	zoneIndex map[string]int // by zone name and zone ID
	typeKeys  map[string]bool

	daemons []daemon
	pools   []*pool
	// mvScratch is minValuesShort's reusable bitset.
	mvScratch scheduling.Bitset
	// reservations holds the capacity left per reservation (by index), counted down as claims
	// take it; reservationIndex maps "type/offering ID/zone" to an index, reservationIDs an
	// index to its reservation ID.
	reservations     []int
	reservationsInit []int
	reservationIndex map[string]int
	reservationIDs   []string

	classes []*class
	topo    *topology
	targets []*target // existing nodes and in-flight claims, in the order they are tried
	// freeIdx[t.base], when not 0, is 1 + the index in freeBuf of target t's room left in this
	// solve; a target without one still has its prepared room, t.free0 (see roomOf and take). addedPorts[t.base] are the host ports this solve placed on it (nil
	// until a pod with host ports lands somewhere). nHosts is the prepared snapshot's number of
	// targets: new claims' hostnames come after them.
	freeIdx    []int32
	freeBuf    []scheduling.Resources
	addedPorts [][]scheduling.HostPort
	nHosts     int
	// hostBase numbers the placeholder hostnames of this solve's claims from hostBase on: the
	// parts of a split solve (components.go) each take their own range.
	hostBase int
	// guideRows caps the guide's LP rows (0: maxGuideClasses); a part of a split solve takes
	// its share, so that the parts' LPs together are no larger than the whole's.
	guideRows int
	// guideFineRows is what a finer grid may take (0: maxFineGuideClasses), guideLP the work the
	// guide's LP may spend (0: none to cap it), both set by the attempt (budget.go).
	guideFineRows int
	guideLP       int64
	// guideFiner are the rows of the grids finer than the guide's that fit in guideFineRows,
	// finest first (aggregate).
	guideFiner []int
	cache      *compileCache
	// units caches, by request, what the types that hold it ask (CapacityFloor); it depends
	// on the pools only, so WithNodes shares it.
	units  map[scheduling.Resources]*holdingPrices
	claims []*newClaim
	cidx   claimIndex
	// demand[p] is what the pods not yet placed that pool p could hold ask for.
	demand []scheduling.Resources
	// room[p] is the free room of the claims of pool p opened so far, openClaims[p] their number.
	room       []scheduling.Resources
	openClaims []int

	dry         bool // probing: evaluate placements without making them
	force       bool // grow claims whatever it costs (no new claim can be opened)
	guided      bool // packable classes go by the LP's patterns
	grow        bool // let claims grow to larger types (second pass over open claims)
	hint        int  // pods of the class expected in the domain being filled (0: none)
	scratchBits scheduling.Bitset
	altMemo     []altMemo // the latest alternatives compileAlt compiled (class.go)
	// repairMoves and repairSplit are the repair's scratch (repair.go).
	repairMoves, repairSplit []repairMove
	// pairPieces and pairTypes are the pair repair's scratch (repairpairs.go).
	pairPieces                   []pairPiece
	pairTypes                    scheduling.Bitset
	pairNeed, pairTake, pairKind []int
	// mergeOrder, mergeTaken and mergeTypes are the merge repair's scratch (repairmerge.go).
	mergeOrder, mergeTaken []int
	mergeTypes             scheduling.Bitset
	// hostSigs[c.index] is 2 + class c's hostname signature (1: none, 0: not yet known);
	// hostSigReps holds a class of each signature (repairpairs.go).
	hostSigs    []int
	hostSigReps []*class

	out           []*Claim
	placements    []Placement
	unschedulable []Unschedulable
	relaxed       int
	repaired      int // moves the repair kept
	guideStats    GuideStats
}

type daemon struct {
	name        string // namespace/name
	requests    scheduling.Resources
	ports       []scheduling.HostPort
	tolerations []corev1.Toleration
	alts        []scheduling.Requirements
}

// Solve places the snapshot's pending pods and returns the plan. It is deterministic: the same
// snapshot and options give the same plan. It fails only on snapshots it cannot represent (more
// zones than it indexes); a pod it cannot place is reported in Plan.Unschedulable.
func Solve(snap *Snapshot, opts Options) (*Plan, error) {
	p, err := Prepare(snap)
	if err != nil {
		return nil, err
	}
	return p.Solve(snap.Pods, opts)
}

// newSolve prepares the snapshot and instantiates a solve of its pending pods.
func newSolve(snap *Snapshot, opts Options) (*solve, error) {
	p, err := Prepare(snap)
	if err != nil {
		return nil, err
	}
	return p.instantiate(snap.Pods, opts), nil
}

// compileDaemons reads the DaemonSets' pod templates.
func (s *solve) compileDaemons() {
	for i := range s.snap.DaemonSets {
		d := &s.snap.DaemonSets[i]
		if d.Pod == nil {
			continue
		}
		req, err := scheduling.PodRequests(d.Pod)
		if err != nil {
			continue
		}
		req[scheduling.Pods] = 1
		alts, err := scheduling.PodNodeRequirements(d.Pod)
		if err != nil {
			continue
		}
		s.daemons = append(s.daemons, daemon{name: d.Namespace + "/" + d.Name, requests: req, ports: scheduling.PodHostPorts(d.Pod),
			tolerations: d.Pod.Spec.Tolerations, alts: alts})
	}
}

// compilePools compiles the NodePools, heaviest first (then by name).
func (s *solve) compilePools() {
	pools := slices.Clone(s.snap.NodePools)
	slices.SortStableFunc(pools, func(a, b NodePool) int {
		if c := cmp.Compare(b.Weight, a.Weight); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	for i := range pools {
		s.pools = append(s.pools, s.compilePool(i, &pools[i]))
	}
}

// setupPending compiles the pending pods into classes against the pools and the topology, and
// counts the pods already running.
func (s *solve) setupPending() error {
	s.topo = newTopology(s)
	if err := s.compileClasses(); err != nil {
		return err
	}
	s.registerExisting()
	for _, c := range s.classes {
		if c.invalid == nil {
			s.compileForPools(c)
			s.topo.attach(c)
		}
	}
	s.classes = followersLast(s.classes)
	if s.opts.PreferencePolicy == PreferenceIgnore {
		for _, c := range s.classes {
			if c.invalid == nil {
				s.dropPreferences(c)
			}
		}
	}
	s.countExisting()
	s.demand = make([]scheduling.Resources, len(s.pools))
	s.room = make([]scheduling.Resources, len(s.pools))
	s.openClaims = make([]int, len(s.pools))
	for _, c := range s.classes {
		if c.invalid != nil {
			continue
		}
		for pi := range s.pools {
			if c.poolReason[pi] == nil {
				s.demand[pi] = s.demand[pi].Add(c.requests.Scale(int64(len(c.pods))))
			}
		}
	}
	return nil
}

// indexZones numbers every zone the snapshot mentions, and collects the label keys instance
// types decide.
func (s *solve) indexZones() error {
	add := func(name, id string) error {
		if name == "" {
			return nil
		}
		if i, ok := s.zoneIndex[name]; ok {
			if id != "" && s.zoneIDs[i] == "" {
				s.zoneIDs[i] = id
				s.zoneIndex[id] = i
			}
			return nil
		}
		if len(s.zones) == maxZones {
			return fmt.Errorf("the snapshot spans more than %d zones", maxZones)
		}
		s.zoneIndex[name] = len(s.zones)
		if id != "" {
			s.zoneIndex[id] = len(s.zones)
		}
		s.zones = append(s.zones, name)
		s.zoneIDs = append(s.zoneIDs, id)
		return nil
	}
	var names []string
	ids := map[string]string{}
	seen := map[*catalog.InstanceType]bool{}
	for i := range s.snap.NodePools {
		for _, it := range s.snap.NodePools[i].InstanceTypes {
			if seen[it] {
				continue
			}
			seen[it] = true
			for _, r := range it.Requirements.Items() {
				if !offeringKey(r.Key) {
					s.typeKeys[r.Key] = true
				}
			}
			for oi := range it.Offerings {
				o := &it.Offerings[oi]
				if _, ok := ids[o.Zone]; !ok {
					names = append(names, o.Zone)
				}
				if o.ZoneID != "" {
					ids[o.Zone] = o.ZoneID
				} else if _, ok := ids[o.Zone]; !ok {
					ids[o.Zone] = ""
				}
			}
		}
	}
	for i := range s.snap.Nodes {
		if z := s.snap.Nodes[i].Labels[apisv1.LabelZone]; z != "" {
			if _, ok := ids[z]; !ok {
				names = append(names, z)
				ids[z] = s.snap.Nodes[i].Labels[apisv1.LabelTopologyZoneID]
			}
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	for _, n := range names {
		if err := add(n, ids[n]); err != nil {
			return err
		}
	}
	return nil
}

// reservation returns the index of a reserved offering's capacity counter.
func (s *solve) reservation(typeName string, o *catalog.Offering) int {
	key := typeName + "/" + o.ReservationID + "/" + o.Zone
	if i, ok := s.reservationIndex[key]; ok {
		return i
	}
	s.reservationIndex[key] = len(s.reservations)
	s.reservations = append(s.reservations, o.ReservationCapacity)
	s.reservationIDs = append(s.reservationIDs, o.ReservationID)
	return len(s.reservations) - 1
}

func (s *solve) hostname(i int) string {
	return s.opts.HostnamePrefix + strconv.Itoa(s.hostBase+i)
}

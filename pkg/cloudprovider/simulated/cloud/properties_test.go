package cloud

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// refPool is a pool as the reference model reads it: plain fields, matched without the
// model's code.
type refPool struct {
	types        []string // empty: any
	zone         string   // "": any
	capacityType string   // "": on-demand and spot
	capacity     int
}

func (p refPool) selects(it *catalog.InstanceType, o *catalog.Offering) bool {
	return o.CapacityType != apisv1.CapacityTypeReserved &&
		(len(p.types) == 0 || slices.Contains(p.types, it.Name)) &&
		(p.zone == "" || p.zone == o.Zone) &&
		(p.capacityType == "" || p.capacityType == o.CapacityType)
}

func (p refPool) pool() Pool {
	var rs []scheduling.Requirement
	if len(p.types) > 0 {
		rs = append(rs, types(p.types...))
	}
	if p.zone != "" {
		rs = append(rs, zones(p.zone))
	}
	if p.capacityType != "" {
		rs = append(rs, capacityTypes(p.capacityType))
	}
	return Pool{Match: reqs(rs...), Capacity: p.capacity}
}

var (
	allTypes = []string{"m.small", "m.large", "m.xlarge", "g.large"}
	allZones = []string{zoneA.Name, zoneB.Name}
	allCTs   = []string{apisv1.CapacityTypeOnDemand, apisv1.CapacityTypeSpot, apisv1.CapacityTypeReserved}
	allRes   = []string{"cr-open", "cr-targeted", "cb-gpu"}
)

func drawPools(t *rapid.T) []refPool {
	return rapid.SliceOfN(rapid.Custom(func(t *rapid.T) refPool {
		return refPool{
			types:        rapid.SliceOfDistinct(rapid.SampledFrom(allTypes), rapid.ID[string]).Draw(t, "types"),
			zone:         rapid.SampledFrom(append([]string{""}, allZones...)).Draw(t, "zone"),
			capacityType: rapid.SampledFrom([]string{"", "on-demand", "spot"}).Draw(t, "capacityType"),
			capacity:     rapid.IntRange(0, 3).Draw(t, "capacity"),
		}
	}), 0, 3).Draw(t, "pools")
}

func drawRequirements(t *rapid.T) scheduling.Requirements {
	var rs []scheduling.Requirement
	if ts := rapid.SliceOfDistinct(rapid.SampledFrom(allTypes), rapid.ID[string]).Draw(t, "reqTypes"); len(ts) > 0 {
		rs = append(rs, types(ts...))
	}
	if zs := rapid.SliceOfDistinct(rapid.SampledFrom(allZones), rapid.ID[string]).Draw(t, "reqZones"); len(zs) > 0 {
		rs = append(rs, zones(zs...))
	}
	if cts := rapid.SliceOfDistinct(rapid.SampledFrom(allCTs), rapid.ID[string]).Draw(t, "reqCapacityTypes"); len(cts) > 0 {
		rs = append(rs, capacityTypes(cts...))
	}
	switch rapid.IntRange(0, 2).Draw(t, "reqReservation") {
	case 1:
		ids := rapid.SliceOfNDistinct(rapid.SampledFrom(allRes), 1, 3, rapid.ID[string]).Draw(t, "reqReservationIDs")
		rs = append(rs, scheduling.In(apisv1.LabelCapacityReservationID, ids...))
	case 2:
		rs = append(rs, scheduling.DoesNotExist(apisv1.LabelCapacityReservationID))
	}
	return reqs(rs...)
}

// reference computes, without the model's launch code, which offerings a request may use and
// which of them have room.
type reference struct {
	cat   *catalog.Catalog
	pools []refPool
}

type refOffering struct {
	it  *catalog.InstanceType
	idx int
}

func (r reference) compatible(rq scheduling.Requirements) []refOffering {
	q := catalog.NewQuery(rq)
	res, hasRes := rq.Get(apisv1.LabelCapacityReservationID)
	var out []refOffering
	for _, it := range r.cat.Types {
		if !q.TypeMatches(it) {
			continue
		}
		for i := range it.Offerings {
			o := &it.Offerings[i]
			if !q.OfferingMatches(o) {
				continue
			}
			if o.ReservationID == "cr-targeted" && !(hasRes && !res.IsComplement() && res.Has(o.ReservationID)) {
				continue
			}
			out = append(out, refOffering{it, i})
		}
	}
	return out
}

func (r reference) hasRoom(c *Cloud, it *catalog.InstanceType, o *catalog.Offering, now time.Time) bool {
	alive := aliveInstances(c)
	if o.CapacityType == apisv1.CapacityTypeReserved {
		var res catalog.Reservation
		for _, x := range r.cat.Reservations {
			if x.ID == o.ReservationID {
				res = x
			}
		}
		used := 0
		for _, inst := range alive {
			if inst.Offering.ReservationID == res.ID {
				used++
			}
		}
		return res.Window.Contains(now) && used < res.Count
	}
	for _, p := range r.pools {
		if !p.selects(it, o) {
			continue
		}
		used := 0
		for _, inst := range alive {
			if p.selects(inst.Type, &inst.Offering) {
				used++
			}
		}
		if used >= p.capacity {
			return false
		}
	}
	return true
}

func aliveInstances(c *Cloud) []Instance {
	var out []Instance
	for _, inst := range c.Instances() {
		if inst.Alive() {
			out = append(out, inst)
		}
	}
	return out
}

// checkCapacity fails when an alive instance set oversubscribes a pool or a reservation, or
// runs in a capacity block outside its window.
func checkCapacity(t *rapid.T, r reference, c *Cloud) {
	alive := aliveInstances(c)
	for i, p := range r.pools {
		used := 0
		for _, inst := range alive {
			if p.selects(inst.Type, &inst.Offering) {
				used++
			}
		}
		if used > p.capacity {
			t.Fatalf("pool %d %+v holds %d instances", i, p, used)
		}
	}
	for _, res := range r.cat.Reservations {
		used := 0
		for _, inst := range alive {
			if inst.Offering.ReservationID == res.ID {
				used++
				if !res.Window.Contains(inst.Launched) {
					t.Fatalf("%s launched at %v outside %s's window", inst.ID, inst.Launched, res.ID)
				}
			}
		}
		if used > res.Count {
			t.Fatalf("reservation %s (%d) holds %d instances", res.ID, res.Count, used)
		}
	}
}

// TestLaunchProperties runs random launches, terminations and time steps against random pools
// and checks each launch against the reference: the cheapest compatible offering with room is
// chosen; when none has room the error names exactly the compatible offerings; when none is
// compatible the error says so. No pool or reservation is ever oversubscribed.
func TestLaunchProperties(t *testing.T) {
	cat := testCatalog(t)
	rapid.Check(t, func(t *rapid.T) {
		ref := reference{cat: cat, pools: drawPools(t)}
		cfg := ClassConfig{Catalog: cat, Targeted: []string{"cr-targeted"}, Delays: Delays{
			Boot: time.Second, Shutdown: rapid.SampledFrom([]time.Duration{0, 30 * time.Second}).Draw(t, "shutdown"),
		}}
		for _, p := range ref.pools {
			cfg.Pools = append(cfg.Pools, p.pool())
		}
		c := New(Options{IDSeed: 9})
		if err := c.SetClass("default", cfg); err != nil {
			t.Fatal(err)
		}
		now := t0
		t.Repeat(map[string]func(*rapid.T){
			"launch": func(t *rapid.T) {
				rq := drawRequirements(t)
				c.Advance(now)
				compatible := ref.compatible(rq)
				var roomy []refOffering
				for _, o := range compatible {
					if ref.hasRoom(c, o.it, &o.it.Offerings[o.idx], now) {
						roomy = append(roomy, o)
					}
				}
				inst, err := c.Launch(LaunchRequest{Class: "default", Requirements: rq}, now)
				switch {
				case len(compatible) == 0:
					if !errors.Is(err, ErrNoCompatibleOffering) {
						t.Fatalf("%s: nothing compatible, got %v", rq, err)
					}
				case len(roomy) == 0:
					var ice *cloudprovider.InsufficientCapacityError
					if !errors.As(err, &ice) {
						t.Fatalf("%s: every compatible offering is full, got %v", rq, err)
					}
					want := map[cloudprovider.Offering]bool{}
					for _, o := range compatible {
						off := o.it.Offerings[o.idx]
						want[cloudprovider.Offering{InstanceType: o.it.Name, Zone: off.Zone, CapacityType: off.CapacityType}] = true
					}
					got := map[cloudprovider.Offering]bool{}
					for _, o := range ice.Offerings {
						if got[o] {
							t.Fatalf("offering %s named twice", o)
						}
						got[o] = true
					}
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Fatalf("%s: error names %v, want %v", rq, got, want)
					}
				default:
					if err != nil {
						t.Fatalf("%s: %v, though %d offerings have room", rq, err, len(roomy))
					}
					best := slices.MinFunc(roomy, func(a, b refOffering) int {
						return cmp.Or(cmp.Compare(a.it.Offerings[a.idx].Price, b.it.Offerings[b.idx].Price),
							strings.Compare(a.it.Name, b.it.Name), cmp.Compare(a.idx, b.idx))
					})
					if inst.Type != best.it || inst.Offering != best.it.Offerings[best.idx] {
						t.Fatalf("%s: launched %s, want %s %+v", rq, offeringOf(inst), best.it.Name, best.it.Offerings[best.idx])
					}
				}
			},
			"terminate": func(t *rapid.T) {
				alive := aliveInstances(c)
				if len(alive) == 0 {
					t.Skip("nothing to terminate")
				}
				inst := rapid.SampledFrom(alive).Draw(t, "victim")
				if err := c.Terminate(inst.ID, now); err != nil {
					t.Fatal(err)
				}
			},
			"advance": func(t *rapid.T) {
				now = now.Add(rapid.SampledFrom([]time.Duration{time.Second, 20 * time.Second, time.Hour}).Draw(t, "step"))
				c.Advance(now)
			},
			"": func(t *rapid.T) { checkCapacity(t, ref, c) },
		})
	})
}

// op is one step of a scripted run.
type op struct {
	kind   string // launch, terminate, inject, advance
	reqs   scheduling.Requirements
	victim int // index into the instances launched so far
	step   time.Duration
}

func drawOps(t *rapid.T) []op {
	return rapid.SliceOfN(rapid.Custom(func(t *rapid.T) op {
		switch rapid.IntRange(0, 5).Draw(t, "kind") {
		case 0, 1:
			return op{kind: "launch", reqs: drawRequirements(t)}
		case 2:
			return op{kind: "terminate", victim: rapid.IntRange(0, 40).Draw(t, "victim")}
		case 3:
			return op{kind: "inject", victim: rapid.IntRange(0, 40).Draw(t, "victim"), step: time.Duration(rapid.IntRange(0, 600).Draw(t, "in")) * time.Second}
		default:
			return op{kind: "advance", step: time.Duration(rapid.IntRange(1, 7200).Draw(t, "step")) * time.Second}
		}
	}), 1, 60).Draw(t, "ops")
}

// run plays ops on a new cloud with interruptions on and returns a transcript of everything
// that happened, and every event.
func run(cat *catalog.Catalog, seed int64, ops []op) (string, []Event) {
	cfg := ClassConfig{Catalog: cat, Targeted: []string{"cr-targeted"},
		Delays: Delays{Boot: time.Second, Registration: time.Second, DevicePlugin: time.Second, Shutdown: 10 * time.Second},
		Interruptions: Interruptions{Spot: SpotAdvisor, Seed: seed, Scale: 2000, RebalanceLead: 5 * time.Minute,
			MaintenanceInterval: 48 * time.Hour, MaintenanceNotice: 10 * time.Minute},
	}
	c := New(Options{IDSeed: uint64(seed)})
	if err := c.SetClass("default", cfg); err != nil {
		panic(err)
	}
	var b strings.Builder
	var all []Event
	var ids []string
	now := t0
	for _, o := range ops {
		switch o.kind {
		case "launch":
			inst, err := c.Launch(LaunchRequest{Class: "default", Requirements: o.reqs}, now)
			if err != nil {
				fmt.Fprintf(&b, "launch: %v\n", err)
				break
			}
			fmt.Fprintf(&b, "launch %s %s\n", offeringOf(inst), inst.ID)
			ids = append(ids, inst.ID)
		case "terminate":
			if len(ids) > 0 {
				fmt.Fprintf(&b, "terminate %v\n", c.Terminate(ids[o.victim%len(ids)], now))
			}
		case "inject":
			if len(ids) > 0 {
				fmt.Fprintf(&b, "inject %v\n", c.Inject(ids[o.victim%len(ids)], cloudprovider.SpotInterruption, now.Add(o.step)))
			}
		case "advance":
			now = now.Add(o.step)
		}
		evs := c.Advance(now)
		all = append(all, evs...)
		for _, e := range evs {
			b.WriteString(e.String() + " " + e.Message.ID + "\n")
		}
	}
	evs := c.Advance(now.Add(30 * 24 * time.Hour))
	all = append(all, evs...)
	for _, e := range evs {
		b.WriteString(e.String() + "\n")
	}
	return b.String(), all
}

// TestDeterminism: the same seed and the same calls give the same instances, errors and events.
func TestDeterminism(t *testing.T) {
	cat := testCatalog(t)
	rapid.Check(t, func(t *rapid.T) {
		ops := drawOps(t)
		seed := rapid.Int64().Draw(t, "seed")
		a, _ := run(cat, seed, ops)
		b, _ := run(cat, seed, ops)
		if a != b {
			t.Fatalf("two runs differ:\n%s\n---\n%s", a, b)
		}
	})
}

// TestInterruptionsPrecedeTermination: every instance reclaimed by a spot interruption got a
// SpotInterruption message SpotNotice before, whose deadline is the moment it began
// terminating; every spot notice is followed by that termination unless the instance was
// deleted first; messages are only ever about instances that were not yet terminating.
func TestInterruptionsPrecedeTermination(t *testing.T) {
	cat := testCatalog(t)
	rapid.Check(t, func(t *rapid.T) {
		_, evs := run(cat, rapid.Int64().Draw(t, "seed"), drawOps(t))
		notices := map[string]Event{}
		terminating := map[string]bool{}
		for _, e := range evs {
			switch {
			case e.Kind == EventMessage && e.Message.Kind == cloudprovider.SpotInterruption:
				if terminating[e.Instance] {
					t.Fatalf("notice %s after the instance began terminating", e)
				}
				if !e.Message.Deadline.Equal(e.At.Add(SpotNotice)) {
					t.Fatalf("notice %s: deadline is not %v after it", e, SpotNotice)
				}
				notices[e.Instance] = e
			case e.Kind == EventTerminating:
				terminating[e.Instance] = true
				n, noticed := notices[e.Instance]
				if noticed && e.At.After(n.Message.Deadline) {
					t.Fatalf("%s terminated at %v, after its deadline %v", e.Instance, e.At, n.Message.Deadline)
				}
				if noticed && e.At.Before(n.Message.Deadline) {
					continue // deleted before the deadline
				}
				if noticed != e.At.Equal(n.Message.Deadline) {
					t.Fatalf("%s terminated at %v, notice %v", e.Instance, e.At, n)
				}
			}
		}
		for id, n := range notices {
			if !terminating[id] {
				t.Fatalf("notice %s was never followed by a termination", n)
			}
		}
	})
}

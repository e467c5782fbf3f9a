package cloud

import (
	"slices"
	"time"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// class is a configured class with the capacity its live instances hold.
type class struct {
	name         string
	cfg          ClassConfig
	targeted     map[string]bool
	reservations map[string]catalog.Reservation
	poolUsed     []int
	resUsed      map[string]int
	// dynamic lists the catalog's offerings whose availability depends on usage or time: those
	// some pool selects, and the reserved ones.
	dynamic []dynamicOffering
	// poolsOf maps each of the catalog's offerings that some pool selects to those pools.
	poolsOf map[*catalog.Offering][]int
	// exact indexes the pools that select one offering by its key; matching lists the others.
	exact    map[OfferingKey][]int
	matching []int
	// view is the catalog as InstanceTypes last returned it.
	view []*catalog.InstanceType
}

type dynamicOffering struct {
	t, o  int   // indices into cfg.Catalog.Types and the type's Offerings
	pools []int // the pools that select it
}

func newClass(name string, cfg ClassConfig) *class {
	cls := &class{
		name:         name,
		cfg:          cfg,
		targeted:     map[string]bool{},
		reservations: map[string]catalog.Reservation{},
		poolUsed:     make([]int, len(cfg.Pools)),
		resUsed:      map[string]int{},
		poolsOf:      map[*catalog.Offering][]int{},
		exact:        map[OfferingKey][]int{},
		view:         cfg.Catalog.Types,
	}
	for i, p := range cfg.Pools {
		if p.Offering != nil {
			cls.exact[*p.Offering] = append(cls.exact[*p.Offering], i)
		} else {
			cls.matching = append(cls.matching, i)
		}
	}
	for _, id := range cfg.Targeted {
		cls.targeted[id] = true
	}
	for _, r := range cfg.Catalog.Reservations {
		cls.reservations[r.ID] = r
	}
	for t, it := range cfg.Catalog.Types {
		for o := range it.Offerings {
			off := &it.Offerings[o]
			pools := cls.poolsFor(it, off)
			if len(pools) > 0 {
				cls.poolsOf[off] = pools
			}
			if len(pools) > 0 || off.CapacityType == apisv1.CapacityTypeReserved {
				cls.dynamic = append(cls.dynamic, dynamicOffering{t: t, o: o, pools: pools})
			}
		}
	}
	return cls
}

// poolsFor returns the indices of the pools that select an offering of it.
func (cls *class) poolsFor(it *catalog.InstanceType, o *catalog.Offering) []int {
	if o.CapacityType == apisv1.CapacityTypeReserved {
		return nil
	}
	out := cls.exact[OfferingKey{InstanceType: it.Name, Zone: o.Zone, CapacityType: o.CapacityType}]
	if len(cls.matching) == 0 {
		return out
	}
	out = slices.Clone(out)
	for _, i := range cls.matching {
		if Selects(cls.cfg.Pools[i].Match, it, o) {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out
}

// hold adds (sign +1) or removes (−1) an instance's use of its pools or reservation.
func (cls *class) hold(inst *Instance, sign int) {
	if id := inst.Offering.ReservationID; id != "" {
		if _, ok := cls.reservations[id]; ok {
			cls.resUsed[id] += sign
		}
		return
	}
	for _, p := range cls.poolsFor(inst.Type, &inst.Offering) {
		cls.poolUsed[p] += sign
	}
}

// hasRoom reports whether one more instance may launch through offering o of it at now.
func (cls *class) hasRoom(it *catalog.InstanceType, o *catalog.Offering, pools []int, now time.Time) bool {
	if !o.Available {
		return false
	}
	if o.CapacityType == apisv1.CapacityTypeReserved {
		r, ok := cls.reservations[o.ReservationID]
		return ok && r.Window.Contains(now) && cls.resUsed[r.ID] < r.Count
	}
	for _, p := range pools {
		if cls.poolUsed[p] >= cls.cfg.Pools[p].Capacity {
			return false
		}
	}
	return true
}

// reservationLeft is how many more instances a reservation can take (ignoring its window).
func (cls *class) reservationLeft(id string) int {
	r, ok := cls.reservations[id]
	if !ok {
		return 0
	}
	return max(0, r.Count-cls.resUsed[id])
}

// Selects reports whether a node of type it bought through offering o would satisfy match: the
// type decides its own labels, the offering the zone, zone ID, capacity type and reservation
// ID (absent unless reserved). A label neither decides is absent.
func Selects(match scheduling.Requirements, it *catalog.InstanceType, o *catalog.Offering) bool {
	for _, r := range match.Items() {
		var v string
		var present bool
		switch r.Key {
		case apisv1.LabelZone:
			v, present = o.Zone, true
		case apisv1.LabelTopologyZoneID:
			v, present = o.ZoneID, true
		case apisv1.CapacityTypeLabelKey:
			v, present = o.CapacityType, true
		case apisv1.LabelCapacityReservationID:
			v, present = o.ReservationID, o.ReservationID != ""
		default:
			v, present = it.Label(r.Key)
		}
		if !r.Matches(v, present) {
			return false
		}
	}
	return true
}

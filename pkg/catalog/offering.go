package catalog

import (
	"time"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// ReservedPriceDivisor divides the on-demand price to price a reserved offering: reserved
// capacity is already paid for, so it must win against any spot or on-demand offering, yet
// larger reserved types should still cost more than smaller ones.
const ReservedPriceDivisor = 10_000_000

// Offering is one way to buy an instance type: a zone and a capacity type at a price.
type Offering struct {
	Zone         string
	ZoneID       string
	CapacityType string  // apisv1.CapacityTypeOnDemand, CapacityTypeSpot or CapacityTypeReserved
	Price        float64 // USD per hour
	Available    bool
	// ReservationID and ReservationCapacity (instances still free) are set on reserved
	// offerings only.
	ReservationID       string
	ReservationCapacity int
	// Window is when a reservation may be used (capacity blocks); zero for open reservations.
	Window Window
}

// Usable reports whether the offering can be bought now: it is available and, when reserved,
// has capacity left.
func (o *Offering) Usable() bool {
	return o.Available && (o.CapacityType != apisv1.CapacityTypeReserved || o.ReservationCapacity > 0)
}

// Labels returns the node labels the offering decides: zone, zone ID, capacity type and, for a
// reserved offering, the reservation ID.
func (o *Offering) Labels() map[string]string {
	l := map[string]string{
		apisv1.LabelZone:            o.Zone,
		apisv1.LabelTopologyZoneID:  o.ZoneID,
		apisv1.CapacityTypeLabelKey: o.CapacityType,
	}
	if o.ReservationID != "" {
		l[apisv1.LabelCapacityReservationID] = o.ReservationID
	}
	return l
}

// Requirements returns the offering's labels as requirements; the reservation ID is
// DoesNotExist on offerings that are not reserved.
func (o *Offering) Requirements() scheduling.Requirements {
	res := scheduling.DoesNotExist(apisv1.LabelCapacityReservationID)
	if o.ReservationID != "" {
		res = scheduling.In(apisv1.LabelCapacityReservationID, o.ReservationID)
	}
	return scheduling.NewRequirements(
		scheduling.In(apisv1.LabelZone, o.Zone),
		scheduling.In(apisv1.LabelTopologyZoneID, o.ZoneID),
		scheduling.In(apisv1.CapacityTypeLabelKey, o.CapacityType),
		res,
	)
}

// Label returns the value of an offering label key, and whether the offering decides that key
// at all (decides: zone, zone ID, capacity type, reservation ID) and sets it (present).
func (o *Offering) Label(key string) (value string, present, decides bool) {
	switch key {
	case apisv1.LabelZone:
		return o.Zone, true, true
	case apisv1.LabelTopologyZoneID:
		return o.ZoneID, true, true
	case apisv1.CapacityTypeLabelKey:
		return o.CapacityType, true, true
	case apisv1.LabelCapacityReservationID:
		return o.ReservationID, o.ReservationID != "", true
	}
	return "", false, false
}

// Window is a span of time [Start, End); a zero bound leaves that side open.
type Window struct {
	Start, End time.Time
}

// Contains reports whether t falls within the window.
func (w Window) Contains(t time.Time) bool {
	return (w.Start.IsZero() || !t.Before(w.Start)) && (w.End.IsZero() || t.Before(w.End))
}

// Reservation is capacity bought ahead: Count instances of InstanceType in Zone (a zone name or
// zone ID). A capacity block is a reservation with a Window. Price, when set, is the hourly
// price to divide by ReservedPriceDivisor instead of the on-demand price (types sold only as
// capacity blocks have none).
type Reservation struct {
	ID           string
	InstanceType string
	Zone         string
	Count        int
	Price        float64
	Window       Window
}

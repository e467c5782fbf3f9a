package catalog

import (
	"fmt"
	"slices"
	"strings"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// Catalog is what one region sells: its zones and its instance types with their offerings.
type Catalog struct {
	Region string
	Zones  []Zone
	// Types is sorted by name.
	Types []*InstanceType
	// Reservations are the reservations the catalog's reserved offerings come from.
	Reservations []Reservation
}

// Get returns the instance type called name.
func (c *Catalog) Get(name string) (*InstanceType, bool) {
	i, ok := slices.BinarySearchFunc(c.Types, name, func(it *InstanceType, n string) int { return strings.Compare(it.Name, n) })
	if !ok {
		return nil, false
	}
	return c.Types[i], true
}

// Zone returns the zone with the given name or zone ID.
func (c *Catalog) Zone(nameOrID string) (Zone, bool) {
	return findZone(c.Zones, nameOrID)
}

func findZone(zones []Zone, nameOrID string) (Zone, bool) {
	for _, z := range zones {
		if z.Name == nameOrID || z.ID == nameOrID {
			return z, true
		}
	}
	return Zone{}, false
}

// New builds a catalog from hand-built instance types (tests, synthetic benchmarks). It fails on
// a nil or unnamed type, a name listed twice, or an offering whose zone is not one of zones.
// The types are sorted by name into a new slice; the types themselves are shared.
func New(region string, zones []Zone, types []*InstanceType) (*Catalog, error) {
	c := &Catalog{Region: region, Zones: slices.Clone(zones), Types: slices.Clone(types)}
	for _, it := range c.Types {
		if it == nil || it.Name == "" {
			return nil, fmt.Errorf("catalog: nil or unnamed instance type")
		}
		for _, o := range it.Offerings {
			if z, ok := findZone(c.Zones, o.Zone); !ok || z.Name != o.Zone || z.ID != o.ZoneID {
				return nil, fmt.Errorf("catalog: %s has an offering in zone %s (%s), which is not one of the catalog's zones", it.Name, o.Zone, o.ZoneID)
			}
		}
	}
	slices.SortFunc(c.Types, func(a, b *InstanceType) int { return strings.Compare(a.Name, b.Name) })
	for i := 1; i < len(c.Types); i++ {
		if c.Types[i].Name == c.Types[i-1].Name {
			return nil, fmt.Errorf("catalog: instance type %s is listed twice", c.Types[i].Name)
		}
	}
	return c, nil
}

// Load builds the catalog of a region ("" is DefaultRegion) from the embedded data.
//
// A type is listed when it has an on-demand price in the region, or when the region sells it only
// as capacity blocks (p5e.48xlarge and trn2.48xlarge in us-east-1; they have offerings only
// through reservations). Offerings:
//
//   - on-demand in every zone at the region's on-demand price;
//   - spot, where the type has per-zone spot prices in the region, in exactly the zones that
//     have a price, at that price; otherwise, where the Spot Advisor knows the type, in every
//     zone at on-demand × (1 − savings%); otherwise none;
//   - reserved, one per reservation, priced at the on-demand price of its zone (after price
//     overrides; Reservation.Price if set) divided by ReservedPriceDivisor, available while it
//     has capacity.
//
// Price overrides then apply to the on-demand and spot offerings in order. Load parses the
// embedded data on first use and shares it between calls; every call returns new types.
func Load(region string, opts ...Option) (*Catalog, error) {
	t, err := embedded()
	if err != nil {
		return nil, fmt.Errorf("catalog: embedded data: %w", err)
	}
	return t.build(region, newSettings(opts))
}

func (t *table) build(regionName string, s settings) (*Catalog, error) {
	ri, err := findRegion(regionName)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	reg := &regions[ri]
	zones, err := selectZones(reg, s.zones)
	if err != nil {
		return nil, err
	}
	for _, p := range s.overrides {
		if err := p.validate(); err != nil {
			return nil, fmt.Errorf("catalog: %w", err)
		}
	}
	byType, err := groupReservations(s.reservations, zones)
	if err != nil {
		return nil, err
	}
	c := &Catalog{Region: reg.name, Zones: zones, Reservations: slices.Clone(s.reservations)}
	c.Types = make([]*InstanceType, 0, len(t.types))
	for i := range t.types {
		raw := &t.types[i]
		od := raw.onDemand[ri]
		if od == 0 && !slices.Contains(reg.capacityBlockOnly, raw.name) {
			continue
		}
		labels := typeLabels(raw.name, reg.name, &raw.shape)
		offerings := make([]Offering, 0, 2*len(zones)+len(byType[raw.name]))
		offerings = appendOnDemand(offerings, zones, od)
		offerings = appendSpot(offerings, zones, raw, ri, od)
		applyOverrides(s.overrides, labels, offerings)
		offerings = appendReserved(offerings, byType[raw.name])
		delete(byType, raw.name)
		it, err := buildType(raw.name, reg.name, raw.shape, labels, offerings, &s)
		if err != nil {
			return nil, fmt.Errorf("catalog: %w", err)
		}
		it.SpotAdvice = raw.advice[ri]
		c.Types = append(c.Types, it)
	}
	for _, r := range s.reservations {
		if _, ok := byType[r.InstanceType]; ok {
			return nil, fmt.Errorf("catalog: reservation %s: instance type %q is not sold in %s", r.ID, r.InstanceType, reg.name)
		}
	}
	return c, nil
}

func selectZones(reg *region, want []string) ([]Zone, error) {
	if want == nil {
		return slices.Clone(reg.zones), nil
	}
	var zones []Zone
	for _, z := range reg.zones {
		if slices.Contains(want, z.Name) || slices.Contains(want, z.ID) {
			zones = append(zones, z)
		}
	}
	for _, w := range want {
		if _, ok := findZone(reg.zones, w); !ok {
			return nil, fmt.Errorf("catalog: zone %q is not in %s", w, reg.name)
		}
	}
	if len(zones) == 0 {
		return nil, fmt.Errorf("catalog: no zones selected in %s", reg.name)
	}
	return zones, nil
}

// pendingReservation is a reservation resolved against the catalog's zones.
type pendingReservation struct {
	Reservation
	zone Zone
}

func groupReservations(rs []Reservation, zones []Zone) (map[string][]pendingReservation, error) {
	byType := map[string][]pendingReservation{}
	seen := map[string]bool{}
	for _, r := range rs {
		switch {
		case r.ID == "":
			return nil, fmt.Errorf("catalog: reservation of %s in %s has no ID", r.InstanceType, r.Zone)
		case seen[r.ID]:
			return nil, fmt.Errorf("catalog: reservation %s is listed twice", r.ID)
		case r.Count < 0 || r.Price < 0:
			return nil, fmt.Errorf("catalog: reservation %s: negative count or price", r.ID)
		}
		seen[r.ID] = true
		z, ok := findZone(zones, r.Zone)
		if !ok {
			return nil, fmt.Errorf("catalog: reservation %s: zone %q is not one of the catalog's zones", r.ID, r.Zone)
		}
		byType[r.InstanceType] = append(byType[r.InstanceType], pendingReservation{Reservation: r, zone: z})
	}
	return byType, nil
}

func appendOnDemand(offerings []Offering, zones []Zone, price float64) []Offering {
	if price == 0 {
		return offerings
	}
	for _, z := range zones {
		offerings = append(offerings, Offering{Zone: z.Name, ZoneID: z.ID, CapacityType: apisv1.CapacityTypeOnDemand, Price: price, Available: true})
	}
	return offerings
}

func appendSpot(offerings []Offering, zones []Zone, raw *rawType, ri int, od float64) []Offering {
	spot := func(z Zone, price float64) Offering {
		return Offering{Zone: z.Name, ZoneID: z.ID, CapacityType: apisv1.CapacityTypeSpot, Price: price, Available: true}
	}
	if rows := raw.zonalSpot[ri]; rows != nil {
		for _, z := range zones {
			for _, row := range rows {
				if row.zoneID == z.ID && row.price > 0 {
					offerings = append(offerings, spot(z, row.price))
				}
			}
		}
		return offerings
	}
	if a := raw.advice[ri]; a.Known && od > 0 {
		price := od * (1 - float64(a.SavingsPercent)/100)
		for _, z := range zones {
			offerings = append(offerings, spot(z, price))
		}
	}
	return offerings
}

// appendReserved adds an offering per reservation, priced from the on-demand offering of its
// zone (already overridden), which must come before it in offerings.
func appendReserved(offerings []Offering, rs []pendingReservation) []Offering {
	for _, r := range rs {
		base := r.Price
		if base == 0 {
			for _, o := range offerings {
				if o.CapacityType == apisv1.CapacityTypeOnDemand && o.Zone == r.zone.Name {
					base = o.Price
					break
				}
			}
		}
		offerings = append(offerings, Offering{
			Zone: r.zone.Name, ZoneID: r.zone.ID, CapacityType: apisv1.CapacityTypeReserved,
			Price: base / ReservedPriceDivisor, Available: r.Count > 0,
			ReservationID: r.ID, ReservationCapacity: r.Count, Window: r.Window,
		})
	}
	return offerings
}

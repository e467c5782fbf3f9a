package commitment

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// Kind is what a commitment bought.
type Kind int

const (
	ComputeSavingsPlan Kind = iota
	InstanceSavingsPlan
	ZonalReservation
	RegionalReservation
)

var kindNames = [...]string{"ComputeSavingsPlan", "EC2InstanceSavingsPlan", "ZonalReservedInstances", "RegionalReservedInstances"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Rate is a Savings Plan's discount for a family, in one region or ("" ) every region.
type Rate struct {
	Family, Region string
	Discount       float64 // fraction of on-demand, 0 to 1
}

// Commitment is one commitment as the bill sees it.
type Commitment struct {
	Name string
	Kind Kind
	// Start and End bound when it applies; zero: unbounded.
	Start, End time.Time
	// Hourly is a Savings Plan's commitment in USD per hour.
	Hourly float64
	// Rates and Default are a Compute Savings Plan's discounts (the first Rate that matches
	// wins); an EC2 Instance Savings Plan has Default only, for its Family and Region.
	Rates   []Rate
	Default float64
	// Family and Region: an EC2 Instance Savings Plan's family and region; a reservation's
	// region. Empty region: any (the cluster's).
	Family, Region string
	// InstanceType, Zone and Count describe Reserved Instances; Units is one reserved
	// instance's normalization factor (regional reservations cover Count × Units units).
	InstanceType string
	Zone         string
	Count        int
	Units        float64
	// Fee is a reserved instance's effective hourly price, paid whether used or not.
	Fee float64
}

// MaxCovered is the most on-demand usage, at on-demand prices, the commitment can cover in an
// hour: a Savings Plan's commitment at its deepest discount, a zonal reservation's instances at
// their on-demand price od(type), a regional one's units at the family's dearest on-demand price
// per unit perUnit(family). Whatever the fleet, its bill is at least the commitments' fixed
// part plus its cost at list prices less what they can cover.
func (c *Commitment) MaxCovered(od func(instanceType string) float64, perUnit func(family string) float64) float64 {
	switch c.Kind {
	case ComputeSavingsPlan, InstanceSavingsPlan:
		d := c.Default
		for _, r := range c.Rates {
			d = max(d, r.Discount)
		}
		if d >= 1 {
			return math.Inf(1)
		}
		return c.Hourly / (1 - d)
	case ZonalReservation:
		return float64(c.Count) * od(c.InstanceType)
	default:
		return c.Capacity() * perUnit(Family(c.InstanceType))
	}
}

// Fixed is what the book's commitments cost per hour whether used or not.
func (b *Book) Fixed() float64 {
	f := 0.0
	for i := range b.commitments {
		f += b.commitments[i].fixed()
	}
	return f
}

// Active reports whether the commitment applies at t.
func (c *Commitment) Active(t time.Time) bool {
	return (c.Start.IsZero() || !t.Before(c.Start)) && (c.End.IsZero() || t.Before(c.End))
}

// Capacity is how much the commitment holds: USD per hour for a Savings Plan, instances for a
// zonal reservation, normalized units for a regional one.
func (c *Commitment) Capacity() float64 {
	switch c.Kind {
	case ComputeSavingsPlan, InstanceSavingsPlan:
		return c.Hourly
	case ZonalReservation:
		return float64(c.Count)
	default:
		return float64(c.Count) * c.Units
	}
}

// fixed is what the commitment costs per hour whether used or not.
func (c *Commitment) fixed() float64 {
	switch c.Kind {
	case ComputeSavingsPlan, InstanceSavingsPlan:
		return c.Hourly
	default:
		return float64(c.Count) * c.Fee
	}
}

func regionMatches(want, got string) bool { return want == "" || got == "" || want == got }

// discount returns the plan's discount for an instance, and whether the plan covers it.
func (c *Commitment) discount(in *Instance) (float64, bool) {
	switch c.Kind {
	case InstanceSavingsPlan:
		if in.Family != c.Family || !regionMatches(c.Region, in.Region) {
			return 0, false
		}
		return c.Default, true
	case ComputeSavingsPlan:
		for _, r := range c.Rates {
			if r.Family == in.Family && regionMatches(r.Region, in.Region) {
				return r.Discount, true
			}
		}
		return c.Default, true
	}
	return 0, false
}

// Instance is one instance of the fleet, running or about to be bought.
type Instance struct {
	Type, Family string
	Zone, Region string
	// OnDemand says the instance is billed on demand (and so may be covered); a spot or
	// capacity-reserved instance is not.
	OnDemand bool
	// Price is its list price per hour: the on-demand price when OnDemand, else what it costs.
	Price float64
	// Units is its normalization factor (Units()).
	Units float64
}

// Book is the commitments active at one instant, in the order they are applied.
type Book struct {
	commitments []Commitment
}

// NewBook keeps the commitments active at t, in the order AWS applies them: zonal
// reservations, regional ones, EC2 Instance Savings Plans by discount (deepest first), Compute
// Savings Plans; by name within a kind.
func NewBook(cs []Commitment, t time.Time) *Book {
	b := &Book{}
	for _, c := range cs {
		if c.Active(t) {
			b.commitments = append(b.commitments, c)
		}
	}
	rank := func(k Kind) int {
		return [...]int{ComputeSavingsPlan: 3, InstanceSavingsPlan: 2, ZonalReservation: 0, RegionalReservation: 1}[k]
	}
	slices.SortStableFunc(b.commitments, func(x, y Commitment) int {
		if c := cmp.Compare(rank(x.Kind), rank(y.Kind)); c != 0 {
			return c
		}
		if x.Kind == InstanceSavingsPlan {
			if c := cmp.Compare(y.Default, x.Default); c != 0 {
				return c
			}
		}
		return cmp.Compare(x.Name, y.Name)
	})
	return b
}

// Commitments returns the book's commitments in the order they apply.
func (b *Book) Commitments() []Commitment { return b.commitments }

// Empty reports whether nothing is committed.
func (b *Book) Empty() bool { return b == nil || len(b.commitments) == 0 }

// Bill is a fleet's hourly bill under a book.
type Bill struct {
	// Fixed is what the commitments cost whether used or not; Overage what the usage they do
	// not cover costs at list prices. Total is their sum.
	Fixed, Overage, Total float64
	// Used is, per commitment of the book (in its order), how much of its Capacity the fleet
	// uses; Covered how many instances it covers wholly or in part.
	Used    []float64
	Covered []int
	// Uncovered is, per instance, the fraction of it billed at its list price.
	Uncovered []float64
	// OnDemand is the fleet's on-demand usage at list prices, CoveredOnDemand the part of it
	// commitments cover.
	OnDemand, CoveredOnDemand float64
}

// Bill allocates the book over the fleet and prices it.
func (b *Book) Bill(fleet []Instance) Bill {
	a := b.allocate(fleet)
	bill := Bill{Used: a.used, Covered: a.covered, Uncovered: a.left}
	for i := range b.commitments {
		bill.Fixed += b.commitments[i].fixed()
	}
	for i := range fleet {
		bill.Overage += a.left[i] * fleet[i].Price
		if fleet[i].OnDemand {
			bill.OnDemand += fleet[i].Price
			bill.CoveredOnDemand += (1 - a.left[i]) * fleet[i].Price
		}
	}
	bill.Total = bill.Fixed + bill.Overage
	return bill
}

// allocation is a book applied to a fleet.
type allocation struct {
	left    []float64 // per instance: the fraction not covered
	used    []float64 // per commitment
	covered []int
}

const eps = 1e-12

func (b *Book) allocate(fleet []Instance) allocation {
	a := allocation{left: make([]float64, len(fleet)), used: make([]float64, len(b.commitments)), covered: make([]int, len(b.commitments))}
	for i := range fleet {
		a.left[i] = 1
	}
	if len(b.commitments) == 0 {
		return a
	}
	order := make([]int, 0, len(fleet))
	rates := make([]float64, len(fleet))
	for ci := range b.commitments {
		c := &b.commitments[ci]
		order = order[:0]
		for i := range fleet {
			in := &fleet[i]
			if !in.OnDemand || a.left[i] <= eps {
				continue
			}
			switch c.Kind {
			case ZonalReservation:
				if in.Type == c.InstanceType && in.Zone == c.Zone && regionMatches(c.Region, in.Region) && a.left[i] == 1 {
					order = append(order, i)
				}
			case RegionalReservation:
				if in.Family == Family(c.InstanceType) && in.Units > 0 && regionMatches(c.Region, in.Region) {
					order = append(order, i)
				}
			default:
				if d, ok := c.discount(in); ok {
					rates[i] = d
					order = append(order, i)
				}
			}
		}
		switch c.Kind {
		case ZonalReservation:
			n := min(len(order), c.Count)
			for _, i := range order[:n] {
				a.left[i] = 0
			}
			a.used[ci], a.covered[ci] = float64(n), n
		case RegionalReservation:
			// The smallest instances first.
			slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(fleet[x].Units, fleet[y].Units) })
			room := c.Capacity()
			for _, i := range order {
				if room <= eps {
					break
				}
				need := a.left[i] * fleet[i].Units
				take := min(need, room)
				room -= take
				a.left[i] = max(0, a.left[i]-take/fleet[i].Units)
				a.used[ci] += take
				a.covered[ci]++
			}
		default:
			// The usage the plan discounts most first; covered usage is billed to the
			// commitment at the plan's rate, on-demand × (1 − discount).
			slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(rates[y], rates[x]) })
			room := c.Hourly
			for _, i := range order {
				if room <= eps {
					break
				}
				rate := fleet[i].Price * (1 - rates[i])
				if rate <= eps {
					a.left[i] = 0
					a.covered[ci]++
					continue
				}
				need := a.left[i] * rate
				take := min(need, room)
				room -= take
				a.left[i] = max(0, a.left[i]-take/rate)
				a.used[ci] += take
				a.covered[ci]++
			}
		}
	}
	return a
}

// Removal returns what the bill loses when fleet[i] goes: Bill(fleet) − Bill(fleet without it).
func (b *Book) Removal(fleet []Instance, i int) float64 {
	if b.Empty() {
		return fleet[i].Price
	}
	return b.RemovalFrom(b.Bill(fleet), fleet, i)
}

// RemovalFrom is Removal given the fleet's bill. An instance no commitment covers took no room
// from any: without it every other is covered as before, and the bill loses its price.
func (b *Book) RemovalFrom(bill Bill, fleet []Instance, i int) float64 {
	if b.Empty() || bill.Uncovered[i] >= 1 {
		return fleet[i].Price
	}
	with := bill.Total
	without := make([]Instance, 0, len(fleet)-1)
	without = append(append(without, fleet[:i]...), fleet[i+1:]...)
	return with - b.Bill(without).Total
}

// Room is what is left of each commitment after a fleet.
type Room struct {
	book *Book
	left []float64 // per commitment, in the units of its Capacity
}

// Room allocates the book over the fleet and returns what is left.
func (b *Book) Room(fleet []Instance) *Room {
	r := &Room{book: b}
	if b.Empty() {
		return r
	}
	a := b.allocate(fleet)
	r.left = make([]float64, len(b.commitments))
	for i := range b.commitments {
		r.left[i] = max(0, b.commitments[i].Capacity()-a.used[i])
	}
	return r
}

// Left returns what is left of each commitment of the book, in its order and the units of its
// Capacity: two rooms with equal Left price every instance alike.
func (r *Room) Left() []float64 {
	if r == nil {
		return nil
	}
	return r.left
}

// Marginal returns what one more instance adds to the bill on the room left: nothing while a
// reservation of its kind or a plan covering it has room for it, its list price beyond, and
// the uncovered part of it where the room covers only part. It never exceeds the list price.
// Where the instance would take a commitment from usage it discounts less (a plan covers the
// usage it discounts most first), the bill changes by a little less than this.
func (r *Room) Marginal(in Instance) float64 {
	if r == nil || r.book.Empty() || !in.OnDemand {
		return in.Price
	}
	left := 1.0
	for ci := range r.book.commitments {
		if left <= eps {
			return 0
		}
		c := &r.book.commitments[ci]
		room := r.left[ci]
		if room <= eps {
			continue
		}
		switch c.Kind {
		case ZonalReservation:
			if in.Type == c.InstanceType && in.Zone == c.Zone && regionMatches(c.Region, in.Region) && left == 1 && room >= 1 {
				left = 0
			}
		case RegionalReservation:
			if in.Family == Family(c.InstanceType) && in.Units > 0 && regionMatches(c.Region, in.Region) {
				left = max(0, left-room/in.Units)
			}
		default:
			d, ok := c.discount(&in)
			if !ok {
				continue
			}
			rate := in.Price * (1 - d)
			if rate <= eps {
				left = 0
				continue
			}
			left = max(0, left-room/rate)
		}
	}
	return left * in.Price
}

// Utilization returns, per commitment of the book, the share of its capacity the fleet uses
// (0 to 1) for a bill of that fleet.
func (b *Book) Utilization(bill Bill) []float64 {
	out := make([]float64, len(b.commitments))
	for i := range b.commitments {
		if c := b.commitments[i].Capacity(); c > 0 {
			out[i] = min(1, bill.Used[i]/c)
		}
	}
	return out
}

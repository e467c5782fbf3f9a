package commitment

import (
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func od(typ, zone string, price float64) Instance {
	return Instance{Type: typ, Family: Family(typ), Zone: zone, Region: "us-east-1", OnDemand: true, Price: price, Units: Units(typ, 0)}
}

func spot(typ, zone string, price float64) Instance {
	in := od(typ, zone, price)
	in.OnDemand = false
	return in
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestUnits(t *testing.T) {
	for _, c := range []struct {
		typ  string
		vcpu int64
		want float64
	}{
		{"t3.nano", 2, 0.25}, {"t3.micro", 2, 0.5}, {"t3.small", 2, 1}, {"t3.medium", 2, 2},
		{"m5.large", 2, 4}, {"m5.xlarge", 4, 8}, {"m5.2xlarge", 8, 16}, {"m5.24xlarge", 96, 192},
		{"m5.metal", 96, 192}, {"c7g.metal-48xl", 192, 384}, {"weird", 4, 0}, {"m5.0xlarge", 1, 0},
	} {
		if got := Units(c.typ, c.vcpu); got != c.want {
			t.Errorf("Units(%s) = %v, want %v", c.typ, got, c.want)
		}
	}
}

func TestBill(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	sp := Commitment{Name: "sp", Kind: ComputeSavingsPlan, Hourly: 1, Default: 0.5, Rates: []Rate{{Family: "c5", Discount: 0.75}}}
	for _, c := range []struct {
		name     string
		book     []Commitment
		fleet    []Instance
		fixed    float64
		overage  float64
		used     []float64
		covered  []int
		marginal Instance
		want     float64 // Marginal of the instance on the fleet's room
	}{
		{
			name:    "no commitments: list prices",
			fleet:   []Instance{od("m5.large", "a", 0.096), spot("m5.large", "a", 0.04)},
			overage: 0.136, marginal: od("m5.large", "a", 0.096), want: 0.096,
		},
		{
			name:  "a zonal reservation covers its type in its zone only",
			book:  []Commitment{{Name: "ri", Kind: ZonalReservation, InstanceType: "m5.large", Zone: "a", Count: 2, Fee: 0.06}},
			fleet: []Instance{od("m5.large", "a", 0.096), od("m5.large", "b", 0.096), od("m5.xlarge", "a", 0.192), spot("m5.large", "a", 0.04)},
			fixed: 0.12, overage: 0.096 + 0.192 + 0.04, used: []float64{1}, covered: []int{1},
			marginal: od("m5.large", "a", 0.096), want: 0,
		},
		{
			name:  "a used-up zonal reservation: the next costs its list price",
			book:  []Commitment{{Name: "ri", Kind: ZonalReservation, InstanceType: "m5.large", Zone: "a", Count: 1}},
			fleet: []Instance{od("m5.large", "a", 0.096)},
			used:  []float64{1}, covered: []int{1},
			marginal: od("m5.large", "a", 0.096), want: 0.096,
		},
		{
			name: "a regional reservation is size-flexible, smallest first",
			// 2 × m5.xlarge = 16 units: the large (4) and the 2xlarge (16) in that order; the
			// 2xlarge is left 4/16 covered.
			book:  []Commitment{{Name: "ri", Kind: RegionalReservation, InstanceType: "m5.xlarge", Count: 2, Units: 8, Fee: 0.1}},
			fleet: []Instance{od("m5.2xlarge", "a", 0.384), od("m5.large", "b", 0.096), od("c5.large", "a", 0.085)},
			fixed: 0.2, overage: 0.384*0.25 + 0.085, used: []float64{16}, covered: []int{2},
			marginal: od("m5.large", "a", 0.096), want: 0.096,
		},
		{
			name:  "a regional reservation with room: half a 2xlarge",
			book:  []Commitment{{Name: "ri", Kind: RegionalReservation, InstanceType: "m5.xlarge", Count: 2, Units: 8}},
			fleet: []Instance{od("m5.large", "b", 0.096)},
			used:  []float64{4}, covered: []int{1},
			marginal: od("m5.2xlarge", "a", 0.384), want: 0.384 * 4 / 16,
		},
		{
			name: "a compute savings plan: the deepest discount first",
			// c5 at 75% off: rate 0.25 × 0.4 = 0.1; m5 at 50%: rate 0.5 × 0.96 = 0.48 of which
			// 0.9 of the 1.0 remains after c5 → wholly; 0.42 room left.
			book:  []Commitment{sp},
			fleet: []Instance{od("m5.4xlarge", "a", 0.96), od("c5.2xlarge", "a", 0.4), spot("c5.2xlarge", "a", 0.15)},
			fixed: 1, overage: 0.15, used: []float64{0.58}, covered: []int{2},
			marginal: od("m5.4xlarge", "b", 0.96), want: 0.96 * (1 - 0.42/0.48),
		},
		{
			name:  "a used-up savings plan: on-demand beyond it",
			book:  []Commitment{{Name: "sp", Kind: ComputeSavingsPlan, Hourly: 0.24, Default: 0.5}},
			fleet: []Instance{od("m5.4xlarge", "a", 0.96)},
			fixed: 0.24, overage: 0.48, used: []float64{0.24}, covered: []int{1},
			marginal: od("m5.large", "a", 0.096), want: 0.096,
		},
		{
			name:  "an EC2 instance savings plan covers its family only, before the compute plan",
			book:  []Commitment{sp, {Name: "isp", Kind: InstanceSavingsPlan, Family: "m5", Region: "us-east-1", Hourly: 0.1, Default: 0.6}},
			fleet: []Instance{od("m5.xlarge", "a", 0.192)},
			fixed: 1.1, used: []float64{0.192 * 0.4, 0}, covered: []int{1, 0},
			marginal: od("m5.xlarge", "a", 0.192), want: 0,
		},
		{
			name:  "another region's instance plan covers nothing",
			book:  []Commitment{{Name: "isp", Kind: InstanceSavingsPlan, Family: "m5", Region: "eu-west-1", Hourly: 1, Default: 0.6}},
			fleet: []Instance{od("m5.xlarge", "a", 0.192)},
			fixed: 1, overage: 0.192, used: []float64{0}, covered: []int{0},
			marginal: od("m5.xlarge", "a", 0.192), want: 0.192,
		},
		{
			name:     "a commitment not yet started is not in the book",
			book:     []Commitment{{Name: "later", Kind: ComputeSavingsPlan, Hourly: 5, Default: 0.5, Start: now.Add(time.Hour)}},
			fleet:    []Instance{od("m5.xlarge", "a", 0.192)},
			overage:  0.192,
			marginal: od("m5.xlarge", "a", 0.192), want: 0.192,
		},
		{
			name:     "spot is never covered",
			book:     []Commitment{sp},
			fleet:    nil,
			fixed:    1,
			used:     []float64{0},
			covered:  []int{0},
			marginal: spot("m5.xlarge", "a", 0.07), want: 0.07,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := NewBook(c.book, now)
			bill := b.Bill(c.fleet)
			if !near(bill.Fixed, c.fixed) || !near(bill.Overage, c.overage) || !near(bill.Total, c.fixed+c.overage) {
				t.Errorf("bill fixed %v overage %v total %v, want %v %v", bill.Fixed, bill.Overage, bill.Total, c.fixed, c.overage)
			}
			if len(bill.Used) != len(c.used) {
				t.Fatalf("used %v, want %v", bill.Used, c.used)
			}
			for i := range c.used {
				if !near(bill.Used[i], c.used[i]) || bill.Covered[i] != c.covered[i] {
					t.Errorf("commitment %d: used %v covering %d, want %v covering %d", i, bill.Used[i], bill.Covered[i], c.used[i], c.covered[i])
				}
			}
			if got := b.Room(c.fleet).Marginal(c.marginal); !near(got, c.want) {
				t.Errorf("marginal %v, want %v", got, c.want)
			}
		})
	}
}

// genFleet draws a fleet of on-demand and spot instances of a few families, sizes and zones,
// with on-demand prices proportional to normalized units within a family.
func genFleet(t *rapid.T, label string) []Instance {
	fams := map[string]float64{"m5": 0.024, "c5": 0.02125, "r5": 0.0315}
	names := []string{"m5", "c5", "r5"}
	sizes := []string{"large", "xlarge", "2xlarge", "4xlarge"}
	n := rapid.IntRange(0, 12).Draw(t, label+"-n")
	out := make([]Instance, n)
	for i := range out {
		f := rapid.SampledFrom(names).Draw(t, label+"-family")
		typ := f + "." + rapid.SampledFrom(sizes).Draw(t, label+"-size")
		zone := rapid.SampledFrom([]string{"a", "b"}).Draw(t, label+"-zone")
		in := od(typ, zone, fams[f]*Units(typ, 0))
		if rapid.IntRange(0, 3).Draw(t, label+"-spot") == 0 {
			in.OnDemand = false
			in.Price *= 0.4
		}
		out[i] = in
	}
	return out
}

func genBook(t *rapid.T) []Commitment {
	var cs []Commitment
	for i := range rapid.IntRange(0, 4).Draw(t, "commitments") {
		name := string(rune('a' + i))
		switch rapid.IntRange(0, 3).Draw(t, "kind") {
		case 0:
			cs = append(cs, Commitment{Name: name, Kind: ComputeSavingsPlan, Hourly: rapid.Float64Range(0, 2).Draw(t, "hourly"), Default: rapid.Float64Range(0, 0.7).Draw(t, "discount"),
				Rates: []Rate{{Family: "c5", Discount: rapid.Float64Range(0, 0.7).Draw(t, "c5")}}})
		case 1:
			cs = append(cs, Commitment{Name: name, Kind: InstanceSavingsPlan, Family: rapid.SampledFrom([]string{"m5", "c5", "r5"}).Draw(t, "family"),
				Hourly: rapid.Float64Range(0, 1).Draw(t, "hourly"), Default: rapid.Float64Range(0, 0.7).Draw(t, "discount")})
		case 2:
			cs = append(cs, Commitment{Name: name, Kind: ZonalReservation, InstanceType: "m5.xlarge", Zone: "a", Count: rapid.IntRange(1, 3).Draw(t, "count"), Fee: 0.1})
		default:
			cs = append(cs, Commitment{Name: name, Kind: RegionalReservation, InstanceType: "r5.xlarge", Count: rapid.IntRange(1, 3).Draw(t, "count"), Units: 8, Fee: 0.15})
		}
	}
	return cs
}

// Commitments only ever lower the usage part of the bill; what an instance adds is between
// nothing and its list price; Room's marginal price is never below what adding the instance
// really adds to the bill by more than rounding, and removing an instance never saves more
// than its list price nor less than nothing.
func TestBillProperties(t *testing.T) {
	now := time.Now()
	rapid.Check(t, func(t *rapid.T) {
		b := NewBook(genBook(t), now)
		fleet := genFleet(t, "fleet")
		bill := b.Bill(fleet)
		list := 0.0
		for _, in := range fleet {
			list += in.Price
		}
		if bill.Overage > list+1e-9 {
			t.Fatalf("overage %v above the list price %v", bill.Overage, list)
		}
		// The floor simulate proves under any fleet: fixed + list − the most coverable.
		od := func(typ string) float64 {
			return map[string]float64{"m5": 0.024, "c5": 0.02125, "r5": 0.0315}[Family(typ)] * Units(typ, 0)
		}
		perUnit := func(f string) float64 { return map[string]float64{"m5": 0.024, "c5": 0.02125, "r5": 0.0315}[f] }
		covers := 0.0
		for _, c := range b.Commitments() {
			covers += c.MaxCovered(od, perUnit)
		}
		if floor := b.Fixed() + max(0, list-covers); bill.Total < floor-1e-9 {
			t.Fatalf("bill %v below the floor %v (list %v, coverable %v)", bill.Total, floor, list, covers)
		}
		for i, u := range b.Utilization(bill) {
			if u < 0 || u > 1 {
				t.Fatalf("commitment %d utilization %v", i, u)
			}
		}
		extra := genFleet(t, "extra")
		if len(extra) == 0 {
			return
		}
		x := extra[0]
		m := b.Room(fleet).Marginal(x)
		if m < -1e-12 || m > x.Price+1e-12 {
			t.Fatalf("marginal %v outside [0, %v]", m, x.Price)
		}
		diff := b.Bill(append(fleet[:len(fleet):len(fleet)], x)).Total - bill.Total
		if diff < -1e-9 || diff > x.Price+1e-9 {
			t.Fatalf("adding %s changed the bill by %v, list %v", x.Type, diff, x.Price)
		}
		for i := range fleet {
			if r := b.Removal(fleet, i); r < -1e-9 || r > fleet[i].Price+1e-9 {
				t.Fatalf("removing %s saves %v, list %v", fleet[i].Type, r, fleet[i].Price)
			}
		}
	})
}

// With a single Compute Savings Plan of one discount and zonal reservations the allocation
// does not depend on order, and Marginal is exactly what the next instance adds to the bill.
func TestMarginalIsTheBillsChange(t *testing.T) {
	now := time.Now()
	rapid.Check(t, func(t *rapid.T) {
		var cs []Commitment
		if rapid.Bool().Draw(t, "sp") {
			cs = append(cs, Commitment{Name: "sp", Kind: ComputeSavingsPlan, Hourly: rapid.Float64Range(0, 2).Draw(t, "hourly"), Default: rapid.Float64Range(0, 0.7).Draw(t, "discount")})
		}
		if rapid.Bool().Draw(t, "ri") {
			cs = append(cs, Commitment{Name: "ri", Kind: ZonalReservation, InstanceType: "m5.xlarge", Zone: "a", Count: rapid.IntRange(1, 3).Draw(t, "count"), Fee: 0.1})
		}
		b := NewBook(cs, now)
		fleet := genFleet(t, "fleet")
		extra := genFleet(t, "extra")
		if len(extra) == 0 {
			return
		}
		x := extra[0]
		want := b.Bill(append(fleet[:len(fleet):len(fleet)], x)).Total - b.Bill(fleet).Total
		if got := b.Room(fleet).Marginal(x); math.Abs(got-want) > 1e-9 {
			t.Fatalf("marginal %v, the bill changes by %v", got, want)
		}
	})
}

// The rule consolidation decides by — replace a node when what removing it saves exceeds what
// the replacement adds on the fleet's room — never raises the bill (issue 19: a consolidation
// off covered capacity onto spot is taken only when the bill goes down).
func TestConsolidationNeverRaisesTheBill(t *testing.T) {
	now := time.Now()
	rapid.Check(t, func(t *rapid.T) {
		b := NewBook(genBook(t), now)
		fleet := genFleet(t, "fleet")
		extra := genFleet(t, "replacement")
		if len(fleet) == 0 || len(extra) == 0 {
			return
		}
		i := rapid.IntRange(0, len(fleet)-1).Draw(t, "candidate")
		r := extra[0]
		saves := b.Removal(fleet, i)
		adds := b.Room(fleet).Marginal(r)
		if saves <= adds {
			return // not taken
		}
		after := append(append(append([]Instance(nil), fleet[:i]...), fleet[i+1:]...), r)
		if before, now := b.Bill(fleet).Total, b.Bill(after).Total; now > before+1e-9 {
			t.Fatalf("replacing %s (saves %v) by %s (adds %v) raised the bill %v → %v", fleet[i].Type, saves, r.Type, adds, before, now)
		}
	})
}

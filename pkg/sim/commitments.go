package sim

import (
	"slices"
	"time"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/commitment"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// billing is a run's bill under Options.Commitments: every policy's cost is the bill (the
// commitments' fixed part and the usage they leave uncovered at list prices); a policy that
// decides with commitments (Policy.Commitments) prices on-demand offerings at what they add to
// the bill, launches on the room the fleet leaves, and weighs a node at what removing it saves
// (docs/api.md, "Commitments and the marginal price"), as tenon's controller does.
type billing struct {
	r           *run
	commitments []commitment.Commitment
	aware       bool
	order       []*Node        // the nodes billed, in launch order
	at          map[NodeID]int // index in order (rebuilt with list)
	types       map[string]*catalog.InstanceType

	book        *commitment.Book
	from, until time.Duration // the virtual times the book holds for (until < 0: forever)
	gen         int           // bumps when the fleet or the book changes
	roomGen     int
	room        *commitment.Room
	list        []commitment.Instance
	listGen     int
	saves       map[NodeID]float64 // Removal by node, for savesGen
	savesGen    int
	billNow     commitment.Bill // the fleet's bill, for savesGen
	// repriced caches Reprice's answers for the room left as repricedAt says, by the list
	// given (its first element and length): equal rooms price alike.
	repriced   map[repriceKey][]*catalog.InstanceType
	repricedAt []float64
}

type repriceKey struct {
	first *catalog.InstanceType
	n     int
}

func newBilling(r *run, cs []commitment.Commitment, aware bool) *billing {
	if len(cs) == 0 {
		return nil
	}
	b := &billing{r: r, commitments: cs, aware: aware, types: map[string]*catalog.InstanceType{}}
	for _, p := range r.env.Pools {
		for _, it := range p.Types {
			b.types[it.Name] = it
		}
	}
	b.rebook(0)
	return b
}

// rebook takes the book active at virtual time t, and when it next changes.
func (b *billing) rebook(t time.Duration) {
	at := b.r.wall(t)
	b.book = commitment.NewBook(b.commitments, at)
	b.from, b.until = t, -1
	for _, c := range b.commitments {
		for _, edge := range []time.Time{c.Start, c.End} {
			if !edge.IsZero() && edge.After(at) {
				if d := edge.Sub(b.r.env.Start); b.until < 0 || d < b.until {
					b.until = d
				}
			}
		}
	}
	b.gen++
}

// instances returns the billed fleet as the bill sees it, in launch order.
func (b *billing) instances() []commitment.Instance {
	if b.listGen == b.gen && b.list != nil {
		return b.list
	}
	b.list = b.list[:0]
	b.at = make(map[NodeID]int, len(b.order))
	for i, n := range b.order {
		b.list = append(b.list, commitment.InstanceOf(n.Type, &n.Offering, ""))
		b.at[n.ID] = i
	}
	b.listGen = b.gen
	return b.list
}

func (b *billing) add(n *Node) { b.order = append(b.order, n); b.gen++ }

func (b *billing) remove(n *Node) {
	for i, m := range b.order {
		if m == n {
			b.order = append(b.order[:i], b.order[i+1:]...)
			break
		}
	}
	b.gen++
}

// bill is the fleet's bill now.
func (b *billing) bill() commitment.Bill { return b.book.Bill(b.instances()) }

// roomNow is what the fleet leaves of the commitments.
func (b *billing) roomNow() *commitment.Room {
	if b.room == nil || b.roomGen != b.gen {
		b.room, b.roomGen = b.book.Room(b.instances()), b.gen
	}
	return b.room
}

// deciding reports whether the run's policy decides with commitments.
func (r *run) deciding() bool { return r.bill != nil && r.bill.aware && !r.bill.book.Empty() }

// reprice returns the types with on-demand offerings at what they add to the bill, when the
// policy decides with commitments; the types as they are otherwise.
func (r *run) reprice(its []*catalog.InstanceType) []*catalog.InstanceType {
	if !r.deciding() || len(its) == 0 {
		return its
	}
	b := r.bill
	room := b.roomNow()
	if b.repriced == nil || !slices.Equal(b.repricedAt, room.Left()) {
		b.repriced, b.repricedAt = map[repriceKey][]*catalog.InstanceType{}, slices.Clone(room.Left())
	}
	k := repriceKey{its[0], len(its)}
	if out, ok := b.repriced[k]; ok {
		return out
	}
	out := commitment.Reprice(its, room, "")
	b.repriced[k] = out
	return out
}

// launchPrice prices an offering for a launch of a policy that decides with commitments; nil
// otherwise (the cloud's own prices).
func (r *run) launchPrices() func(string, *catalog.Offering) float64 {
	if !r.deciding() {
		return nil
	}
	room := r.bill.roomNow()
	return func(name string, o *catalog.Offering) float64 {
		it := r.bill.types[name]
		if it == nil {
			return o.Price
		}
		return commitment.MarginalPrice(room, it, o, "")
	}
}

// price is what a disrupter weighs a node at: what removing it saves on the bill when the
// policy decides with commitments, its price otherwise.
func (r *run) price(n *Node) float64 {
	if !r.deciding() || n.Offering.CapacityType != apisv1.CapacityTypeOnDemand {
		return n.Price
	}
	b := r.bill
	fleet := b.instances()
	if b.saves == nil || b.savesGen != b.gen {
		b.saves, b.savesGen, b.billNow = map[NodeID]float64{}, b.gen, b.book.Bill(fleet)
	}
	if v, ok := b.saves[n.ID]; ok {
		return v
	}
	v := n.Price
	if i, ok := b.at[n.ID]; ok {
		v = b.book.RemovalFrom(b.billNow, fleet, i) + n.Price/catalog.ReservedPriceDivisor
	}
	b.saves[n.ID] = v
	return v
}

// pickLaunch chooses what a launch of a policy deciding with commitments takes among the
// offerings its options allow: the least it adds to the bill on the room left now.
func (r *run) pickLaunch(pool int, options scheduling.Requirements, need scheduling.Resources) (*catalog.InstanceType, *catalog.Offering) {
	opts := commitment.Options(r.view.InstanceTypes(pool), options, need)
	if k := commitment.Pick(r.bill.roomNow(), opts, ""); k >= 0 {
		return opts[k].Type, opts[k].Offering
	}
	return nil, nil
}

// billBound is BoundResult.BillUSD: per bucket, the least fixed part and the most the
// commitments can cover at either end of it (a commitment starting or ending within it counts
// at its cheaper side), so that the floor holds whatever happens within the bucket.
func billBound(env *Env, b *BoundResult, cs []commitment.Commitment) float64 {
	od := map[string]float64{}
	perUnit := map[string]float64{}
	for _, p := range env.Pools {
		for _, it := range p.Types {
			for _, o := range it.Offerings {
				if o.CapacityType != apisv1.CapacityTypeOnDemand {
					continue
				}
				od[it.Name] = max(od[it.Name], o.Price)
				if u := commitment.Units(it.Name, it.Capacity[scheduling.CPU]/1000); u > 0 {
					f := commitment.Family(it.Name)
					perUnit[f] = max(perUnit[f], o.Price/u)
				}
			}
		}
	}
	look := func(m map[string]float64) func(string) float64 { return func(k string) float64 { return m[k] } }
	at := func(t time.Duration) (fixed, covered float64) {
		book := commitment.NewBook(cs, env.Start.Add(t))
		for _, c := range book.Commitments() {
			covered += c.MaxCovered(look(od), look(perUnit))
		}
		return book.Fixed(), covered
	}
	step := time.Duration(b.StepSeconds * float64(time.Second))
	total := 0.0
	end := time.Duration(b.EndHours * float64(time.Hour))
	for i, rate := range b.CostPerHour {
		from := time.Duration(i) * step
		to := min(from+step, end)
		if to <= from {
			break
		}
		f0, c0 := at(from)
		f1, c1 := at(to - time.Nanosecond)
		total += (to - from).Hours() * (min(f0, f1) + max(0, rate-max(c0, c1)))
	}
	return total
}

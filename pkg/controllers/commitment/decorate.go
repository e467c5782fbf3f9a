package commitment

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/commitment"
)

// Decorate returns cp pricing with the store's commitments (see the package doc); every other
// call goes to cp unchanged. A provider that is also an InterruptionQueue stays one.
func Decorate(cp cloudprovider.CloudProvider, s *Store) cloudprovider.CloudProvider {
	d := &decorator{CloudProvider: cp, store: s}
	if q, ok := cp.(cloudprovider.InterruptionQueue); ok {
		return &queueDecorator{decorator: d, InterruptionQueue: q}
	}
	return d
}

var (
	_ cloudprovider.HashStamper       = (*decorator)(nil)
	_ cloudprovider.NodePricer        = (*decorator)(nil)
	_ cloudprovider.InterruptionQueue = (*queueDecorator)(nil)
)

type decorator struct {
	cloudprovider.CloudProvider
	store *Store
}

type queueDecorator struct {
	*decorator
	cloudprovider.InterruptionQueue
}

// NodeClasses resolves the ambiguity between the two embedded interfaces.
func (q *queueDecorator) NodeClasses() []schema.GroupKind { return q.decorator.NodeClasses() }

// StampHash forwards to the provider when it is a cloudprovider.HashStamper.
func (d *decorator) StampHash(ctx context.Context, claim *apisv1.NodeClaim) (from, to string, err error) {
	if s, ok := d.CloudProvider.(cloudprovider.HashStamper); ok {
		return s.StampHash(ctx, claim)
	}
	return "", "", nil
}

// GetInstanceTypes prices each on-demand offering at what it adds to the bill now.
func (d *decorator) GetInstanceTypes(ctx context.Context, np *apisv1.NodePool) ([]*catalog.InstanceType, error) {
	its, err := d.CloudProvider.GetInstanceTypes(ctx, np)
	if err != nil {
		return nil, err
	}
	book := d.store.Book()
	if book == nil {
		return its, nil
	}
	return commitment.Reprice(its, book.Room(d.store.fleet(ctx, d.CloudProvider)), d.store.region), nil
}

// Create launches the claim's offerings cheapest first by what they add to the bill. Choices
// are made one launch at a time: the room is what the fleet and the launches before this one
// leave, and the offering this launch is expected to take is recorded before it runs.
func (d *decorator) Create(ctx context.Context, claim *apisv1.NodeClaim) (*apisv1.NodeClaim, error) {
	book := d.store.Book()
	if book == nil {
		return d.CloudProvider.Create(ctx, claim)
	}
	np, ok := d.store.cluster.NodePool(claim.Labels[apisv1.NodePoolLabelKey])
	if !ok {
		return d.CloudProvider.Create(ctx, claim)
	}
	its, err := d.CloudProvider.GetInstanceTypes(ctx, np)
	if err != nil {
		return d.CloudProvider.Create(ctx, claim)
	}
	byName := make(map[string]*catalog.InstanceType, len(its))
	for _, it := range its {
		byName[it.Name] = it
	}
	d.store.launchMu.Lock()
	d.store.expect(claim.Name, nil) // a retry of this launch chooses again, on the room without it
	room := book.Room(d.store.fleet(ctx, d.CloudProvider))
	if opts := claimOptions(claim, its); len(opts) > 0 {
		if k := commitment.Pick(room, opts, d.store.region); k >= 0 {
			in := commitment.InstanceOf(opts[k].Type, opts[k].Offering, d.store.region)
			d.store.expect(claim.Name, &in)
		}
	}
	d.store.launchMu.Unlock()
	under := cloudprovider.LaunchPricesFrom(ctx)
	ctx = cloudprovider.WithLaunchPrices(ctx, func(instanceType string, o *catalog.Offering) float64 {
		if p := commitment.Find(byName[instanceType], o.Zone, o.CapacityType, o.ReservationID); p != nil {
			if p.CapacityType == apisv1.CapacityTypeOnDemand {
				return commitment.MarginalPrice(room, byName[instanceType], p, d.store.region)
			}
			return p.Price
		}
		if under != nil {
			return under(instanceType, o)
		}
		return o.Price
	})
	out, err := d.CloudProvider.Create(ctx, claim)
	if err != nil {
		d.store.expect(claim.Name, nil)
		return out, err
	}
	// What it took, which may not be what was expected (an offering ran out).
	lab := out.Labels
	if it := byName[lab[apisv1.LabelInstanceType]]; it != nil {
		if o := commitment.Find(it, lab[apisv1.LabelZone], lab[apisv1.CapacityTypeLabelKey], lab[apisv1.LabelCapacityReservationID]); o != nil {
			in := commitment.InstanceOf(it, o, d.store.region)
			d.store.expect(claim.Name, &in)
		}
	}
	return out, nil
}

// claimOptions are the offerings a claim may launch as among the types: those its
// requirements allow, of types that hold its requests.
func claimOptions(claim *apisv1.NodeClaim, its []*catalog.InstanceType) []commitment.Option {
	reqs, requests, err := cloudprovider.ClaimRequest(claim)
	if err != nil {
		return nil
	}
	return commitment.Options(its, reqs, requests)
}

// NodePrices returns what removing each node saves on the bill: the fleet is the nodes not
// being deleted, each priced at its offering in its NodePool's instance types; a node being
// deleted, or whose offering is unknown, gets its list price (0 when unknown). Nil when nothing
// is committed: the offering prices stand.
func (d *decorator) NodePrices(ctx context.Context, nodes []cloudprovider.PricedNode) []float64 {
	book := d.store.Book()
	if book == nil {
		return nil
	}
	out := make([]float64, len(nodes))
	l := newListPrices(ctx, d.CloudProvider, d.store.cluster.NodePools())
	var fleet []commitment.Instance
	idx := make([]int, len(nodes))
	for i, n := range nodes {
		idx[i] = -1
		in, ok := l.instance(n.NodePool, n.InstanceType, n.Zone, n.CapacityType, n.ReservationID, d.store.region)
		if !ok {
			continue
		}
		out[i] = in.Price
		if !n.Deleting {
			idx[i] = len(fleet)
			fleet = append(fleet, in)
		}
	}
	bill := book.Bill(fleet)
	for i := range nodes {
		if idx[i] >= 0 && fleet[idx[i]].OnDemand {
			out[i] = book.RemovalFrom(bill, fleet, idx[i]) + fleet[idx[i]].Price/catalog.ReservedPriceDivisor
		}
	}
	return out
}

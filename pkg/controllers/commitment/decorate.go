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

// Create launches the claim's offerings cheapest first by what they add to the bill.
func (d *decorator) Create(ctx context.Context, claim *apisv1.NodeClaim) (*apisv1.NodeClaim, error) {
	book := d.store.Book()
	if book == nil {
		return d.CloudProvider.Create(ctx, claim)
	}
	var np *apisv1.NodePool
	for _, p := range d.store.cluster.NodePools() {
		if p.Name == claim.Labels[apisv1.NodePoolLabelKey] {
			np = p
		}
	}
	if np == nil {
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
	room := book.Room(d.store.fleet(ctx, d.CloudProvider))
	under := cloudprovider.LaunchPricesFrom(ctx)
	ctx = cloudprovider.WithLaunchPrices(ctx, func(instanceType string, o *catalog.Offering) float64 {
		it := byName[instanceType]
		if it != nil {
			for i := range it.Offerings {
				p := &it.Offerings[i]
				if p.Zone == o.Zone && p.CapacityType == o.CapacityType && p.ReservationID == o.ReservationID {
					if p.CapacityType == apisv1.CapacityTypeOnDemand {
						return commitment.MarginalPrice(room, it, p, d.store.region)
					}
					return p.Price
				}
			}
		}
		if under != nil {
			return under(instanceType, o)
		}
		return o.Price
	})
	return d.CloudProvider.Create(ctx, claim)
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
	for i := range nodes {
		if idx[i] >= 0 && fleet[idx[i]].OnDemand {
			out[i] = book.Removal(fleet, idx[i]) + fleet[idx[i]].Price/catalog.ReservedPriceDivisor
		}
	}
	return out
}

package nodeoverlay

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
)

// Decorate returns cp with the store's overlays applied to GetInstanceTypes; every other call
// goes to cp unchanged. A provider that is also an InterruptionQueue stays one.
func Decorate(cp cloudprovider.CloudProvider, s *Store) cloudprovider.CloudProvider {
	d := &decorator{CloudProvider: cp, store: s}
	if q, ok := cp.(cloudprovider.InterruptionQueue); ok {
		return &queueDecorator{decorator: d, InterruptionQueue: q}
	}
	return d
}

var (
	_ cloudprovider.HashStamper       = (*decorator)(nil)
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

// Create launches with the overlaid prices: when an overlay prices an offering of the claim's
// NodePool, the provider ranks the claim's offerings by them (cloudprovider.LaunchPrices).
func (d *decorator) Create(ctx context.Context, claim *apisv1.NodeClaim) (*apisv1.NodeClaim, error) {
	// A decorator over this one that ranks by its own prices (commitments) computed them from
	// the overlaid ones: it wins.
	if d.store.Enabled() && cloudprovider.LaunchPricesFrom(ctx) == nil {
		pool := claim.Labels[apisv1.NodePoolLabelKey]
		if e := d.store.Evaluation(); e != nil && e.PricesOffers(pool) {
			ctx = cloudprovider.WithLaunchPrices(ctx, func(instanceType string, o *catalog.Offering) float64 {
				return e.Price(pool, instanceType, o)
			})
		}
	}
	return d.CloudProvider.Create(ctx, claim)
}

func (d *decorator) GetInstanceTypes(ctx context.Context, np *apisv1.NodePool) ([]*catalog.InstanceType, error) {
	its, err := d.CloudProvider.GetInstanceTypes(ctx, np)
	if err != nil {
		return nil, err
	}
	out, err := d.store.apply(np.Name, its)
	if err != nil {
		return nil, fmt.Errorf("applying nodeoverlays: %w", err)
	}
	return out, nil
}

// Once reads the cluster's NodeOverlays, evaluates them once and returns cp with them applied,
// for a command that reads the cluster once and decides as the controller would (tenon
// explain). The overlays that are not applied are returned, one line each.
func Once(ctx context.Context, r client.Reader, cp cloudprovider.CloudProvider) (cloudprovider.CloudProvider, []string, error) {
	objs, err := listOverlays(ctx, r)
	if err != nil {
		return nil, nil, err
	}
	e, errs := Evaluate(ctx, r, cp, objs)
	s := NewStore(true)
	s.set(e)
	problems := e.Problems()
	for _, err := range errs {
		problems = append(problems, err.Error())
	}
	return Decorate(cp, s), problems, nil
}

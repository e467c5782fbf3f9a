package commitment

import (
	"context"
	"sync"
	"time"

	"k8s.io/utils/clock"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/commitment"
	"github.com/tenon-sh/tenon/pkg/state"
)

// Store holds the valid Commitments and the cluster whose fleet consumes them.
type Store struct {
	cluster *state.Cluster
	clock   clock.Clock
	region  string

	mu          sync.RWMutex
	commitments []commitment.Commitment
	onChange    func()

	// launchMu orders launches' choices; inflight holds what each claim being launched was
	// expected to take, until the mirror sees it launched (fleet): the launches of one batch
	// run at once, and each must see the room the ones before it took.
	launchMu sync.Mutex
	inflight map[string]inflightLaunch
}

// inflightLaunch is a launch's expected instance, and when it was recorded.
type inflightLaunch struct {
	in commitment.Instance
	at time.Time
}

// inflightTTL is how long a launch's expectation counts while its claim is not seen launched.
const inflightTTL = 2 * time.Minute

// NewStore returns an empty store over the cluster's mirror; region is the cluster's region
// ("" when unknown: a commitment's region then matches).
func NewStore(cluster *state.Cluster, clk clock.Clock, region string) *Store {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Store{cluster: cluster, clock: clk, region: region, inflight: map[string]inflightLaunch{}}
}

// OnChange sets what is called when the set of commitments changes (to wake the provisioner).
func (s *Store) OnChange(f func()) { s.onChange = f }

// set replaces the commitments.
func (s *Store) set(cs []commitment.Commitment) {
	s.mu.Lock()
	s.commitments = cs
	f := s.onChange
	s.mu.Unlock()
	if f != nil {
		f()
	}
}

// Book returns the commitments active now; nil when none is.
func (s *Store) Book() *commitment.Book {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	cs := s.commitments
	s.mu.RUnlock()
	if len(cs) == 0 {
		return nil
	}
	b := commitment.NewBook(cs, s.clock.Now())
	if b.Empty() {
		return nil
	}
	return b
}

// listPrices looks up, per NodePool, the prices the planning cloud serves (overlays applied),
// fetching each pool's instance types once.
type listPrices struct {
	ctx   context.Context
	cloud cloudprovider.CloudProvider
	pools map[string]*apisv1.NodePool
	types map[string]map[string]*catalog.InstanceType
}

func newListPrices(ctx context.Context, cloud cloudprovider.CloudProvider, pools []*apisv1.NodePool) *listPrices {
	l := &listPrices{ctx: ctx, cloud: cloud, pools: map[string]*apisv1.NodePool{}, types: map[string]map[string]*catalog.InstanceType{}}
	for _, np := range pools {
		l.pools[np.Name] = np
	}
	return l
}

// instance describes a node of the pool bought as (type, zone, capacity type) for the bill;
// false when the pool or the offering is unknown.
func (l *listPrices) instance(pool, typ, zone, ct, reservation, region string) (commitment.Instance, bool) {
	byName, ok := l.types[pool]
	if !ok {
		byName = map[string]*catalog.InstanceType{}
		if np := l.pools[pool]; np != nil {
			if its, err := l.cloud.GetInstanceTypes(l.ctx, np); err == nil {
				for _, it := range its {
					byName[it.Name] = it
				}
			}
		}
		l.types[pool] = byName
	}
	it := byName[typ]
	if o := commitment.Find(it, zone, ct, reservation); o != nil {
		return commitment.InstanceOf(it, o, region), true
	}
	return commitment.Instance{}, false
}

// fleet returns the launched claims tenon manages that are not being deleted, and the claims
// being launched at what they are expected to take, as the bill sees them.
func (s *Store) fleet(ctx context.Context, cloud cloudprovider.CloudProvider) []commitment.Instance {
	l := newListPrices(ctx, cloud, s.cluster.NodePools())
	var out []commitment.Instance
	seen := map[string]bool{}
	for _, nc := range s.cluster.NodeClaims() {
		seen[nc.Name] = nc.Status.ProviderID == "" && nc.DeletionTimestamp == nil
		if nc.DeletionTimestamp != nil || nc.Status.ProviderID == "" || !cloudprovider.IsManaged(cloud, nc) {
			continue
		}
		lab := nc.Labels
		if in, ok := l.instance(lab[apisv1.NodePoolLabelKey], lab[apisv1.LabelInstanceType], lab[apisv1.LabelZone],
			lab[apisv1.CapacityTypeLabelKey], lab[apisv1.LabelCapacityReservationID], s.region); ok {
			out = append(out, in)
		}
	}
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, f := range s.inflight {
		launching, known := seen[name]
		switch {
		case known && !launching, now.Sub(f.at) > inflightTTL:
			delete(s.inflight, name) // launched (counted above), deleted, or never seen
		default:
			out = append(out, f.in)
		}
	}
	return out
}

// expect records what a claim's launch is expected to take (nil: forget it).
func (s *Store) expect(claim string, in *commitment.Instance) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in == nil {
		delete(s.inflight, claim)
		return
	}
	s.inflight[claim] = inflightLaunch{in: *in, at: s.clock.Now()}
}

// resync is how often the controller re-evaluates without a change to a Commitment.
const resync = 30 * time.Second

package simulated

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
)

// ProviderName is what Provider.Name returns.
const ProviderName = "simulated"

// Options configure New.
type Options struct {
	// Client reads SimNodeClasses and Nodes and writes SimInstances and Nodes. Required. A
	// manager's cached client is fine.
	Client client.Client
	// Reader reads SimInstances, which must not come from a stale cache. Default: Client.
	// With a manager, pass mgr.GetAPIReader().
	Reader client.Reader
	// Clock tells the time. Default: time.Now.
	Clock func() time.Time
	// IDSeed seeds instance IDs. Default: random.
	IDSeed uint64
	// Unavailable, when set, is tenon's record of offerings that recently ran out of capacity
	// or were interrupted: Create does not launch through them, as a real provider skips the
	// offerings its unavailable-offerings cache holds. Pass the cache the provisioner applies.
	Unavailable OfferingAvailability
}

// OfferingAvailability says whether an offering is marked unavailable;
// *cloudprovider.UnavailableOfferings implements it.
type OfferingAvailability interface {
	IsUnavailable(instanceType, zone, capacityType string) bool
}

// Provider is the simulated cloud provider. It is safe for concurrent use.
type Provider struct {
	client client.Client
	reader client.Reader
	clock  func() time.Time
	wake   chan struct{}
	avoid  func(cloudprovider.Offering) bool

	mu       sync.Mutex
	cloud    *cloud.Cloud
	restored bool
	classes  map[string]*resolvedClass   // by SimNodeClass name
	meta     map[string]*instanceMeta    // by instance ID
	regions  map[string]*catalog.Catalog // plain catalogs for instances whose class is gone
	queue    messageQueue
}

// instanceMeta is what the provider keeps about an instance beyond the model: what its Node
// registers with, what was stamped on it, and what has been done on the API server.
type instanceMeta struct {
	nodeLabels    map[string]string
	taints        []corev1.Taint
	startupTaints []corev1.Taint
	hash          string
	imageID       string
	// recorded is set once the SimInstance exists; the Kubelet leaves the instance alone
	// until then.
	recorded bool
	// status is the SimInstance status last written (or read at restore).
	status simv1alpha1.SimInstanceStatus
	// node progress, as the Kubelet last saw it
	nodeCreated    bool
	devicesChecked bool
	nodeDeleted    bool
	// recordGone is set when the SimInstance was seen deleted (by hand, or by the Kubelet
	// itself once the instance terminated): the Kubelet's next pass makes a live instance vanish.
	recordGone bool
}

var (
	_ cloudprovider.CloudProvider     = (*Provider)(nil)
	_ cloudprovider.InterruptionQueue = (*Provider)(nil)
)

// New returns a provider. It touches the API server only on first use, when it rebuilds its
// state from the SimInstance objects, so it can be built before a manager's caches start.
func New(opts Options) (*Provider, error) {
	if opts.Client == nil {
		return nil, fmt.Errorf("simulated: Options.Client is required")
	}
	p := &Provider{
		client:  opts.Client,
		reader:  opts.Reader,
		clock:   opts.Clock,
		wake:    make(chan struct{}, 1),
		classes: map[string]*resolvedClass{},
		meta:    map[string]*instanceMeta{},
		regions: map[string]*catalog.Catalog{},
	}
	if p.reader == nil {
		p.reader = opts.Client
	}
	if p.clock == nil {
		p.clock = time.Now
	}
	if u := opts.Unavailable; u != nil {
		p.avoid = func(o cloudprovider.Offering) bool { return u.IsUnavailable(o.InstanceType, o.Zone, o.CapacityType) }
	}
	seed := opts.IDSeed
	if seed == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		seed = binary.LittleEndian.Uint64(b[:])
	}
	p.cloud = cloud.New(cloud.Options{IDSeed: seed})
	return p, nil
}

// Name returns "simulated".
func (p *Provider) Name() string { return ProviderName }

// NodeClasses is the one NodeClass kind the simulated cloud launches from: SimNodeClass.
var NodeClasses = cloudprovider.Serving{{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind}}

// NodeClasses returns the kinds the provider serves (the package variable NodeClasses).
func (p *Provider) NodeClasses() []schema.GroupKind { return NodeClasses }

// now reads the clock, truncated to the microsecond precision the SimInstance objects keep, so
// that what is persisted and what the model holds are the same instants.
func (p *Provider) now() time.Time { return p.clock().Truncate(time.Microsecond) }

// recordDeleted notes that the SimInstance called id was deleted and wakes the Kubelet, which
// makes the instance vanish as a cloud instance terminated behind tenon's back would: its Node
// goes, and Get and List stop returning it.
func (p *Provider) recordDeleted(id string) {
	p.mu.Lock()
	if m := p.meta[id]; m != nil && m.recorded {
		m.recordGone = true
	}
	p.mu.Unlock()
	p.poke()
}

// poke wakes the Kubelet.
func (p *Provider) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// ready rebuilds the model from the SimInstance objects once; callers hold p.mu.
func (p *Provider) ready(ctx context.Context) error {
	if p.restored {
		return nil
	}
	if err := p.restore(ctx); err != nil {
		return fmt.Errorf("simulated: restoring instances: %w", err)
	}
	p.restored = true
	return nil
}

// advance brings the model to now and queues the interruption messages it emitted; callers hold
// p.mu.
func (p *Provider) advance(now time.Time) {
	for _, e := range p.cloud.Advance(now) {
		if e.Kind == cloud.EventMessage {
			p.queue.add(e.Message)
		}
	}
}

// lookup returns the instance behind a provider ID unless it has terminated; callers hold p.mu.
func (p *Provider) lookup(providerID string) (cloud.Instance, error) {
	_, _, id, err := cloud.ParseProviderID(providerID)
	if err != nil {
		return cloud.Instance{}, cloudprovider.NewNodeClaimNotFoundError(providerID, err)
	}
	inst, ok := p.cloud.Instance(id)
	if !ok || inst.State == cloud.Terminated {
		return cloud.Instance{}, cloudprovider.NewNodeClaimNotFoundError(providerID, nil)
	}
	return inst, nil
}

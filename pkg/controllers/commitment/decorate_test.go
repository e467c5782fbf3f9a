package commitment

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/commitment"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/state"
)

// launcher is a provider that serves one type, m5.xlarge, on demand and spot, and launches a
// claim as the cheapest of its offerings by the launch prices it is given, slowly, so that
// launches overlap.
type launcher struct {
	cloudprovider.CloudProvider // nil: only the methods below are called
	it                          *catalog.InstanceType
	mu                          sync.Mutex
	n                           int
}

func (l *launcher) Name() string { return "test" }
func (l *launcher) NodeClasses() []schema.GroupKind {
	return []schema.GroupKind{{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind}}
}
func (l *launcher) GetInstanceTypes(context.Context, *apisv1.NodePool) ([]*catalog.InstanceType, error) {
	return []*catalog.InstanceType{l.it}, nil
}

func (l *launcher) Create(ctx context.Context, claim *apisv1.NodeClaim) (*apisv1.NodeClaim, error) {
	prices := cloudprovider.LaunchPricesFrom(ctx)
	best := -1
	for i := range l.it.Offerings {
		if best < 0 || prices(l.it.Name, &l.it.Offerings[i]) < prices(l.it.Name, &l.it.Offerings[best]) {
			best = i
		}
	}
	time.Sleep(20 * time.Millisecond)
	l.mu.Lock()
	l.n++
	id := l.n
	l.mu.Unlock()
	out := claim.DeepCopy()
	o := l.it.Offerings[best]
	out.Labels[apisv1.LabelInstanceType], out.Labels[apisv1.LabelZone], out.Labels[apisv1.CapacityTypeLabelKey] = l.it.Name, o.Zone, o.CapacityType
	out.Status.ProviderID = fmt.Sprintf("test:///i-%d", id)
	return out, nil
}

// Three claims launched at once with room for one covered on-demand node: one takes it, the
// other two launch as spot — each launch chooses on the room the ones before it took.
func TestLaunchesTakeTheRoomInTurn(t *testing.T) {
	var capacity scheduling.Resources
	capacity[scheduling.CPU], capacity[scheduling.Memory], capacity[scheduling.Pods] = 4000, 16<<30, 58
	it := &catalog.InstanceType{Name: "m5.xlarge", Capacity: capacity, Requirements: scheduling.NewRequirements(
		scheduling.In(apisv1.LabelInstanceType, "m5.xlarge")), Offerings: []catalog.Offering{
		{Zone: "us-east-1a", CapacityType: apisv1.CapacityTypeOnDemand, Price: 0.192, Available: true},
		{Zone: "us-east-1a", CapacityType: apisv1.CapacityTypeSpot, Price: 0.07, Available: true},
	}}
	clk := clocktesting.NewFakeClock(time.Now())
	cluster := state.NewCluster(clk)
	ref := &apisv1.NodeClassReference{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind, Name: "default"}
	np := &apisv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	np.Spec.Template.Spec.NodeClassRef = ref
	cluster.UpdateNodePool(np)
	store := NewStore(cluster, clk, "")
	store.set([]commitment.Commitment{{Name: "sp", Kind: commitment.ComputeSavingsPlan, Hourly: 0.14, Default: 0.3}})
	cloud := &launcher{it: it}
	d := Decorate(cloud, store)
	var wg sync.WaitGroup
	got := make([]string, 3)
	for i := range got {
		claim := &apisv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c%d", i), Labels: map[string]string{apisv1.NodePoolLabelKey: "p"}}}
		claim.Spec.NodeClassRef = ref
		claim.Spec.Requirements = []apisv1.NodeSelectorRequirementWithMinValues{
			{Key: apisv1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.xlarge"}},
			{Key: apisv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{apisv1.CapacityTypeSpot, apisv1.CapacityTypeOnDemand}},
		}
		claim.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := d.Create(context.Background(), claim)
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = out.Labels[apisv1.CapacityTypeLabelKey]
		}()
	}
	wg.Wait()
	onDemand := 0
	for _, ct := range got {
		if ct == apisv1.CapacityTypeOnDemand {
			onDemand++
		}
	}
	if onDemand != 1 {
		t.Errorf("capacity types %v; want one on demand (the plan's room) and two spot", got)
	}
	// What the launches took counts until the mirror sees the claims launched.
	if n := len(store.fleet(context.Background(), cloud)); n != 3 {
		t.Errorf("the fleet counts %d launches; want the 3 expected", n)
	}
}

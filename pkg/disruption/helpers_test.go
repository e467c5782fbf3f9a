package disruption

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/snapshot"
	"github.com/tenon-sh/tenon/pkg/solver"
)

var (
	catOnce sync.Once
	cat     *catalog.Catalog
	catErr  error
	now     = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
)

// tb is what the fixtures need of a test: testing.T and rapid.T both have it.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

func aws(t tb) *catalog.Catalog {
	t.Helper()
	catOnce.Do(func() {
		cat, catErr = catalog.Load("us-east-1", catalog.WithZones("us-east-1a", "us-east-1b"),
			catalog.WithReservations(catalog.Reservation{ID: "cr-1", InstanceType: "m5.xlarge", Zone: "us-east-1a", Count: 4}))
	})
	if catErr != nil {
		t.Fatal(catErr)
	}
	return cat
}

// fixture builds disruption snapshots by hand.
type fixture struct {
	t     tb
	pools map[string]*apisv1.NodePool
	nodes []Node
	sn    []solver.Node
	pods  []*corev1.Pod // pending
	seq   int
}

func newFixture(t tb) *fixture { return &fixture{t: t, pools: map[string]*apisv1.NodePool{}} }

func (w *fixture) pool(name string, reqs []apisv1.NodeSelectorRequirementWithMinValues, mutate ...func(*apisv1.NodePool)) *apisv1.NodePool {
	np := &apisv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
	np.Spec.Template.Spec.Requirements = reqs
	np.Spec.Disruption.ConsolidationPolicy = apisv1.ConsolidationPolicyWhenEmptyOrUnderutilized
	np.Spec.Disruption.ConsolidateAfter = apisv1.NewNillableDuration(0)
	np.Spec.Disruption.Budgets = []apisv1.Budget{{Nodes: "100%"}}
	for _, m := range mutate {
		m(np)
	}
	w.pools[name] = np
	return np
}

func families(fs ...string) []apisv1.NodeSelectorRequirementWithMinValues {
	return []apisv1.NodeSelectorRequirementWithMinValues{{Key: apisv1.LabelInstanceFamily, Operator: corev1.NodeSelectorOpIn, Values: fs}}
}

func req(key string, op corev1.NodeSelectorOperator, vs ...string) apisv1.NodeSelectorRequirementWithMinValues {
	return apisv1.NodeSelectorRequirementWithMinValues{Key: key, Operator: op, Values: vs}
}

// node adds a node of the pool running as the given type, zone and capacity type with pods.
func (w *fixture) node(pool, typ, zone, ct string, pods ...*corev1.Pod) *Node {
	w.t.Helper()
	it, ok := aws(w.t).Get(typ)
	if !ok {
		w.t.Fatalf("no type %s", typ)
	}
	var off *catalog.Offering
	for i := range it.Offerings {
		o := &it.Offerings[i]
		if o.Zone == zone && o.CapacityType == ct {
			off = o
		}
	}
	if off == nil {
		w.t.Fatalf("%s has no %s offering in %s", typ, ct, zone)
	}
	w.seq++
	name := fmt.Sprintf("node-%d", w.seq)
	labels := it.NodeLabels(off)
	labels[apisv1.NodePoolLabelKey] = pool
	labels[apisv1.LabelHostname] = name
	for _, p := range pods {
		p.Spec.NodeName = name
	}
	w.sn = append(w.sn, solver.Node{Name: name, NodePool: pool, Labels: labels, Allocatable: it.Allocatable(), Pods: pods, Initialized: true, Price: off.Price})
	w.nodes = append(w.nodes, Node{Name: name, NodeClaim: name, NodePool: pool, InstanceType: typ, Zone: zone, CapacityType: ct,
		ReservationID: off.ReservationID, Price: off.Price, CreatedAt: now.Add(-24 * time.Hour), Initialized: true})
	return &w.nodes[len(w.nodes)-1]
}

func pod(cpu, mem string, labels ...string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", podSeq()), Namespace: "default", Labels: map[string]string{}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for i := 0; i+1 < len(labels); i += 2 {
		p.Labels[labels[i]] = labels[i+1]
	}
	return p
}

var seqMu sync.Mutex
var seqN int

func podSeq() int {
	seqMu.Lock()
	defer seqMu.Unlock()
	seqN++
	return seqN
}

func (w *fixture) snapshot() *Snapshot {
	w.t.Helper()
	s := &Snapshot{Solver: &solver.Snapshot{Nodes: w.sn, Pods: w.pods}, NodePools: w.pools, Nodes: w.nodes, Now: now}
	for _, name := range slices.Sorted(maps.Keys(w.pools)) {
		np := w.pools[name]
		sp, err := snapshot.NodePool(np, aws(w.t).Types, snapshot.Usage{})
		if err != nil {
			w.t.Fatal(err)
		}
		s.Solver.NodePools = append(s.Solver.NodePools, sp)
	}
	return s
}

func decide(t testing.TB, s *Snapshot, opts Options) *Decision {
	t.Helper()
	d, err := Decide(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func skipOf(d *Decision, node string) SkipReason {
	for _, s := range d.Skips {
		if s.Node == node {
			return s.Reason
		}
	}
	return ""
}

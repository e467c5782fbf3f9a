package simulated_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-sh/tenon/internal/controlplane"
	"github.com/tenon-sh/tenon/internal/controlplane/testenv"
	"github.com/tenon-sh/tenon/pkg/apis/crds"
	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
)

// env is a control plane shared by the subtests of one test, with a client for tenon's kinds.
type env struct {
	cp     *controlplane.ControlPlane
	client client.Client
	scheme *runtime.Scheme
}

func startEnv(t *testing.T) *env {
	t.Helper()
	all, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	cp := testenv.Start(t, controlplane.Options{Scheduler: true, ControllerManager: true, Kwok: true, CRDs: all})
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apisv1.AddToScheme, simv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(cp.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return &env{cp: cp, client: c, scheme: scheme}
}

// clock is a wall clock that a test can move forward.
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *clock) Skip(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// provider builds a provider on the env's client and runs its Kubelet until stop is called or
// the test ends.
func (e *env) provider(t *testing.T, now func() time.Time) (p *simulated.Provider, stop func()) {
	t.Helper()
	p, err := simulated.New(simulated.Options{Client: e.client, Clock: now})
	if err != nil {
		t.Fatal(err)
	}
	k := p.Kubelet()
	k.Resync = 500 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := k.Start(ctx); err != nil {
			t.Errorf("kubelet: %v", err)
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return p, stop
}

func dur(s string) *metav1.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return &metav1.Duration{Duration: d}
}

// fastSpec is a SimNodeClass spec with short delays.
func fastSpec() simv1alpha1.SimNodeClassSpec {
	return simv1alpha1.SimNodeClassSpec{
		BootDelay: dur("200ms"), RegistrationDelay: dur("100ms"), DevicePluginDelay: dur("300ms"),
	}
}

func (e *env) nodeClass(t *testing.T, name string, spec simv1alpha1.SimNodeClassSpec) *simv1alpha1.SimNodeClass {
	t.Helper()
	nc := &simv1alpha1.SimNodeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
	if err := e.client.Create(context.Background(), nc); err != nil {
		t.Fatal(err)
	}
	return nc
}

func req(key string, op corev1.NodeSelectorOperator, values ...string) apisv1.NodeSelectorRequirementWithMinValues {
	return apisv1.NodeSelectorRequirementWithMinValues{Key: key, Operator: op, Values: values}
}

// claim creates a NodeClaim object of NodePool "default" for the SimNodeClass nodeClass.
func (e *env) claim(t *testing.T, name, nodeClass string, reqs ...apisv1.NodeSelectorRequirementWithMinValues) *apisv1.NodeClaim {
	t.Helper()
	nc := &apisv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{apisv1.NodePoolLabelKey: "default", "team": "a"}},
		Spec: apisv1.NodeClaimSpec{
			Requirements: reqs,
			NodeClassRef: &apisv1.NodeClassReference{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind, Name: nodeClass},
			Resources: apisv1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("500m"),
			}},
			Taints:        []corev1.Taint{{Key: "dedicated", Value: "a", Effect: corev1.TaintEffectNoSchedule}},
			StartupTaints: []corev1.Taint{{Key: "startup", Effect: corev1.TaintEffectNoSchedule}},
		},
	}
	if err := e.client.Create(context.Background(), nc); err != nil {
		t.Fatal(err)
	}
	return nc
}

func nodePool(nodeClass string, reqs ...apisv1.NodeSelectorRequirementWithMinValues) *apisv1.NodePool {
	return &apisv1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: apisv1.NodePoolSpec{Template: apisv1.NodeClaimTemplate{Spec: apisv1.NodeClaimTemplateSpec{
			Requirements: reqs,
			NodeClassRef: &apisv1.NodeClassReference{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind, Name: nodeClass},
		}}},
	}
}

// eventually polls cond every 20ms until it holds or 20s pass; what describes the last state.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		ok, state := cond()
		last = state
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: %v (last: %s)", what, err, last)
	}
}

func (e *env) node(name string) (*corev1.Node, error) {
	n := &corev1.Node{}
	return n, e.client.Get(context.Background(), types.NamespacedName{Name: name}, n)
}

// waitNode waits for the Node called name and returns it.
func (e *env) waitNode(t *testing.T, name string) *corev1.Node {
	t.Helper()
	var n *corev1.Node
	eventually(t, "node "+name+" appears", func() (bool, string) {
		var err error
		n, err = e.node(name)
		return err == nil, fmt.Sprint(err)
	})
	return n
}

func (e *env) waitNodeGone(t *testing.T, name string) {
	t.Helper()
	eventually(t, "node "+name+" is deleted", func() (bool, string) {
		_, err := e.node(name)
		return client.IgnoreNotFound(err) == nil && err != nil, fmt.Sprint(err)
	})
}

func (e *env) simInstance(name string) (*simv1alpha1.SimInstance, error) {
	si := &simv1alpha1.SimInstance{}
	return si, e.client.Get(context.Background(), types.NamespacedName{Name: name}, si)
}

func instanceID(t *testing.T, providerID string) string {
	t.Helper()
	_, _, id, err := cloud.ParseProviderID(providerID)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

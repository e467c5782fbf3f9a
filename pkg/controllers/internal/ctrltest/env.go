package ctrltest

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/tenon-sh/tenon/internal/controlplane"
	"github.com/tenon-sh/tenon/internal/controlplane/testenv"
	"github.com/tenon-sh/tenon/pkg/apis/crds"
	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	apisv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/v1alpha1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/garbagecollection"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/lifecycle"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/termination"
	"github.com/tenon-sh/tenon/pkg/controllers/nodepool/status"
)

// setLogger sets controller-runtime's logger once per test binary: TENON_TEST_LOGS=1 shows the
// controllers' logs.
var setLogger sync.Once

// Env is a control plane with an uncached client for tenon's kinds and the core kinds.
type Env struct {
	CP     *controlplane.ControlPlane
	Client client.Client
	Scheme *runtime.Scheme
}

// Start starts a control plane (scheduler, controller-manager and kwok included) with every
// embedded CRD installed; it is stopped when t ends. It fails t when the control-plane
// binaries are missing.
func Start(t *testing.T) *Env {
	t.Helper()
	setLogger.Do(func() {
		if os.Getenv("TENON_TEST_LOGS") != "" {
			ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stderr)))
		} else {
			// Without a logger controller-runtime prints a warning with a stack 30 s in,
			// which reads like a failure in the test's output.
			ctrl.SetLogger(logr.Discard())
		}
	})
	all, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	cp := testenv.Start(t, controlplane.Options{Scheduler: true, ControllerManager: true, Kwok: true, CRDs: all})
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apisv1.AddToScheme, apisv1alpha1.AddToScheme, simv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(cp.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return &Env{CP: cp, Client: c, Scheme: scheme}
}

// Options configure the controllers of a manager. Zero fields take the controllers'
// defaults, except the ones FastOptions sets.
type Options struct {
	Lifecycle   lifecycle.Options
	Termination termination.Options
	GC          garbagecollection.Options
	Status      status.Options
	// Setup, when set, adds more to the manager (another controller under test) before it
	// starts; m has the provider and the unavailable-offerings cache.
	Setup func(mgr manager.Manager, m *Manager) error
	// Launcher, when set, wraps the provider the lifecycle controller launches through (as the
	// operator gives it the provider decorated with NodeOverlays).
	Launcher func(cloudprovider.CloudProvider) cloudprovider.CloudProvider
}

// FastOptions are short delays for tests: launch retries from 100ms, drains polled every
// 200ms, instances every 100ms, evictions retried from 100ms to 500ms, garbage collection every
// 300ms with a 1s grace period, NodePools resynced every 2s with SimNodeClasses watched.
func FastOptions() Options {
	return Options{
		Lifecycle: lifecycle.Options{RetryBase: 100 * time.Millisecond, RetryMax: time.Second},
		Termination: termination.Options{
			DrainPollInterval: 200 * time.Millisecond, InstancePollInterval: 100 * time.Millisecond,
			EvictionRetryBase: 100 * time.Millisecond, EvictionRetryMax: 500 * time.Millisecond,
		},
		GC:     garbagecollection.Options{Interval: 300 * time.Millisecond, GracePeriod: time.Second},
		Status: status.Options{Resync: 2 * time.Second, NodeClasses: []client.Object{&simv1alpha1.SimNodeClass{}}},
	}
}

// Manager is a running controller-runtime manager with the simulated provider and the
// controllers.
type Manager struct {
	Provider    *simulated.Provider
	Unavailable *cloudprovider.UnavailableOfferings
	// BeforeRegister is the lifecycle's registration hook (lifecycle.Deps.BeforeRegister);
	// Options.Setup may set it (to the provisioner's).
	BeforeRegister func(ctx context.Context, claim *apisv1.NodeClaim, node *corev1.Node)
	stop           func()
}

// StartManager starts a manager on the env's control plane with the simulated provider
// (simulated.SetupWithManager) and the lifecycle, termination, garbage collection and
// NodePool status controllers. It is stopped when t ends, or by Stop.
func (e *Env) StartManager(t *testing.T, opts Options) *Manager {
	t.Helper()
	mo := testenv.ManagerOptions(e.Scheme)
	mo.Controller.RecoverPanic = ptr.To(true)
	mgr, err := ctrl.NewManager(e.CP.RESTConfig(), mo)
	if err != nil {
		t.Fatal(err)
	}
	unavailable := cloudprovider.NewUnavailableOfferings(nil)
	p, err := simulated.New(simulated.Options{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Unavailable: unavailable})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	var launcher cloudprovider.CloudProvider = p
	if opts.Launcher != nil {
		launcher = opts.Launcher(p)
	}
	m := &Manager{Provider: p, Unavailable: unavailable}
	if err := lifecycle.Register(mgr, lifecycle.Deps{CloudProvider: launcher, UnavailableOfferings: unavailable,
		BeforeRegister: func(ctx context.Context, c *apisv1.NodeClaim, n *corev1.Node) {
			if m.BeforeRegister != nil {
				m.BeforeRegister(ctx, c, n)
			}
		}}, opts.Lifecycle); err != nil {
		t.Fatal(err)
	}
	if err := termination.Register(mgr, termination.Deps{CloudProvider: p}, opts.Termination); err != nil {
		t.Fatal(err)
	}
	if err := garbagecollection.Register(mgr, garbagecollection.Deps{CloudProvider: p}, opts.GC); err != nil {
		t.Fatal(err)
	}
	if err := status.Register(mgr, status.Deps{CloudProvider: p}, opts.Status); err != nil {
		t.Fatal(err)
	}
	if opts.Setup != nil {
		if err := opts.Setup(mgr, m); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	m.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}
	t.Cleanup(m.stop)
	return m
}

// Stop stops the manager and waits for it to return.
func (m *Manager) Stop() { m.stop() }

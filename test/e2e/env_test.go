package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/tenon-sh/tenon/internal/controlplane"
	"github.com/tenon-sh/tenon/internal/controlplane/testenv"
	"github.com/tenon-sh/tenon/pkg/apis/crds"
	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/lifecycle"
	"github.com/tenon-sh/tenon/pkg/controllers/provisioning"
	"github.com/tenon-sh/tenon/pkg/operator"
)

// env is a control plane with tenon running against it.
type env struct {
	t    *testing.T
	cp   *controlplane.ControlPlane
	kube client.Client
	ctx  context.Context
	stop context.CancelFunc // stops the running operator
	op   *operator.Operator
	opts operator.Options
}

func start(t *testing.T, opts operator.Options) *env {
	t.Helper()
	all, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	cp := testenv.Start(t, controlplane.Options{Scheduler: true, ControllerManager: true, Kwok: true, CRDs: all})
	kube, err := client.New(cp.RESTConfig(), client.Options{Scheme: operator.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if opts.Provisioning.BatchIdle == 0 {
		opts.Provisioning.BatchIdle = 300 * time.Millisecond
		opts.Provisioning.BatchMax = 3 * time.Second
	}
	if opts.Lifecycle.UnavailableOfferingsTTL == 0 {
		opts.Lifecycle.UnavailableOfferingsTTL = time.Minute
	}
	opts.MetricsAddr, opts.HealthAddr, opts.LeaderElection = "0", "0", false
	opts.AllowRepeatedControllers = true
	e := &env{t: t, cp: cp, kube: kube, ctx: ctx, opts: opts}
	e.startOperator()
	return e
}

// startOperator runs a fresh operator (as a restarted controller process would).
func (e *env) startOperator() {
	e.t.Helper()
	log := logr.Discard()
	if os.Getenv("TENON_TEST_LOGS") != "" {
		log = zap.New(zap.WriteTo(os.Stderr))
	}
	ctx, cancel := context.WithCancel(e.ctx)
	op, err := operator.New(ctx, e.cp.RESTConfig(), e.opts, log)
	if err != nil {
		e.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := op.Start(ctx); err != nil && ctx.Err() == nil {
			e.t.Errorf("operator stopped: %v", err)
		}
	}()
	e.op = op
	e.stop = func() { cancel(); <-done }
	e.t.Cleanup(e.stop)
}

func (e *env) create(objs ...client.Object) {
	e.t.Helper()
	for _, o := range objs {
		if err := e.kube.Create(e.ctx, o); err != nil {
			e.t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// eventually polls cond until it holds or timeout, failing with the last message.
func (e *env) eventually(timeout time.Duration, what string, cond func() (bool, string)) {
	e.t.Helper()
	var msg string
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		ok, m := cond()
		msg = m
		return ok, nil
	})
	if err != nil {
		e.t.Fatalf("%s did not happen within %s: %s\ncontrol plane logs:\n%s", what, timeout, msg, e.cp.LogTails(5))
	}
}

// podsRunning waits until every pod with the label app=name in namespace default is Running.
func (e *env) podsRunning(app string, n int, timeout time.Duration) []corev1.Pod {
	e.t.Helper()
	var pods corev1.PodList
	e.eventually(timeout, fmt.Sprintf("%d %s pods Running", n, app), func() (bool, string) {
		if err := e.kube.List(e.ctx, &pods, client.InNamespace("default"), client.MatchingLabels{"app": app}); err != nil {
			return false, err.Error()
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == n && len(pods.Items) == n, fmt.Sprintf("%d/%d running of %d", running, n, len(pods.Items))
	})
	return pods.Items
}

func (e *env) nodeClaims() []apisv1.NodeClaim {
	e.t.Helper()
	var l apisv1.NodeClaimList
	if err := e.kube.List(e.ctx, &l); err != nil {
		e.t.Fatal(err)
	}
	return l.Items
}

func (e *env) instances() []simv1alpha1.SimInstance {
	e.t.Helper()
	var l simv1alpha1.SimInstanceList
	if err := e.kube.List(e.ctx, &l); err != nil {
		e.t.Fatal(err)
	}
	return l.Items
}

func (e *env) nodes() []corev1.Node {
	e.t.Helper()
	var l corev1.NodeList
	if err := e.kube.List(e.ctx, &l); err != nil {
		e.t.Fatal(err)
	}
	return l.Items
}

// events returns the events recorded on an object whose reason is reason.
func (e *env) events(reason string) []corev1.Event {
	e.t.Helper()
	var l corev1.EventList
	if err := e.kube.List(e.ctx, &l); err != nil {
		e.t.Fatal(err)
	}
	var out []corev1.Event
	for _, ev := range l.Items {
		if ev.Reason == reason {
			out = append(out, ev)
		}
	}
	return out
}

// nodeClass is a SimNodeClass with quick delays.
func nodeClass(name string, mutate ...func(*simv1alpha1.SimNodeClass)) *simv1alpha1.SimNodeClass {
	nc := &simv1alpha1.SimNodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: simv1alpha1.SimNodeClassSpec{
			Zones:             []string{"us-east-1a", "us-east-1b"},
			BootDelay:         &metav1.Duration{Duration: 200 * time.Millisecond},
			RegistrationDelay: &metav1.Duration{Duration: 200 * time.Millisecond},
			DevicePluginDelay: &metav1.Duration{Duration: time.Second},
		},
	}
	for _, m := range mutate {
		m(nc)
	}
	return nc
}

// nodePool is a NodePool of the given instance families on a SimNodeClass, on demand.
func nodePool(name, class string, families []string, mutate ...func(*apisv1.NodePool)) *apisv1.NodePool {
	np := &apisv1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apisv1.NodePoolSpec{Template: apisv1.NodeClaimTemplate{Spec: apisv1.NodeClaimTemplateSpec{
			NodeClassRef: &apisv1.NodeClassReference{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind, Name: class},
			Requirements: []apisv1.NodeSelectorRequirementWithMinValues{
				{Key: apisv1.LabelInstanceFamily, Operator: corev1.NodeSelectorOpIn, Values: families},
				{Key: apisv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{apisv1.CapacityTypeOnDemand}},
			},
			ExpireAfter: apisv1.NewNillableDuration(720 * time.Hour),
		}}},
	}
	np.Spec.Disruption.ConsolidateAfter = apisv1.NewNillableDuration(0)
	for _, m := range mutate {
		m(np)
	}
	return np
}

func deployment(name string, replicas int32, cpu, mem string, mutate ...func(*corev1.PodSpec)) *appsv1.Deployment {
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.com/" + name, Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)},
	}}}}
	for _, m := range mutate {
		m(&spec)
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}}, Spec: spec},
		},
	}
}

func claimState(nc *apisv1.NodeClaim) string {
	var s []string
	for _, c := range nc.Status.Conditions {
		if c.Status == metav1.ConditionTrue {
			s = append(s, c.Type)
		}
	}
	return nc.Name + "[" + strings.Join(s, ",") + "]"
}

var (
	_ = provisioning.EventNominated
	_ = lifecycle.DefaultLaunchTimeout
)

// discard is the operator's logger in these tests: silent unless TENON_E2E_LOG is set.
func discard() logr.Logger {
	if os.Getenv("TENON_E2E_LOG") != "" {
		return zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stderr))
	}
	return logr.Discard()
}

func init() { ctrl.SetLogger(discard()) }

package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-sh/tenon/internal/controlplane"
	"github.com/tenon-sh/tenon/internal/controlplane/testenv"
	"github.com/tenon-sh/tenon/pkg/apis/crds"
	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/operator"
)

// cluster is a control plane with the chaos workload's objects and a client.
type cluster struct {
	t    *testing.T
	cp   *controlplane.ControlPlane
	kube client.Client
	ctx  context.Context
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	all, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	cp := testenv.Start(t, controlplane.Options{Scheduler: true, ControllerManager: true, Kwok: true, CRDs: all})
	t.Cleanup(func() {
		// A failure is read with the components' whole logs (kube-controller-manager's
		// PodDisruptionBudget status, kube-scheduler's attempts), which outlive the control plane.
		if !t.Failed() {
			return
		}
		kept := filepath.Join(os.TempDir(), fmt.Sprintf("tenon-chaos-%s-%d-controlplane", strings.ReplaceAll(t.Name(), "/", "_"), time.Now().Unix()))
		if err := os.CopyFS(kept, os.DirFS(filepath.Join(cp.WorkDir(), "logs"))); err != nil {
			t.Logf("keeping the control plane's logs: %v", err)
			return
		}
		t.Logf("control plane's logs kept in %s", kept)
	})
	cfg := cp.RESTConfig()
	kube, err := client.New(cfg, client.Options{Scheme: operator.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &cluster{t: t, cp: cp, kube: kube, ctx: ctx}
}

func (c *cluster) create(objs ...client.Object) {
	c.t.Helper()
	for _, o := range objs {
		if err := c.kube.Create(c.ctx, o); err != nil {
			c.t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// eventually polls cond every second until it holds, failing the test after timeout.
func (c *cluster) eventually(timeout time.Duration, what string, cond func() (bool, string)) {
	c.t.Helper()
	var msg string
	err := wait.PollUntilContextTimeout(c.ctx, time.Second, timeout, true, func(context.Context) (bool, error) {
		ok, m := cond()
		msg = m
		return ok, nil
	})
	if err != nil {
		c.t.Fatalf("%s did not happen within %s: %s\n%s", what, timeout, msg, c.notRunning(10))
	}
}

// notRunning describes up to n of the workload's pods that are not Running: phase, node,
// scheduling condition and the last event about each, so that a run that did not converge
// says why.
func (c *cluster) notRunning(n int) string {
	var pods corev1.PodList
	var events corev1.EventList
	if err := c.kube.List(c.ctx, &pods, client.InNamespace("default")); err != nil {
		return "listing pods: " + err.Error()
	}
	_ = c.kube.List(c.ctx, &events, client.InNamespace("default"))
	last := map[string]*corev1.Event{}
	for i := range events.Items {
		e := &events.Items[i]
		if e.InvolvedObject.Kind != "Pod" {
			continue
		}
		if prev := last[e.InvolvedObject.Name]; prev == nil || e.LastTimestamp.After(prev.LastTimestamp.Time) {
			last[e.InvolvedObject.Name] = e
		}
	}
	var b strings.Builder
	shown, left := 0, 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			continue
		}
		if shown == n {
			left++
			continue
		}
		shown++
		fmt.Fprintf(&b, "pod %s: %s, node %q, nominated %q, deleting %v", p.Name, p.Status.Phase, p.Spec.NodeName, p.Status.NominatedNodeName, p.DeletionTimestamp != nil)
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status != corev1.ConditionTrue {
				fmt.Fprintf(&b, "; PodScheduled %s %s: %s", cond.Status, cond.Reason, cond.Message)
			}
		}
		if e := last[p.Name]; e != nil {
			fmt.Fprintf(&b, "; last event %s %s from %s: %s", e.Type, e.Reason, e.Source.Component, e.Message)
		}
		b.WriteString("\n")
	}
	if left > 0 {
		fmt.Fprintf(&b, "and %d more pods not Running\n", left)
	}
	return b.String()
}

// The chaos workload: two NodePools with small numeric budgets, and Deployments of four
// shapes, one spread over zones and one under a PodDisruptionBudget.
const (
	poolGeneral   = "general"
	poolMemory    = "memory"
	budgetGeneral = 3
	budgetMemory  = 2
	pdbName       = "guarded"
)

// shape is one Deployment of the workload; share is its fraction of the pods.
type shape struct {
	name     string
	cpu, mem string
	share    float64
	pool     string
	spread   bool
}

var shapes = []shape{
	{name: "cpu", cpu: "1", mem: "1Gi", share: 0.35, pool: poolGeneral},
	{name: "mem", cpu: "500m", mem: "6Gi", share: 0.2, pool: poolMemory},
	{name: "spread", cpu: "500m", mem: "1Gi", share: 0.15, pool: poolGeneral, spread: true},
	{name: pdbName, cpu: "250m", mem: "512Mi", share: 0.3, pool: poolGeneral},
}

// replicas splits pods between the shapes, each getting at least one, and the PDB's at least
// four: below that, minAvailable 75% allows no disruption at all, and a node holding one of its
// pods could never be drained (as in Karpenter, without a terminationGracePeriod).
func replicas(pods int, frac float64) map[string]int32 {
	out := map[string]int32{}
	for _, s := range shapes {
		n := int32(float64(pods)*s.share*frac + 0.5)
		out[s.name] = max(n, 1)
	}
	out[pdbName] = max(out[pdbName], 4)
	return out
}

func nodeClass(mutate ...func(*simv1alpha1.SimNodeClass)) *simv1alpha1.SimNodeClass {
	nc := &simv1alpha1.SimNodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: simv1alpha1.SimNodeClassSpec{
			Zones:             []string{"us-east-1a", "us-east-1b", "us-east-1c"},
			BootDelay:         &metav1.Duration{Duration: 500 * time.Millisecond},
			RegistrationDelay: &metav1.Duration{Duration: 300 * time.Millisecond},
			DevicePluginDelay: &metav1.Duration{Duration: time.Second},
		},
	}
	for _, m := range mutate {
		m(nc)
	}
	return nc
}

func nodePool(name string, families []string, budget int) *apisv1.NodePool {
	np := &apisv1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apisv1.NodePoolSpec{Template: apisv1.NodeClaimTemplate{Spec: apisv1.NodeClaimTemplateSpec{
			NodeClassRef: &apisv1.NodeClassReference{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind, Name: "default"},
			Requirements: []apisv1.NodeSelectorRequirementWithMinValues{
				{Key: apisv1.LabelInstanceFamily, Operator: corev1.NodeSelectorOpIn, Values: families},
				{Key: apisv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{apisv1.CapacityTypeOnDemand}},
				{Key: apisv1.LabelInstanceCPU, Operator: corev1.NodeSelectorOpLt, Values: []string{"33"}},
			},
			ExpireAfter: apisv1.NewNillableDuration(720 * time.Hour),
		}}},
	}
	np.Spec.Disruption.ConsolidateAfter = apisv1.NewNillableDuration(0)
	np.Spec.Disruption.ConsolidationPolicy = apisv1.ConsolidationPolicyWhenEmptyOrUnderutilized
	np.Spec.Disruption.Budgets = []apisv1.Budget{{Nodes: fmt.Sprint(budget)}}
	return np
}

func deployment(s shape, n int32) *appsv1.Deployment {
	labels := map[string]string{"app": s.name}
	spec := corev1.PodSpec{
		NodeSelector:                  map[string]string{apisv1.NodePoolLabelKey: s.pool},
		TerminationGracePeriodSeconds: new(int64),
		Containers: []corev1.Container{{Name: "c", Image: "example.com/" + s.name, Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(s.cpu), corev1.ResourceMemory: resource.MustParse(s.mem)},
		}}},
	}
	if s.spread {
		spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
		}}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &n,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
}

// install creates the NodeClass, the NodePools (each changed by mutate), the
// PodDisruptionBudget and the Deployments.
func (c *cluster) install(nc *simv1alpha1.SimNodeClass, pods int, mutate ...func(*apisv1.NodePool)) {
	c.t.Helper()
	minAvailable := intstr.FromString("75%")
	general, memory := nodePool(poolGeneral, []string{"c5", "m5"}, budgetGeneral), nodePool(poolMemory, []string{"r5"}, budgetMemory)
	for _, m := range mutate {
		m(general)
		m(memory)
	}
	c.create(nc, general, memory,
		&policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: pdbName, Namespace: "default"},
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": pdbName}}},
		})
	for _, s := range shapes {
		c.create(deployment(s, replicas(pods, 1)[s.name]))
	}
}

// scale sets every Deployment's replicas.
func (c *cluster) scale(want map[string]int32) {
	c.t.Helper()
	for name, n := range want {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var d appsv1.Deployment
			if err := c.kube.Get(c.ctx, client.ObjectKey{Namespace: "default", Name: name}, &d); err != nil {
				return err
			}
			d.Spec.Replicas = &n
			return c.kube.Update(c.ctx, &d)
		})
		if err != nil {
			c.t.Fatalf("scaling %s: %v", name, err)
		}
	}
}

// running counts the workload's Running pods and all its pods.
func (c *cluster) running() (run, all int, err error) {
	var pods corev1.PodList
	if err := c.kube.List(c.ctx, &pods, client.InNamespace("default")); err != nil {
		return 0, 0, err
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		all++
		if p.Status.Phase == corev1.PodRunning {
			run++
		}
	}
	return run, all, nil
}

func total(r map[string]int32) int {
	n := 0
	for _, v := range r {
		n += int(v)
	}
	return n
}

// settled reports whether the cluster is at rest: every wanted pod Running, no NodeClaim being
// deleted or not yet initialized, no node tainted karpenter.sh/disrupted, every SimInstance
// Running.
func (c *cluster) settled(want int) (bool, string) {
	claims, nodes, ok, msg := c.atRest(want)
	if !ok {
		return false, msg
	}
	var insts simv1alpha1.SimInstanceList
	if err := c.kube.List(c.ctx, &insts); err != nil {
		return false, err.Error()
	}
	for _, in := range insts.Items {
		if in.Status.Phase != simv1alpha1.InstanceRunning {
			return false, fmt.Sprintf("instance %s is %s", in.Name, in.Status.Phase)
		}
	}
	if nodes != claims || len(insts.Items) != claims {
		return false, fmt.Sprintf("%d claims, %d nodes, %d instances", claims, nodes, len(insts.Items))
	}
	return true, ""
}

// atRest is what settled checks of the cluster, whatever cloud runs its instances: every
// wanted pod Running, no NodeClaim being deleted or not yet initialized, no node tainted
// karpenter.sh/disrupted. It returns how many NodeClaims and Nodes there are.
func (c *cluster) atRest(want int) (claims, nodes int, ok bool, msg string) {
	run, all, err := c.running()
	if err != nil {
		return 0, 0, false, err.Error()
	}
	if run != want || all != want {
		return 0, 0, false, fmt.Sprintf("%d/%d pods Running (%d wanted)", run, all, want)
	}
	var cl apisv1.NodeClaimList
	var nl corev1.NodeList
	if err := c.kube.List(c.ctx, &cl); err != nil {
		return 0, 0, false, err.Error()
	}
	if err := c.kube.List(c.ctx, &nl); err != nil {
		return 0, 0, false, err.Error()
	}
	for _, nc := range cl.Items {
		if nc.DeletionTimestamp != nil || !nc.IsTrue(apisv1.ConditionTypeInitialized) {
			return 0, 0, false, "NodeClaim " + nc.Name + " is being deleted or not initialized"
		}
	}
	for _, n := range nl.Items {
		if tainted(&n) {
			return 0, 0, false, "node " + n.Name + " is tainted " + apisv1.DisruptedTaintKey
		}
	}
	return len(cl.Items), len(nl.Items), true, ""
}

// converge waits until the cluster is settled and has stayed so, with the same nodes, for
// quiet (several disruption passes), so that consolidation has nothing left to do.
func (c *cluster) converge(want int, quiet, timeout time.Duration) {
	c.t.Helper()
	c.convergeWhen(func() (bool, string) { return c.settled(want) }, quiet, timeout)
}

// convergeWhen waits until settled holds and the nodes have stayed the same for quiet.
func (c *cluster) convergeWhen(settled func() (bool, string), quiet, timeout time.Duration) {
	c.t.Helper()
	var since time.Time
	var last string
	c.eventually(timeout, "convergence", func() (bool, string) {
		ok, msg := settled()
		if !ok {
			since = time.Time{}
			return false, msg
		}
		if names := c.nodeNames(); names != last || since.IsZero() {
			since, last = time.Now(), names
		}
		return time.Since(since) >= quiet, "settled, waiting for quiet"
	})
}

func (c *cluster) nodeNames() string {
	var nodes corev1.NodeList
	if err := c.kube.List(c.ctx, &nodes); err != nil {
		return err.Error()
	}
	names := make([]string, 0, len(nodes.Items))
	for _, n := range nodes.Items {
		names = append(names, n.Name)
	}
	return strings.Join(names, ",")
}

func tainted(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == apisv1.DisruptedTaintKey {
			return true
		}
	}
	return false
}

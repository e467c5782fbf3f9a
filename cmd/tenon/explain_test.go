package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-sh/tenon/internal/controlplane"
	"github.com/tenon-sh/tenon/internal/controlplane/testenv"
	"github.com/tenon-sh/tenon/pkg/apis/crds"
	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	apisv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/v1alpha1"
	"github.com/tenon-sh/tenon/pkg/operator"
)

// fixture writes a cluster tenon could have made, straight to an API server: objects with the
// status the controllers would have given them, and nothing running.
type fixture struct {
	t    *testing.T
	ctx  context.Context
	kube client.Client
	pool *apisv1.NodePool
	cp   *controlplane.ControlPlane
}

func newFixture(t *testing.T) *fixture {
	all, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	cp := testenv.Start(t, controlplane.Options{CRDs: all})
	kube, err := client.New(cp.RESTConfig(), client.Options{Scheme: operator.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, ctx: context.Background(), kube: kube, cp: cp}
	f.create(&simv1alpha1.SimNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: simv1alpha1.SimNodeClassSpec{Zones: []string{"us-east-1a"}}})
	np := &apisv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "general"}}
	np.Spec.Template.Spec.NodeClassRef = &apisv1.NodeClassReference{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind, Name: "default"}
	np.Spec.Template.Spec.Requirements = []apisv1.NodeSelectorRequirementWithMinValues{
		{Key: apisv1.LabelInstanceFamily, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5"}},
		{Key: apisv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{apisv1.CapacityTypeOnDemand}},
	}
	np.Spec.Template.Spec.ExpireAfter = apisv1.NewNillableDuration(720 * time.Hour)
	np.Spec.Disruption.ConsolidateAfter = apisv1.NewNillableDuration(0)
	np.Spec.Disruption.Budgets = []apisv1.Budget{{Nodes: "100%"}}
	f.create(np)
	f.pool = np // read back with its defaults by create
	f.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}})
	return f
}

func (f *fixture) create(o client.Object) {
	f.t.Helper()
	if err := f.kube.Create(f.ctx, o); err != nil {
		f.t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
	}
}

// node writes an initialized NodeClaim of the pool, running as typ on demand in us-east-1a,
// and its Ready Node.
func (f *fixture) node(name, typ string, cpu string) {
	f.t.Helper()
	labels := map[string]string{
		apisv1.NodePoolLabelKey: "general", apisv1.LabelInstanceType: typ, apisv1.LabelInstanceFamily: "m5",
		apisv1.LabelZone: "us-east-1a", apisv1.CapacityTypeLabelKey: apisv1.CapacityTypeOnDemand,
		apisv1.NodeInitializedLabelKey: "true", apisv1.NodeRegisteredLabelKey: "true", corev1.LabelHostname: name,
		apisv1.LabelArch: apisv1.ArchitectureAmd64, apisv1.LabelOS: apisv1.OSLinux,
	}
	pid := "sim://us-east-1/us-east-1a/i-" + name
	nc := &apisv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "general-" + name, Labels: labels, Annotations: map[string]string{
			apisv1.NodePoolHashAnnotationKey: f.pool.Hash(), apisv1.NodePoolHashVersionAnnotationKey: apisv1.NodePoolHashVersion}},
		Spec: apisv1.NodeClaimSpec{NodeClassRef: f.pool.Spec.Template.Spec.NodeClassRef, Requirements: f.pool.Spec.Template.Spec.Requirements,
			ExpireAfter: f.pool.Spec.Template.Spec.ExpireAfter},
	}
	f.create(nc)
	nc.Status.ProviderID, nc.Status.NodeName = pid, name
	for _, c := range apisv1.NodeClaimReadyDependents {
		nc.SetCondition(metav1.Condition{Type: c, Status: metav1.ConditionTrue, Reason: c}, time.Now())
	}
	if err := f.kube.Status().Update(f.ctx, nc); err != nil {
		f.t.Fatal(err)
	}
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("15Gi"), corev1.ResourcePods: resource.MustParse("58")}
	f.create(&corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1.NodeSpec{ProviderID: pid},
		Status:     corev1.NodeStatus{Capacity: res, Allocatable: res, Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	})
}

// pod writes a pod bound to node, requesting cpu.
func (f *fixture) pod(name, node, cpu string, annotations map[string]string) {
	f.t.Helper()
	f.create(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name, Annotations: annotations, CreationTimestamp: metav1.Now()},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "example.com/app",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}},
	})
}

func (f *fixture) explain(arg string, flags ...string) (string, error) {
	f.t.Helper()
	cmd := newRoot()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs(append([]string{"explain", arg, "--kubeconfig", f.cp.KubeconfigPath()}, flags...))
	err := cmd.Execute()
	return out.String(), err
}

func (f *fixture) mustExplain(arg string, want ...string) string {
	f.t.Helper()
	out, err := f.explain(arg)
	if err != nil {
		f.t.Fatalf("explain %s: %v", arg, err)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			f.t.Errorf("explain %s: want %q in:\n%s", arg, w, out)
		}
	}
	return out
}

func TestExplain(t *testing.T) {
	f := newFixture(t)
	f.node("big", "m5.2xlarge", "7910m")
	f.pod("lonely", "big", "1", nil)
	f.node("held", "m5.xlarge", "3920m")
	f.pod("precious", "held", "1", map[string]string{apisv1.DoNotDisruptAnnotationKey: "true"})
	f.create(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "byo"}, Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/i-byo"}})

	// An underutilized m5.2xlarge is replaced by an m5.large; its price and pod are shown.
	big := &apisv1.NodeClaim{}
	if err := f.kube.Get(f.ctx, client.ObjectKey{Name: "general-big"}, big); err != nil {
		t.Fatal(err)
	}
	expires := big.CreationTimestamp.Add(720 * time.Hour).UTC().Format(time.RFC3339)
	f.mustExplain("node/big",
		"Node:", "big (NodeClaim general-big, NodePool general)",
		"m5.2xlarge, on-demand, us-east-1a: $0.3840/h",
		"initialized, ready",
		"apps/lonely", "1000m cpu, 1Gi memory",
		"would be disrupted now, by Consolidation (Replace)",
		"Replacement:", "m5.large (on-demand, us-east-1a) of nodepool general for $0.0960/h",
		"Saves:", "$0.2880/h of $0.3840/h", "Evicts:", "1 pod(s)", "Expires:", expires)
	// The decision flags are the controller's: a savings floor above what it saves holds it.
	if out, err := f.explain("node/big", "--consolidation-min-savings-per-hour", "1"); err != nil || !strings.Contains(out, "left alone (BelowSavingsFloor)") {
		t.Errorf("explain with a $1/h savings floor: %v\n%s", err, out)
	}
	// With the NodeOverlay gate on, explain prices the node as the controller would: through
	// the cluster's NodeOverlays.
	price := "0.05"
	f.create(&apisv1alpha1.NodeOverlay{ObjectMeta: metav1.ObjectMeta{Name: "m5-2xl"}, Spec: apisv1alpha1.NodeOverlaySpec{
		Requirements: []apisv1alpha1.NodeSelectorRequirement{{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.2xlarge"}}},
		Price:        &price,
	}})
	if out, err := f.explain("node/big", "--feature-gates", "NodeOverlay=true"); err != nil || !strings.Contains(out, "m5.2xlarge, on-demand, us-east-1a: $0.0500/h") {
		t.Errorf("explain with an overlay pricing m5.2xlarge at $0.05/h: %v\n%s", err, out)
	}
	f.mustExplain("node/big", "m5.2xlarge, on-demand, us-east-1a: $0.3840/h") // the gate is off by default
	// A pod annotated do-not-disrupt holds its node.
	f.mustExplain("held", "left alone (DoNotDisruptPod)", "pod apps/precious is annotated karpenter.sh/do-not-disrupt",
		apisv1.DoNotDisruptAnnotationKey+"=true")
	// A node without a NodeClaim is never tenon's to disrupt.
	f.mustExplain("nodes/byo", "not managed by tenon", "never: it has no NodeClaim")

	// An empty node: emptiness acts first, and the pass ends before consolidation.
	f.node("idle", "m5.large", "1930m")
	f.mustExplain("node/idle", "would be disrupted now, by Emptiness (Delete)", "1 empty node(s) of nodepool general")
	f.mustExplain("node/big", "not considered this pass: it acted by Emptiness on 1 other node(s) first")

	// Drift: the template changes.
	stored := &apisv1.NodePool{}
	if err := f.kube.Get(f.ctx, client.ObjectKey{Name: "general"}, stored); err != nil {
		t.Fatal(err)
	}
	stored.Spec.Template.Labels = map[string]string{"team": "blue"}
	if err := f.kube.Update(f.ctx, stored); err != nil {
		t.Fatal(err)
	}
	f.mustExplain("node/idle", "Drift:", "the nodepool's template changed")

	// Bad input is an error naming what is wrong.
	for arg, want := range map[string]string{"node/nope": "node nope: node not found", "pod/x": "explain knows nodes only", "node/": "no node name"} {
		if _, err := f.explain(arg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("explain %s: error %v, want %q", arg, err, want)
		}
	}
}

func TestNodeArg(t *testing.T) {
	for arg, want := range map[string]string{"node/a": "a", "nodes/b": "b", "no/c": "c", "d": "d"} {
		if got, err := nodeArg(arg); err != nil || got != want {
			t.Errorf("nodeArg(%q) = %q, %v; want %q", arg, got, err, want)
		}
	}
	for _, arg := range []string{"pod/a", "node/", "deployment/x"} {
		if got, err := nodeArg(arg); err == nil {
			t.Errorf("nodeArg(%q) = %q, want an error", arg, got)
		}
	}
}

// TestExplainWholePodGroup: explain reads PodGroups as the controller does. A node running a
// worker of a PodGroup whose disruption mode is All is left alone while another worker's node
// is held, and says which; without the PodGroup it would be consolidated.
func TestExplainWholePodGroup(t *testing.T) {
	f := newFixture(t)
	f.node("w1", "m5.2xlarge", "7910m")
	f.node("w2", "m5.2xlarge", "7910m")
	group := "train"
	for i, node := range []string{"w1", "w2"} {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: fmt.Sprintf("worker-%d", i)},
			Spec: corev1.PodSpec{NodeName: node, SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: &group},
				Containers: []corev1.Container{{Name: "c", Image: "example.com/train",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}},
		}
		if node == "w2" {
			p.Annotations = map[string]string{apisv1.DoNotDisruptAnnotationKey: "true"}
		}
		f.create(p)
	}
	f.mustExplain("node/w1", "would be disrupted now, by Consolidation")

	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: group}}
	pg.Spec.SchedulingPolicy.Basic = &schedulingv1beta1.BasicSchedulingPolicy{}
	pg.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}
	f.create(pg)
	f.mustExplain("node/w1", "left alone (PodGroup)", "podgroup apps/train is disrupted only whole", "its node w2 cannot be")
}

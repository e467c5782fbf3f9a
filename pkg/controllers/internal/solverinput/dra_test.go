package solverinput

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated"
	"github.com/tenon-sh/tenon/pkg/solver"
	"github.com/tenon-sh/tenon/pkg/state"
)

// TestPodWithResourceClaimsIsUnschedulableOnTheControllerPath reads a cluster holding a pod with
// a dynamic resource claim and one without, as the provisioner does (Pending, then Snapshot
// with the simulated cloud's instance types), and solves: the claimed pod is unschedulable with
// the reason the provisioner publishes as its FailedScheduling event; the other gets a node.
func TestPodWithResourceClaimsIsUnschedulableOnTheControllerPath(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apisv1.AddToScheme, simv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	nc := &simv1alpha1.SimNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(nc).
		WithStatusSubresource(&simv1alpha1.SimNodeClass{}, &simv1alpha1.SimInstance{}).Build()
	cloud, err := simulated.New(simulated.Options{Client: kube})
	if err != nil {
		t.Fatal(err)
	}
	cluster := state.NewCluster(clocktesting.NewFakeClock(time.Now()))
	cluster.UpdateNodePool(&apisv1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: apisv1.NodePoolSpec{Template: apisv1.NodeClaimTemplate{Spec: apisv1.NodeClaimTemplateSpec{
			NodeClassRef: &apisv1.NodeClassReference{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind, Name: "default"},
			Requirements: []apisv1.NodeSelectorRequirementWithMinValues{{Key: apisv1.LabelInstanceFamily, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5"}}},
		}}},
	})
	requests := func(p *corev1.Pod) {
		p.Spec.Containers = []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}
	}
	cluster.UpdatePod(unschedulable("plain", requests))
	cluster.UpdatePod(unschedulable("claimed", requests, func(p *corev1.Pod) {
		p.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("one-gpu")}}
		p.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	}))

	src := &Source{Cluster: cluster, Cloud: cloud, Reader: kube, Schedulers: []string{corev1.DefaultSchedulerName}}
	pools := src.Pools()
	pods, rejected, _ := src.Pending(context.Background(), pools)
	if len(pods) != 2 || len(rejected) != 0 {
		t.Fatalf("pending %d, rejected %v", len(pods), rejected)
	}
	view, err := src.Snapshot(context.Background(), pools)
	if err != nil {
		t.Fatal(err)
	}
	view.Snapshot.Pods = pods
	plan, err := solver.Solve(view.Snapshot, solver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Unschedulable) != 1 || plan.Unschedulable[0].Pod.Name != "claimed" {
		t.Fatalf("unschedulable %+v; want only the pod with a resource claim", plan.Unschedulable)
	}
	if got := plan.Unschedulable[0].Message(); got != "dynamic resource claims: "+solver.DynamicResourceClaimsDetail {
		t.Errorf("event message %q", got)
	}
	if len(plan.Claims) != 1 || plan.Claims[0].Pods[0].Name != "plain" {
		t.Errorf("claims %+v; want one for the plain pod", plan.Claims)
	}
}

package interruption

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-sh/tenon/internal/controlplane"
	"github.com/tenon-sh/tenon/internal/controlplane/testenv"
	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	"github.com/tenon-sh/tenon/pkg/apis/crds"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
	ctrlinterruption "github.com/tenon-sh/tenon/pkg/controllers/interruption"
	"github.com/tenon-sh/tenon/pkg/state"
)

// The interruption controller, given this Queue directly (no CloudProvider), acts on a spot
// interruption the endpoint publishes to SQS: the node is tainted, the claim deleted, the
// offering marked unavailable and the message deleted from the queue.
func TestTheInterruptionControllerActsOnASpotInterruptionFromSQS(t *testing.T) {
	all, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	cp := testenv.Start(t, controlplane.Options{CRDs: all})
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apisv1.AddToScheme, awsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	kc, err := client.New(cp.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}

	e := newEndpoint(t, clock.RealClock{})
	q := e.queue(t)
	ours, foreign := e.launch(t, cluster, 1)[0], e.launch(t, "other", 1)[0]
	zone := e.zoneOf(t, ours)
	providerID := "aws:///" + zone + "/" + ours

	claim := &apisv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "spot-claim", Labels: map[string]string{
			apisv1.LabelInstanceType: "m5.large", apisv1.LabelZone: zone, apisv1.CapacityTypeLabelKey: apisv1.CapacityTypeSpot,
		}},
		Spec: apisv1.NodeClaimSpec{
			NodeClassRef: &apisv1.NodeClassReference{Group: awsv1.Group, Kind: awsv1.EC2NodeClassKind, Name: "default"},
			Requirements: []apisv1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}},
			Resources:    apisv1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		},
	}
	if err := kc.Create(ctx, claim); err != nil {
		t.Fatal(err)
	}
	claim.Status.ProviderID = providerID
	if err := kc.Status().Update(ctx, claim); err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-4.ec2.internal"}, Spec: corev1.NodeSpec{ProviderID: providerID}}
	if err := kc.Create(ctx, node); err != nil {
		t.Fatal(err)
	}

	mgr, err := ctrl.NewManager(cp.RESTConfig(), testenv.ManagerOptions(scheme))
	if err != nil {
		t.Fatal(err)
	}
	cluster := state.NewCluster(clock.RealClock{})
	if err := cluster.Register(context.Background(), mgr.GetCache()); err != nil {
		t.Fatal(err)
	}
	unavailable := cloudprovider.NewUnavailableOfferings(nil)
	if err := ctrlinterruption.Register(mgr, ctrlinterruption.Deps{Queue: q, Cluster: cluster, Unavailable: unavailable}, ctrlinterruption.Options{PollInterval: 200 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})

	for _, id := range []string{ours, foreign} {
		if err := e.s.Interrupt(id, awsapi.DetailSpotInterruption); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the claim deleted and the node tainted", func() (bool, string) {
		c := &apisv1.NodeClaim{}
		cerr := kc.Get(ctx, client.ObjectKey{Name: claim.Name}, c)
		n := &corev1.Node{}
		if err := kc.Get(ctx, client.ObjectKey{Name: node.Name}, n); err != nil {
			return false, err.Error()
		}
		tainted := false
		for _, tt := range n.Spec.Taints {
			tainted = tainted || (tt.Key == apisv1.DisruptedTaintKey && tt.Effect == corev1.TaintEffectNoSchedule)
		}
		gone := cerr != nil || !c.DeletionTimestamp.IsZero()
		return gone && tainted, fmt.Sprintf("claim gone %v, node taints %v", gone, n.Spec.Taints)
	})
	if !unavailable.IsUnavailable("m5.large", zone, apisv1.CapacityTypeSpot) {
		t.Error("the interrupted spot offering was not marked unavailable")
	}
	eventually(t, "the queue emptied", func() (bool, string) {
		n := e.left()
		return n == 0, fmt.Sprintf("%d messages: %v", n, e.s.QueueMessages(queueName))
	})
}

func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: timed out (last: %s)", what, state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

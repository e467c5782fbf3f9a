package aws

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-sh/tenon/internal/controlplane"
	"github.com/tenon-sh/tenon/internal/controlplane/testenv"
	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	"github.com/tenon-sh/tenon/pkg/apis/crds"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/internal/awstest"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
)

var ctx = context.Background()

// apiServer is a control plane (API server only) with the CRDs, and a client for it.
type apiServer struct {
	cfg    *rest.Config
	client client.Client
}

func startAPIServer(t *testing.T) *apiServer {
	t.Helper()
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
	// The provider reads its NodeClass on every call; in the controller that read is served by
	// the manager's cache, so the test's direct client is not rate limited.
	cfg := rest.CopyConfig(cp.RESTConfig())
	cfg.QPS, cfg.Burst = -1, 0
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return &apiServer{cfg: cp.RESTConfig(), client: c}
}

// reservationID is the capacity reservation the test endpoint sells: two m5.large in
// us-east-1a.
const reservationID = "cr-0aaaabbbbccccdddd"

// blockID is the capacity block it sells: one c5.large in us-east-1b, open from an hour before
// the endpoint's clock starts until two days after the wall clock's now.
const blockID = "cr-0b10c0000000000000"

// env is an endpoint, a provider over it and the API server.
type env struct {
	*awstest.Env
	api         *apiServer
	p           *Provider
	unavailable *cloudprovider.UnavailableOfferings
	amd64       string
	arm64       string
}

func newEnv(t *testing.T, api *apiServer) *env {
	t.Helper()
	block := catalog.Window{Start: awstest.Epoch.Add(-time.Hour), End: time.Now().Add(48 * time.Hour)}
	cat, err := catalog.Load("us-east-1", catalog.WithReservations(
		catalog.Reservation{ID: reservationID, InstanceType: "m5.large", Zone: "us-east-1a", Count: 2},
		catalog.Reservation{ID: blockID, InstanceType: "c5.large", Zone: "us-east-1b", Count: 1, Window: block},
	))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{Env: awstest.New(t, awsapi.Options{Catalog: cat}), api: api, unavailable: cloudprovider.NewUnavailableOfferings(nil)}
	e.amd64 = e.Image(t, "amazon-eks-node-al2023-x86_64-standard-1.37-*")
	e.arm64 = e.Image(t, "amazon-eks-node-al2023-arm64-standard-1.37-*")
	p, err := New(Options{
		Client: api.client, EC2: e.EC2, Region: e.Server.Region(), ClusterName: "tenon", RESTConfig: api.cfg,
		ServiceCIDR: "10.100.0.0/16", Unavailable: e.unavailable,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.p = p
	return e
}

// nodeClass creates an EC2NodeClass with a Ready status over the endpoint's network and both
// AL2023 images, after mutate changes it; it is deleted at cleanup.
func (e *env) nodeClass(t *testing.T, name string, mutate func(*awsv1.EC2NodeClass)) *awsv1.EC2NodeClass {
	t.Helper()
	nc := &awsv1.EC2NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: awsv1.EC2NodeClassSpec{
			AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
			SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "tenon"}}},
			SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "tenon"}}},
			Role:                       "tenon-nodes",
			Tags:                       map[string]string{"team": "ml"},
		},
	}
	if err := e.api.client.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.api.client.Delete(context.Background(), nc) })
	nc.Status = awsv1.EC2NodeClassStatus{
		Subnets: e.Subnets(t), SecurityGroups: e.SecurityGroups(t), InstanceProfile: "tenon-nodes",
		AMIs: []awsv1.AMI{
			{ID: e.amd64, Name: "al2023-amd64", Requirements: []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}},
			{ID: e.arm64, Name: "al2023-arm64", Requirements: []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}}}},
		},
		CapacityReservations: []awsv1.CapacityReservation{
			{ID: reservationID, AvailabilityZone: "us-east-1a", InstanceType: "m5.large", InstanceMatchCriteria: "targeted", OwnerID: awsapi.DefaultAccount, ReservationType: awsv1.CapacityReservationTypeDefault, State: awsv1.CapacityReservationStateActive},
			{ID: blockID, AvailabilityZone: "us-east-1b", InstanceType: "c5.large", InstanceMatchCriteria: "targeted", OwnerID: awsapi.DefaultAccount, ReservationType: awsv1.CapacityReservationTypeCapacityBlock, State: awsv1.CapacityReservationStateActive,
				EndTime: &metav1.Time{Time: time.Now().Add(48 * time.Hour)}},
		},
	}
	meta.SetStatusCondition(&nc.Status.Conditions, metav1.Condition{Type: awsv1.ConditionTypeReady, Status: metav1.ConditionTrue, Reason: "Ready", ObservedGeneration: nc.Generation})
	if mutate != nil {
		mutate(nc)
	}
	if err := e.api.client.Status().Update(ctx, nc); err != nil {
		t.Fatal(err)
	}
	return nc
}

// updateStatus changes a NodeClass's status.
func (e *env) updateStatus(t *testing.T, name string, change func(*awsv1.EC2NodeClassStatus)) {
	t.Helper()
	nc := &awsv1.EC2NodeClass{}
	if err := e.api.client.Get(ctx, client.ObjectKey{Name: name}, nc); err != nil {
		t.Fatal(err)
	}
	change(&nc.Status)
	if err := e.api.client.Status().Update(ctx, nc); err != nil {
		t.Fatal(err)
	}
}

// claim is a NodeClaim of NodePool "default" for the NodeClass, with requirements.
func claim(name, nodeClass string, reqs ...apisv1.NodeSelectorRequirementWithMinValues) *apisv1.NodeClaim {
	return &apisv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{apisv1.NodePoolLabelKey: "default"}},
		Spec: apisv1.NodeClaimSpec{
			NodeClassRef: &apisv1.NodeClassReference{Group: awsv1.Group, Kind: awsv1.EC2NodeClassKind, Name: nodeClass},
			Requirements: reqs,
		},
	}
}

func req(key string, op corev1.NodeSelectorOperator, values ...string) apisv1.NodeSelectorRequirementWithMinValues {
	return apisv1.NodeSelectorRequirementWithMinValues{Key: key, Operator: op, Values: values}
}

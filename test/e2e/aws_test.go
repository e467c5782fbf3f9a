package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	k8sclock "k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/registry"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
	"github.com/tenon-sh/tenon/pkg/operator"
)

// awsEnv is tenon running with --cloud-provider aws against the project's EC2-compatible
// endpoint, whose kubelet registers each instance's Node on the control plane (kwok runs the
// pods), and an EC2 client built as the provider builds its own.
type awsEnv struct {
	*env
	server *awsapi.Server
	ec2    *ec2.Client
	sdk    awssdk.Config // what the provider's own clients are built from
}

func startAWS(t *testing.T) *awsEnv {
	t.Helper()
	return launchAWSEnv(t, awsEnvOptions{})
}

// awsEnvOptions vary launchAWSEnv's environment: the endpoint's engine delays (zero takes
// startAWS's quick ones), the operator's options (the AWS provider's are filled in), and an
// interruption queue the endpoint creates and tenon reads (none when empty).
type awsEnvOptions struct {
	Delays            cloud.Delays
	Operator          operator.Options
	InterruptionQueue string
	// NodeClassRequeueInterval is how often EC2NodeClasses are resolved again (0: the
	// provider's default, a minute).
	NodeClassRequeueInterval time.Duration
}

// launchAWSEnv is startAWS with the endpoint's delays and the operator's options chosen.
func launchAWSEnv(t *testing.T, o awsEnvOptions) *awsEnv {
	t.Helper()
	if o.Delays == (cloud.Delays{}) {
		o.Delays = cloud.Delays{Boot: 200 * time.Millisecond, Registration: 200 * time.Millisecond}
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	server, url, err := awsapi.Start(ctx, "127.0.0.1:0", awsapi.Options{
		Clock:  k8sclock.RealClock{},
		Delays: o.Delays,
		Tick:   100 * time.Millisecond,

		InterruptionQueue: o.InterruptionQueue,
	})
	if err != nil {
		t.Fatal(err)
	}
	// The SDK's default chain, as in a pod: credentials from the environment.
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	cfg := aws.Config{ClusterName: "tenon", EndpointURL: url, Region: server.Region(), InterruptionQueue: o.InterruptionQueue,
		NodeClassRequeueInterval: o.NodeClassRequeueInterval}
	opts := o.Operator
	opts.CloudProvider, opts.AWS = aws.ProviderName, cfg
	e := start(t, opts)
	kubelet := &awsapi.Kubelet{Server: server, Client: e.kube, Resync: 200 * time.Millisecond}
	go func() { _ = kubelet.Start(ctx) }()
	sdk, err := registry.LoadAWSConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &awsEnv{env: e, server: server, ec2: ec2.NewFromConfig(sdk), sdk: sdk}
}

// readyNodeClass creates an EC2NodeClass selecting the endpoint's discovery-tagged subnets and
// security groups and its AL2023 images, and waits until tenon's EC2NodeClass status
// controller has resolved it (Ready): subnets, security groups, AMIs through the SSM
// parameters, and an instance profile created for the role.
func (e *awsEnv) readyNodeClass(name string) *awsv1.EC2NodeClass {
	e.t.Helper()
	nc := &awsv1.EC2NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: awsv1.EC2NodeClassSpec{
			AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
			SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{awsapi.DiscoveryTag: "tenon"}}},
			SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{awsapi.DiscoveryTag: "tenon"}}},
			Role:                       "tenon-nodes",
		},
	}
	e.create(nc)
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := e.kube.Get(ctx, client.ObjectKeyFromObject(nc), nc); err != nil {
			return false, nil
		}
		return meta.IsStatusConditionTrue(nc.Status.Conditions, awsv1.ConditionTypeReady), nil
	})
	if err != nil {
		e.t.Fatalf("EC2NodeClass %s not Ready: %v; conditions %+v", name, err, nc.Status.Conditions)
	}
	if len(nc.Status.Subnets) == 0 || len(nc.Status.SecurityGroups) == 0 || len(nc.Status.AMIs) == 0 || nc.Status.InstanceProfile == "" {
		e.t.Fatalf("EC2NodeClass %s is Ready with an incomplete status: %+v", name, nc.Status)
	}
	return nc
}

// A pending Deployment on an EC2NodeClass NodePool becomes NodeClaims that the AWS provider
// launches through CreateFleet on the endpoint; their Nodes register and the pods run.
func TestAWSDeploymentBecomesRunningPods(t *testing.T) {
	e := startAWS(t)
	e.readyNodeClass("default")
	e.create(nodePool("general", "default", []string{"m5", "c5"}, func(np *apisv1.NodePool) {
		np.Spec.Template.Spec.NodeClassRef = &apisv1.NodeClassReference{Group: awsv1.Group, Kind: awsv1.EC2NodeClassKind, Name: "default"}
	}), deployment("web", 6, "500m", "1Gi"))
	pods := e.podsRunning("web", 6, 120*time.Second)
	claims := e.nodeClaims()
	if len(claims) == 0 {
		t.Fatal("no NodeClaims")
	}
	launched := map[string]bool{}
	for _, inst := range e.server.Instances() {
		if inst.State == "running" {
			launched[inst.ProviderID] = true
			if inst.Tags["karpenter.sh/nodeclaim"] == "" || inst.Tags["eks:eks-cluster-name"] != "tenon" || inst.Tags["karpenter.sh/nodepool"] != "general" {
				t.Errorf("instance %s tags %v", inst.ID, inst.Tags)
			}
		}
	}
	for i := range claims {
		c := &claims[i]
		if !strings.HasPrefix(c.Status.ProviderID, "aws:///") || !launched[c.Status.ProviderID] {
			t.Errorf("claim %s has provider ID %q, not a running instance of the endpoint", claimState(c), c.Status.ProviderID)
		}
		if !meta.IsStatusConditionTrue(c.Status.Conditions, apisv1.ConditionTypeRegistered) {
			t.Errorf("claim %s did not register", claimState(c))
		}
	}
	nodes := map[string]bool{}
	for _, n := range e.nodes() {
		nodes[n.Name] = strings.HasPrefix(n.Spec.ProviderID, "aws:///") && launched[n.Spec.ProviderID]
	}
	for _, p := range pods {
		if !nodes[p.Spec.NodeName] {
			t.Errorf("pod %s runs on %s, not a node of an instance tenon launched", p.Name, p.Spec.NodeName)
		}
	}
	if len(launched) != len(claims) {
		t.Errorf("%d running instances for %d NodeClaims", len(launched), len(claims))
	}
}

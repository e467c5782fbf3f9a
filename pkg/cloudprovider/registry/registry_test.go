package registry_test

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/registry"
)

func TestGetDefaultsToTheSimulatedProvider(t *testing.T) {
	p, err := registry.Get("")
	if err != nil || p.Name != "simulated" || registry.Default != "simulated" {
		t.Fatalf("Get(\"\") = %q, %v; default %q", p.Name, err, registry.Default)
	}
}

func TestGetUnknownNamesTheAvailableProviders(t *testing.T) {
	_, err := registry.Get("gce")
	if err == nil || !strings.Contains(err.Error(), `unknown cloud provider "gce"`) || !strings.Contains(err.Error(), "simulated") {
		t.Fatalf("Get(gce) = %v", err)
	}
}

// The kinds the registry lists for a provider are the kinds the built provider reports, so the
// readers that only consult the registry and the controllers that ask the provider agree.
func TestBuiltProviderServesTheKindsTheRegistryLists(t *testing.T) {
	for _, entry := range registry.Providers {
		p, err := registry.Build(entry.Name, registry.Env{Client: fake.NewClientBuilder().Build(), AWS: awsConfig})
		if err != nil {
			t.Fatalf("%s: %v", entry.Name, err)
		}
		if p.Name() != entry.Name || !slices.Equal(p.NodeClasses(), entry.NodeClasses) {
			t.Errorf("%s: built %q serving %v; registry says %v", entry.Name, p.Name(), p.NodeClasses(), entry.NodeClasses)
		}
	}
}

func TestServedBy(t *testing.T) {
	sim := schema.GroupKind{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind}
	if got := registry.ServedBy(sim); !slices.Equal(got, []string{"simulated"}) {
		t.Errorf("ServedBy(SimNodeClass) = %v", got)
	}
	if got := registry.ServedBy(schema.GroupKind{Group: "example.com", Kind: "WidgetNodeClass"}); len(got) != 0 {
		t.Errorf("ServedBy(unknown) = %v", got)
	}
}

func TestBuildRequiresAClient(t *testing.T) {
	if _, err := registry.Build("simulated", registry.Env{}); err == nil {
		t.Error("Build without a client succeeded")
	}
}

// awsConfig is what the aws provider needs to be built: a cluster, its endpoint and CA bundle,
// and a region (no call is made).
var awsConfig = aws.Config{ClusterName: "tenon", ClusterEndpoint: "https://api.example", ClusterCABundle: "Y2E=", Region: "us-east-1"}

func TestAWSNeedsAClusterNameAndAQueueItCanBuild(t *testing.T) {
	c := fake.NewClientBuilder().Build()
	if _, err := registry.Build("aws", registry.Env{Client: c, AWS: aws.Config{Region: "us-east-1"}}); err == nil || !strings.Contains(err.Error(), "--cluster-name") {
		t.Fatalf("without a cluster name: %v", err)
	}
	p, err := registry.Build("aws", registry.Env{Client: c, AWS: awsConfig})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.(cloudprovider.InterruptionQueue); ok {
		t.Fatal("without --interruption-queue the aws provider must not serve a queue")
	}
	withQueue := awsConfig
	withQueue.InterruptionQueue = "tenon-interruptions"
	q, err := registry.Build("aws", registry.Env{Client: c, AWS: withQueue})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := q.(cloudprovider.InterruptionQueue); !ok {
		t.Fatal("with --interruption-queue the aws provider must serve the SQS queue")
	}
}

// Package registry lists the cloud providers tenon can run, by name, with the NodeClass kinds
// each serves and how to build it. The operator, `tenon controller`, `tenon explain` and the
// readers of manifests choose a provider here instead of switching on its name, so adding a
// provider is one entry in Providers.
package registry

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated"
)

// Env is what a provider is built from.
type Env struct {
	// Client reads and writes API objects. Required.
	Client client.Client
	// Reader reads objects that must not come from a stale cache. Default: Client.
	Reader client.Reader
	// Unavailable is tenon's record of offerings that recently failed; the provider launches
	// around it. Optional.
	Unavailable *cloudprovider.UnavailableOfferings
	// Manager, when set, is the running controller's manager: the provider adds the controllers
	// it needs (NodeClass status, its kubelet) to it. Nil for offline use (`tenon explain`).
	Manager manager.Manager
	// RESTConfig is the connection to the API server when there is no Manager (the AWS
	// provider takes the nodes' cluster endpoint and CA bundle from it unless given).
	RESTConfig *rest.Config
	// AWS configures the aws provider (`tenon controller`'s AWS flags).
	AWS aws.Config
}

// Provider is one entry of the registry.
type Provider struct {
	// Name is what --cloud-provider takes.
	Name string
	// NodeClasses are the NodeClass kinds the provider serves: its built provider's
	// NodeClasses returns the same list.
	NodeClasses cloudprovider.Serving
	// New builds the provider.
	New func(Env) (cloudprovider.CloudProvider, error)
	// NodeClass returns an empty object of the provider's NodeClass kind (for controllers
	// that watch it).
	NodeClass func() client.Object
}

// Providers is the registry, the default first.
var Providers = []Provider{
	{Name: simulated.ProviderName, NodeClasses: simulated.NodeClasses, New: newSimulated, NodeClass: func() client.Object { return &simv1alpha1.SimNodeClass{} }},
	{Name: aws.ProviderName, NodeClasses: aws.NodeClasses, New: newAWS, NodeClass: func() client.Object { return &awsv1.EC2NodeClass{} }},
}

// Default is the name of the provider used when none is named.
var Default = Providers[0].Name

// Get returns the provider called name ("" is the default), or an error listing the names.
func Get(name string) (Provider, error) {
	if name == "" {
		name = Default
	}
	for _, p := range Providers {
		if p.Name == name {
			return p, nil
		}
	}
	return Provider{}, fmt.Errorf("unknown cloud provider %q (available: %s)", name, strings.Join(Names(), ", "))
}

// Names lists the providers' names in registry order.
func Names() []string {
	names := make([]string, len(Providers))
	for i, p := range Providers {
		names[i] = p.Name
	}
	return names
}

// ServedBy returns the names of the providers serving the NodeClass kind gk.
func ServedBy(gk schema.GroupKind) []string {
	var names []string
	for _, p := range Providers {
		if slices.Contains(p.NodeClasses, gk) {
			names = append(names, p.Name)
		}
	}
	return names
}

// Build builds the provider called name in env.
func Build(name string, env Env) (cloudprovider.CloudProvider, error) {
	p, err := Get(name)
	if err != nil {
		return nil, err
	}
	if env.Client == nil {
		return nil, errors.New("registry: Env.Client is required")
	}
	if env.Reader == nil {
		env.Reader = env.Client
	}
	return p.New(env)
}

func newSimulated(env Env) (cloudprovider.CloudProvider, error) {
	opts := simulated.Options{Client: env.Client, Reader: env.Reader}
	if env.Unavailable != nil {
		opts.Unavailable = env.Unavailable
	}
	p, err := simulated.New(opts)
	if err != nil {
		return nil, err
	}
	if env.Manager != nil {
		if err := p.SetupWithManager(env.Manager); err != nil {
			return nil, err
		}
	}
	return p, nil
}

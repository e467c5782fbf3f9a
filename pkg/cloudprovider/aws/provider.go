package aws

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/instance"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/launchtemplate"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/userdata"
)

// ProviderName is what Provider.Name returns and --cloud-provider takes.
const ProviderName = "aws"

// NodeClasses is the one NodeClass kind the AWS provider launches from: EC2NodeClass.
var NodeClasses = cloudprovider.Serving{awsv1.EC2NodeClassGroupKind}

// InstanceTypes lists what an EC2NodeClass may launch, from its status (the zones of its
// subnets, its capacity reservations), with current availability and prices. The
// instancetype package's Provider implements it over the EC2 and Pricing APIs; CatalogTypes
// over the embedded catalog.
type InstanceTypes interface {
	List(ctx context.Context, nc *awsv1.EC2NodeClass) ([]*catalog.InstanceType, error)
}

// EC2API is every *ec2.Client method the provider and its instance and launch-template
// providers call.
type EC2API interface {
	instance.EC2API
	launchtemplate.EC2API
}

// Options configure New.
type Options struct {
	// Client reads EC2NodeClasses (a manager's cached client is fine). Required.
	Client client.Reader
	// EC2 is the EC2 client (ec2.NewFromConfig). Required.
	EC2 EC2API
	// Region is the region the clients talk to. Required.
	Region string
	// InstanceTypes lists instance types (default: CatalogTypes over the embedded catalog of
	// Region).
	InstanceTypes InstanceTypes
	// ClusterName is the cluster's name: instances are tagged for it and join it. Required.
	ClusterName string
	// ClusterEndpoint and ClusterCABundle (base64 PEM) are how nodes reach the API server;
	// when empty they are taken from RESTConfig (its host, and its CA data or file).
	ClusterEndpoint string
	ClusterCABundle string
	RESTConfig      *rest.Config
	// ServiceCIDR is the cluster's service CIDR, written into the nodes' configuration
	// (optional: the AMI's bootstrap finds it otherwise).
	ServiceCIDR string
	// Unavailable, when set, is tenon's record of offerings that recently failed: Create
	// launches around it, and records the offerings a fleet reports out of capacity even when
	// it launched elsewhere (for UnavailableTTL, default 3m).
	Unavailable    *cloudprovider.UnavailableOfferings
	UnavailableTTL time.Duration
	// InterruptionQueue, when set, is served by CloudProvider() so that the interruption
	// controller runs.
	InterruptionQueue cloudprovider.InterruptionQueue
	// Instance tunes the instance provider's batching (its EC2 and ClusterName are set here).
	Instance instance.Options
}

// Provider is the AWS cloud provider. It is safe for concurrent use.
type Provider struct {
	client      client.Reader
	region      string
	types       InstanceTypes
	cluster     userdata.Cluster
	unavailable *cloudprovider.UnavailableOfferings
	ttl         time.Duration
	queue       cloudprovider.InterruptionQueue

	instances *instance.Provider
	templates *launchtemplate.Provider

	shapesOnce sync.Once
	shapes     *catalog.Catalog

	// listing is the instances by ID as IsDrifted last listed them, at listedAt.
	listingMu sync.Mutex
	listing   map[string]*instance.Instance
	listedAt  time.Time
}

var _ cloudprovider.CloudProvider = (*Provider)(nil)

// New returns a provider. It makes no calls until used.
func New(opts Options) (*Provider, error) {
	if opts.Client == nil || opts.EC2 == nil {
		return nil, errors.New("aws: Options.Client and Options.EC2 are required")
	}
	if opts.ClusterName == "" {
		return nil, errors.New("aws: the cluster name is required (--cluster-name or CLUSTER_NAME)")
	}
	if opts.Region == "" {
		return nil, errors.New("aws: the region is required (AWS_REGION, the SDK's configuration, or --aws-region)")
	}
	c, err := clusterInfo(opts)
	if err != nil {
		return nil, err
	}
	p := &Provider{client: opts.Client, region: opts.Region, types: opts.InstanceTypes, cluster: c, unavailable: opts.Unavailable, ttl: opts.UnavailableTTL, queue: opts.InterruptionQueue}
	if p.types == nil {
		p.types = &CatalogTypes{Region: opts.Region}
	}
	if p.ttl <= 0 {
		p.ttl = 3 * time.Minute
	}
	io := opts.Instance
	io.EC2, io.ClusterName = opts.EC2, opts.ClusterName
	if p.instances, err = instance.New(io); err != nil {
		return nil, err
	}
	if p.templates, err = launchtemplate.New(launchtemplate.Options{EC2: opts.EC2, ClusterName: opts.ClusterName}); err != nil {
		return nil, err
	}
	return p, nil
}

// clusterInfo is the cluster as nodes see it: the options, else the controller's own
// connection to the API server.
func clusterInfo(opts Options) (userdata.Cluster, error) {
	c := userdata.Cluster{Name: opts.ClusterName, Endpoint: opts.ClusterEndpoint, CABundle: opts.ClusterCABundle, ServiceCIDR: opts.ServiceCIDR}
	if rc := opts.RESTConfig; rc != nil {
		if c.Endpoint == "" {
			if svc := os.Getenv("KUBERNETES_SERVICE_HOST"); svc != "" && strings.Contains(rc.Host, svc) {
				// In a pod the controller reaches the API server through the kubernetes
				// Service's address, which a booting node cannot: kube-proxy is not running yet.
				return c, fmt.Errorf("aws: the controller reaches the API server at the in-cluster address %s, which nodes cannot use to join: set --cluster-endpoint (CLUSTER_ENDPOINT)", rc.Host)
			}
			c.Endpoint = rc.Host
		}
		if c.CABundle == "" {
			ca := rc.CAData
			if len(ca) == 0 && rc.CAFile != "" {
				b, err := os.ReadFile(rc.CAFile)
				if err != nil {
					return c, fmt.Errorf("aws: reading the cluster CA bundle from %s: %w", rc.CAFile, err)
				}
				ca = b
			}
			if len(ca) > 0 {
				c.CABundle = base64.StdEncoding.EncodeToString(ca)
			}
		}
	}
	if c.Endpoint == "" {
		return c, errors.New("aws: the cluster endpoint is unknown: set --cluster-endpoint (CLUSTER_ENDPOINT)")
	}
	if c.CABundle == "" {
		return c, errors.New("aws: the cluster CA bundle is unknown: set --cluster-ca-bundle (CLUSTER_CA_BUNDLE)")
	}
	return c, nil
}

// Name returns "aws".
func (p *Provider) Name() string { return ProviderName }

// NodeClasses returns EC2NodeClass.
func (p *Provider) NodeClasses() []schema.GroupKind { return NodeClasses }

// CloudProvider returns the provider as the operator should hold it: the provider itself, or,
// when Options.InterruptionQueue is set, the provider together with its queue (so that
// `cloud.(cloudprovider.InterruptionQueue)` holds only then).
func (p *Provider) CloudProvider() cloudprovider.CloudProvider {
	if p.queue == nil {
		return p
	}
	return &withQueue{Provider: p, queue: p.queue}
}

// withQueue is a provider with an interruption queue.
type withQueue struct {
	*Provider
	queue cloudprovider.InterruptionQueue
}

var _ cloudprovider.InterruptionQueue = (*withQueue)(nil)

func (w *withQueue) Receive(ctx context.Context) ([]cloudprovider.InterruptionMessage, error) {
	return w.queue.Receive(ctx)
}

func (w *withQueue) Done(ctx context.Context, id string) error { return w.queue.Done(ctx, id) }

// DeleteLaunchTemplates deletes the launch templates made for the NodeClass: the NodeClass
// controller's OnDelete hook calls it before releasing its finalizer.
func (p *Provider) DeleteLaunchTemplates(ctx context.Context, nc *awsv1.EC2NodeClass) error {
	return p.templates.DeleteAll(ctx, nc)
}

// nodeClass returns the EC2NodeClass a reference names, or a *cloudprovider.NodeClassNotReadyError
// when it is not an EC2NodeClass, is missing or being deleted, or its status is not Ready.
func (p *Provider) nodeClass(ctx context.Context, ref *apisv1.NodeClassReference) (*awsv1.EC2NodeClass, error) {
	if ref == nil {
		return nil, &cloudprovider.NodeClassNotReadyError{Reason: "the nodeClassRef is missing"}
	}
	if ref.Group != awsv1.Group || ref.Kind != awsv1.EC2NodeClassKind {
		return nil, &cloudprovider.NodeClassNotReadyError{NodeClass: ref.Name,
			Reason: fmt.Sprintf("the aws provider serves %s %s, not %s %s", awsv1.Group, awsv1.EC2NodeClassKind, ref.Group, ref.Kind)}
	}
	nc := &awsv1.EC2NodeClass{}
	if err := p.client.Get(ctx, types.NamespacedName{Name: ref.Name}, nc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &cloudprovider.NodeClassNotReadyError{NodeClass: ref.Name, Reason: "EC2NodeClass not found"}
		}
		return nil, fmt.Errorf("getting EC2NodeClass %s: %w", ref.Name, err)
	}
	if !nc.DeletionTimestamp.IsZero() {
		return nil, &cloudprovider.NodeClassNotReadyError{NodeClass: nc.Name, Reason: "EC2NodeClass is being deleted"}
	}
	ready := meta.FindStatusCondition(nc.Status.Conditions, awsv1.ConditionTypeReady)
	switch {
	case ready == nil:
		return nil, &cloudprovider.NodeClassNotReadyError{NodeClass: nc.Name, Reason: "its status has no Ready condition yet"}
	case ready.Status != "True":
		return nil, &cloudprovider.NodeClassNotReadyError{NodeClass: nc.Name, Reason: fmt.Sprintf("Ready is %s: %s", ready.Status, ready.Message)}
	case len(nc.Status.Subnets) == 0 || len(nc.Status.AMIs) == 0 || len(nc.Status.SecurityGroups) == 0:
		return nil, &cloudprovider.NodeClassNotReadyError{NodeClass: nc.Name, Reason: "its status lists no subnets, security groups or AMIs"}
	}
	return nc, nil
}

// shapeCatalog is the embedded catalog of the region, for the shapes of instances listed from
// EC2 (their capacity and labels).
func (p *Provider) shapeCatalog() *catalog.Catalog {
	p.shapesOnce.Do(func() {
		if c, err := catalog.Load(p.region); err == nil {
			p.shapes = c
		}
	})
	return p.shapes
}

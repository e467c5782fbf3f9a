package registry

import (
	"context"
	"errors"
	"fmt"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws"
)

// AWSInterruptionQueue builds the SQS interruption queue named by --interruption-queue from
// the SDK configuration. It is set where the queue's package is linked in; while it is nil,
// naming a queue is an error rather than a silently ignored flag.
var AWSInterruptionQueue func(ctx context.Context, cfg awssdk.Config, queue string) (cloudprovider.InterruptionQueue, error)

// AWSInstanceTypes builds the instance-type lister over the EC2 and Pricing APIs. While it is
// nil the provider sells the embedded catalog (aws.CatalogTypes) in the NodeClasses' zones.
var AWSInstanceTypes func(ctx context.Context, cfg awssdk.Config, c aws.Config) (aws.InstanceTypes, error)

// LoadAWSConfig loads the SDK configuration from the default chain (environment, shared
// files, IRSA, EKS Pod Identity, instance metadata), with c.Region when set and every
// service's endpoint at c.EndpointURL when set.
func LoadAWSConfig(ctx context.Context, c aws.Config) (awssdk.Config, error) {
	var opts []func(*config.LoadOptions) error
	if c.Region != "" {
		opts = append(opts, config.WithRegion(c.Region))
	}
	if c.EndpointURL != "" {
		opts = append(opts, config.WithBaseEndpoint(c.EndpointURL))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return awssdk.Config{}, fmt.Errorf("aws: loading the SDK configuration: %w", err)
	}
	return cfg, nil
}

func newAWS(env Env) (cloudprovider.CloudProvider, error) {
	ctx := context.Background()
	c := env.AWS
	cfg, err := LoadAWSConfig(ctx, c)
	if err != nil {
		return nil, err
	}
	rc := env.RESTConfig
	if rc == nil && env.Manager != nil {
		rc = env.Manager.GetConfig()
	}
	if c.ServiceCIDR == "" {
		c.ServiceCIDR = discoverServiceCIDR(ctx, env.Reader)
	}
	opts := aws.Options{
		Client: env.Client, EC2: ec2.NewFromConfig(cfg), Region: cfg.Region, ClusterName: c.ClusterName,
		ClusterEndpoint: c.ClusterEndpoint, ClusterCABundle: c.ClusterCABundle, RESTConfig: rc, ServiceCIDR: c.ServiceCIDR,
		Unavailable: env.Unavailable, InstanceTypes: &aws.CatalogTypes{Region: cfg.Region, VMMemoryOverheadPercent: c.VMMemoryOverheadPercent},
	}
	if AWSInstanceTypes != nil {
		if opts.InstanceTypes, err = AWSInstanceTypes(ctx, cfg, c); err != nil {
			return nil, err
		}
	}
	if c.InterruptionQueue != "" {
		if AWSInterruptionQueue == nil {
			return nil, errors.New("aws: --interruption-queue is set but this build has no SQS interruption queue")
		}
		if opts.InterruptionQueue, err = AWSInterruptionQueue(ctx, cfg, c.InterruptionQueue); err != nil {
			return nil, err
		}
	}
	p, err := aws.New(opts)
	if err != nil {
		return nil, err
	}
	return p.CloudProvider(), nil
}

// discoverServiceCIDR reads the API server's default ServiceCIDR object ("kubernetes"); ""
// when it cannot (an older API server, no permission), and the AMI's bootstrap decides.
func discoverServiceCIDR(ctx context.Context, r client.Reader) string {
	if r == nil {
		return ""
	}
	sc := &networkingv1.ServiceCIDR{}
	if err := r.Get(ctx, client.ObjectKey{Name: "kubernetes"}, sc); err != nil || len(sc.Spec.CIDRs) == 0 {
		if err != nil {
			log.FromContext(ctx).V(1).Info("service CIDR not discovered; set --service-cidr", "error", err.Error())
		}
		return ""
	}
	return sc.Spec.CIDRs[0]
}

package registry

import (
	"context"
	"fmt"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/instancetype"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/interruption"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/nodeclass"
	awspricing "github.com/tenon-sh/tenon/pkg/cloudprovider/aws/pricing"
)

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
	ec2c := ec2.NewFromConfig(cfg)
	opts := aws.Options{
		Client: env.Client, EC2: ec2c, Region: cfg.Region, ClusterName: c.ClusterName,
		ClusterEndpoint: c.ClusterEndpoint, ClusterCABundle: c.ClusterCABundle, RESTConfig: rc, ServiceCIDR: c.ServiceCIDR,
		Unavailable: env.Unavailable,
	}
	// Instance types and prices come from the EC2 and Pricing APIs (the embedded catalog only
	// while they cannot be reached); prices are refreshed on a schedule while the manager runs.
	var pricingAPI awspricing.PricingAPI
	if !c.IsolatedVPC {
		pricingAPI = pricing.NewFromConfig(cfg, func(o *pricing.Options) { o.Region = awspricing.APIRegion(cfg.Region) })
	}
	logger := log.FromContext(ctx)
	prices, err := awspricing.New(pricingAPI, ec2c, awspricing.Options{Region: cfg.Region, IsolatedVPC: c.IsolatedVPC, Logger: logger.WithName("pricing")})
	if err != nil {
		return nil, err
	}
	itOpts := instancetype.Options{Region: cfg.Region, Logger: logger.WithName("instancetypes"), VMMemoryOverheadPercent: c.VMMemoryOverheadPercent}
	if env.Unavailable != nil {
		itOpts.Unavailable = env.Unavailable
	}
	if opts.InstanceTypes, err = instancetype.New(ec2c, prices, itOpts); err != nil {
		return nil, err
	}
	if env.Manager != nil {
		if err := env.Manager.Add(prices); err != nil {
			return nil, err
		}
	}
	if c.InterruptionQueue != "" {
		if opts.InterruptionQueue, err = interruption.New(interruption.Options{
			SQS: sqs.NewFromConfig(cfg), EC2: ec2c, QueueName: c.InterruptionQueue, ClusterName: c.ClusterName,
			Log: log.FromContext(ctx).WithName("interruption-queue"),
		}); err != nil {
			return nil, err
		}
	}
	p, err := aws.New(opts)
	if err != nil {
		return nil, err
	}
	if env.Manager != nil {
		// The EC2NodeClass status controller resolves what the provider launches from: subnets,
		// security groups, AMIs, capacity reservations and the instance profile. Deleting a
		// class deletes the launch templates made for it.
		nc := nodeclass.NewController(nodeclass.Options{
			EC2: ec2c, SSM: ssm.NewFromConfig(cfg), IAM: iam.NewFromConfig(cfg),
			ClusterName: c.ClusterName, Region: cfg.Region, OnDelete: p.DeleteLaunchTemplates,
			RequeueInterval: c.NodeClassRequeueInterval,
		})
		if err := nc.SetupWithManager(env.Manager); err != nil {
			return nil, err
		}
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

package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws"
)

// awsFlagEnv maps the AWS provider's flags to the environment variables Karpenter's AWS
// provider reads, so a deployment's existing settings carry over. fromEnv's TENON_<NAME> wins
// over these; a flag on the command line wins over both.
var awsFlagEnv = map[string]string{
	"cluster-name":               "CLUSTER_NAME",
	"cluster-endpoint":           "CLUSTER_ENDPOINT",
	"cluster-ca-bundle":          "CLUSTER_CA_BUNDLE",
	"service-cidr":               "SERVICE_CIDR",
	"interruption-queue":         "INTERRUPTION_QUEUE",
	"isolated-vpc":               "ISOLATED_VPC",
	"vm-memory-overhead-percent": "VM_MEMORY_OVERHEAD_PERCENT",
}

// registerAWSFlags adds the flags of the aws provider.
func registerAWSFlags(fs *pflag.FlagSet, c *aws.Config) {
	fs.StringVar(&c.ClusterName, "cluster-name", "", "aws: the cluster's name, tagged on every instance and used by nodes to join (required with --cloud-provider aws; env CLUSTER_NAME)")
	fs.StringVar(&c.ClusterEndpoint, "cluster-endpoint", "", "aws: the API server URL nodes join (default: the controller's own; env CLUSTER_ENDPOINT)")
	fs.StringVar(&c.ClusterCABundle, "cluster-ca-bundle", "", "aws: the cluster's CA bundle, base64 PEM, for nodes (default: the controller's own; env CLUSTER_CA_BUNDLE)")
	fs.StringVar(&c.ServiceCIDR, "service-cidr", "", "aws: the cluster's service CIDR for the nodes' DNS (default: the API server's kubernetes ServiceCIDR; env SERVICE_CIDR)")
	fs.StringVar(&c.EndpointURL, "aws-endpoint-url", "", "aws: base URL of every AWS service, e.g. the project's EC2-compatible endpoint (the SDK's AWS_ENDPOINT_URL* variables also work)")
	fs.StringVar(&c.Region, "aws-region", "", "aws: the region (default: the SDK's chain, AWS_REGION)")
	fs.StringVar(&c.InterruptionQueue, "interruption-queue", "", "aws: the SQS queue of EC2 interruption events; empty disables interruption handling (env INTERRUPTION_QUEUE)")
	fs.BoolVar(&c.IsolatedVPC, "isolated-vpc", false, "aws: AWS services without a VPC endpoint cannot be reached, so the Pricing API is not called (env ISOLATED_VPC)")
	fs.Float64Var(&c.VMMemoryOverheadPercent, "vm-memory-overhead-percent", 0.075, "aws: fraction of memory lost to the hypervisor when it is not known (env VM_MEMORY_OVERHEAD_PERCENT)")
}

// fromKarpenterEnv sets the AWS flags still unset from Karpenter's environment variables.
func fromKarpenterEnv(fs *pflag.FlagSet) error {
	for flag, env := range awsFlagEnv {
		fl := fs.Lookup(flag)
		if fl == nil || fl.Changed {
			continue
		}
		if v, ok := os.LookupEnv(env); ok {
			if err := fs.Set(flag, v); err != nil {
				return fmt.Errorf("%s=%q: %w", env, v, err)
			}
		}
	}
	return nil
}

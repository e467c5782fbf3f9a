package aws

import "time"

// Config is what `tenon controller` configures the AWS provider with (its flags, and the
// environment variables Karpenter's AWS provider reads, so an existing deployment's settings
// carry over).
type Config struct {
	// ClusterName names the cluster (--cluster-name, CLUSTER_NAME). Required.
	ClusterName string
	// ClusterEndpoint and ClusterCABundle are how nodes reach the API server
	// (--cluster-endpoint, CLUSTER_ENDPOINT; --cluster-ca-bundle, CLUSTER_CA_BUNDLE); by default
	// the controller's own connection's.
	ClusterEndpoint string
	ClusterCABundle string
	// ServiceCIDR is the cluster's service CIDR (--service-cidr, SERVICE_CIDR); by default the
	// API server's "kubernetes" ServiceCIDR object's.
	ServiceCIDR string
	// EndpointURL, when set, is the base URL of every AWS service (--aws-endpoint-url); the
	// SDK's AWS_ENDPOINT_URL* variables work without it.
	EndpointURL string
	// Region overrides the SDK's region chain (--aws-region).
	Region string
	// InterruptionQueue names the SQS queue of interruption events (--interruption-queue,
	// INTERRUPTION_QUEUE); empty turns interruption handling off.
	InterruptionQueue string
	// IsolatedVPC says AWS services without VPC endpoints (the Pricing API) cannot be reached
	// (--isolated-vpc, ISOLATED_VPC).
	IsolatedVPC bool
	// VMMemoryOverheadPercent is the fraction of memory lost to the hypervisor when it is not
	// known (--vm-memory-overhead-percent, VM_MEMORY_OVERHEAD_PERCENT; default 0.075).
	VMMemoryOverheadPercent float64
	// NodeClassRequeueInterval is how often each EC2NodeClass is resolved again when nothing
	// in the cluster changed, to notice what changes only in AWS (a new AMI behind an alias, a
	// subnet tagged); zero is nodeclass.DefaultRequeueInterval. No flag: tests shorten it.
	NodeClassRequeueInterval time.Duration
}

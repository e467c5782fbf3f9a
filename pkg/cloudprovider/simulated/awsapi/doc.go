// Package awsapi is an EC2-compatible endpoint: an http.Handler that speaks the wire protocols
// of the AWS services an autoscaler's AWS provider calls, so that unmodified aws-sdk-go-v2
// clients (with BaseEndpoint or AWS_ENDPOINT_URL pointing at it) talk to the simulated cloud.
// It is a second front door onto the engine of package cloud: the engine decides capacity,
// insufficient capacity, boot delays and interruptions; this package only translates.
//
// One Server serves, on one address (requests are told apart by their X-Amz-Target header or
// their Action and Version form fields):
//
//   - EC2 (Query protocol, XML responses): DescribeInstanceTypes, DescribeInstanceTypeOfferings,
//     DescribeAvailabilityZones, DescribeSubnets, DescribeSecurityGroups, DescribeImages,
//     DescribeCapacityReservations, DescribeSpotPriceHistory, CreateLaunchTemplate,
//     DescribeLaunchTemplates, DeleteLaunchTemplate, CreateFleet (type instant), DescribeInstances,
//     TerminateInstances, CreateTags and DescribePlacementGroups;
//   - SSM (JSON 1.1): GetParameter and GetParameters over the public EKS-optimized AMI
//     parameters (AL2023 and Bottlerocket), which name AMIs DescribeImages serves;
//   - SQS (JSON 1.0): CreateQueue, GetQueueUrl, SendMessage, ReceiveMessage (long polling),
//     DeleteMessage and ChangeMessageVisibility; the engine's interruptions are published to
//     the configured interruption queue as EventBridge messages;
//   - Pricing (JSON 1.1): GetProducts, the catalog's on-demand prices as price-list documents;
//   - IAM (Query protocol, XML): GetInstanceProfile, CreateInstanceProfile,
//     AddRoleToInstanceProfile, RemoveRoleFromInstanceProfile, TagInstanceProfile and
//     DeleteInstanceProfile.
//
// The catalog's instance types are the EC2 instance types, its zones the availability zones,
// its on-demand and spot prices the prices, and its reservations the capacity reservations. A
// VPC with one subnet per zone and its security groups, tagged for discovery, come from
// Options.Network. Instances are the engine's, with provider IDs aws:///<zone>/<instance-id>;
// the server keeps their tags, launch templates, subnets and images. Options.OnInstance hears
// when an instance's Node should register, gains its devices and goes; Kubelet plays the
// instances' kubelets on an API server with the simulated provider's Node shapes, so the whole
// loop runs against kwok.
//
// Time comes from an injected clock: every request first brings the engine up to the clock's
// now, and Start also does so on a timer so that interruptions reach the queue between
// requests. Faults (throttling, server errors, slow responses) and insufficient capacity per
// offering are injected with Server methods.
package awsapi

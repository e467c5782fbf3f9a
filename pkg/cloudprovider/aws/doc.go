// Package aws is tenon's AWS cloud provider: it launches EC2 instances for NodeClaims whose
// nodeClassRef names a karpenter.k8s.aws/v1 EC2NodeClass, through aws-sdk-go-v2.
//
// Provider implements cloudprovider.CloudProvider:
//
//   - It reads each EC2NodeClass and its status (subnets, security groups, AMIs with their
//     requirements, capacity reservations, instance profile), which the NodeClass status
//     controller resolves; a NodeClass whose status is not Ready gives a
//     *cloudprovider.NodeClassNotReadyError and no launch.
//   - GetInstanceTypes is the InstanceTypes lister's answer for the NodeClass (the EC2 and
//     Pricing APIs in production, CatalogTypes over the embedded catalog offline), less the
//     types none of the NodeClass's AMIs boots.
//   - Create finds an instance already launched for the claim (by its karpenter.sh/nodeclaim
//     tag) before launching, so it is idempotent across retries and restarts; otherwise it
//     renders the user data (package userdata), ensures one launch template per AMI (package
//     launchtemplate) and makes one CreateFleet call with the claim's compatible offerings as
//     overrides (package instance).
//   - Get, List and Delete go through DescribeInstances and TerminateInstances, batched.
//   - IsDrifted compares the instance with the NodeClass's status and static hash.
//
// CloudProvider() returns the provider as the operator holds it, with the interruption queue
// when one is configured.
package aws

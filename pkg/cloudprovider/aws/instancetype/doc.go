// Package instancetype lists the instance types an EC2NodeClass may launch, for the AWS
// provider: the region's types from EC2 DescribeInstanceTypes (hardware virtualisation, x86_64
// or arm64, as Karpenter's AWS provider asks) and where each is sold from
// DescribeInstanceTypeOfferings (by availability zone), turned into *catalog.InstanceType by the
// catalog's own builder (catalog.NewInstanceType), so that a type carries exactly the labels,
// requirements, capacity and overhead the embedded catalog gives it.
//
// Per NodeClass, List restricts offerings to the zones of status.subnets, prices them from a
// Prices source (package pricing), adds one reserved offering per active reservation of
// status.capacityReservations (its free capacity from DescribeCapacityReservations), and derives
// from spec.kubelet and the AMI family:
//
//   - pods: kubelet.maxPods when set, else the VPC CNI limit of the default network card
//     (ENIs × (IPv4 addresses per ENI − 1) + 2); then at most podsPerCore × vCPUs when
//     podsPerCore is set (not on Bottlerocket, whose kubelet ignores it);
//   - kube-reserved: the EKS formula (pkg/catalog's DefaultKubeReserved), its memory from the
//     ENI-limited pod count on AL2, AL2023 and Custom and from the pod count on Bottlerocket,
//     each key replaced by kubelet.kubeReserved when set; system-reserved from
//     kubelet.systemReserved;
//   - the hard eviction threshold: 100Mi memory and 10% of the root volume, or
//     kubelet.evictionHard's memory.available and nodefs.available (a quantity or a percentage
//     of memory after the hypervisor's share, or of the volume);
//   - ephemeral storage: the root volume (blockDeviceMappings' rootVolume, else the AMI
//     family's data device, else 20Gi), or the instance-store disks with instanceStorePolicy
//     RAID0.
//
// The API results are cached for Options.TTL (5 minutes, as upstream) for the whole region, so
// every NodeClass shares them; the per-NodeClass types are cached by what they depend on (API
// data, prices, reservation capacity, zones, kubelet settings) and rebuilt only when one
// changes. Unavailable offerings (Options.Unavailable) are applied on every call.
//
// When EC2 cannot be reached (see pricing.IsUnreachable) List serves the last results it has,
// or, when it has none, the embedded catalog's types in the same zones, and logs the change
// once; any other error (AccessDenied, a bad request) is returned.
package instancetype

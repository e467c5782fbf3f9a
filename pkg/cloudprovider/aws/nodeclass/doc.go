// Package nodeclass is the status controller of karpenter.k8s.aws/v1 EC2NodeClasses: it
// resolves each class's selectors against the AWS APIs and writes what they resolved to into
// its status, which the AWS provider launches from and never resolves itself.
//
// For each EC2NodeClass the Controller resolves, each part on its own:
//
//   - subnets: subnetSelectorTerms (tags, "*" matching any value, or id) through
//     DescribeSubnets, into status.subnets ordered by free addresses, most first;
//   - security groups: securityGroupSelectorTerms (tags, id or name) through
//     DescribeSecurityGroups, into status.securityGroups ordered by ID;
//   - AMIs: an alias (al2023, al2, bottlerocket, windows2019/2022/2025 @latest or a pinned
//     release) through the public SSM parameters of the cluster's Kubernetes version, or id,
//     name, owner, tags and ssmParameter terms, then DescribeImages; one AMI per distinct set of
//     requirements (architecture, and GPU or accelerator for the NVIDIA and Neuron variants),
//     the newest non-deprecated one, into status.amis newest first;
//   - capacity reservations: capacityReservationSelectorTerms through
//     DescribeCapacityReservations (active ones), into status.capacityReservations;
//   - the instance profile: spec.instanceProfile, checked with GetInstanceProfile, or for
//     spec.role one tenon creates with a name derived from the cluster, the region and the
//     class (ProfileName), tagged for the cluster and the class, reused on every reconcile,
//     its role replaced when spec.role changes;
//   - the placement group named by placementGroupSelector, through DescribePlacementGroups.
//
// Each part sets its condition (SubnetsReady, SecurityGroupsReady, AMIsReady,
// CapacityReservationsReady, InstanceProfileReady, PlacementGroupReady); ValidationSucceeded
// is False for spec.kubelet values the kubelet would refuse (reservations that are not
// quantities, eviction thresholds that are neither quantities nor percentages) and otherwise
// summarises the parts a launch needs; Ready is True when every condition of
// awsv1.ReadyDependents is. A part that resolves to nothing, or that AWS refuses definitively
// (access denied, an invalid parameter), sets its condition False with a message naming what
// did not resolve and records a Warning event on the class; the other parts are still
// written. A transient AWS error (throttling, a server error, a timeout) leaves that part's
// status and condition as they were and the class is retried with backoff.
//
// The controller adds the finalizer karpenter.k8s.aws/termination. When a class is deleted it
// waits, with an event, while NodeClaims still name it, then deletes the instance profile it
// created (never one the user named), calls Options.OnDelete and removes the finalizer.
//
// It reconciles EC2NodeClasses only, and watches NodeClaims only to notice the last claim of a
// class being deleted.
package nodeclass

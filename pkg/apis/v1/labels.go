package v1

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Group is the API group of NodePool and NodeClaim; it is also the domain of tenon's node labels,
// annotations and taints, so that manifests written for Karpenter's v1 API apply unchanged.
const Group = "karpenter.sh"

// Capacity types a node can be bought as.
const (
	CapacityTypeSpot     = "spot"
	CapacityTypeOnDemand = "on-demand"
	CapacityTypeReserved = "reserved"
)

// Architectures and operating systems used in node labels.
const (
	ArchitectureAmd64 = "amd64"
	ArchitectureArm64 = "arm64"
	OSLinux           = "linux"
	OSWindows         = "windows"
)

// Labels set on the nodes tenon launches.
const (
	NodePoolLabelKey        = Group + "/nodepool"
	CapacityTypeLabelKey    = Group + "/capacity-type"
	NodeInitializedLabelKey = Group + "/initialized"
	NodeRegisteredLabelKey  = Group + "/registered"

	LabelInstanceType = corev1.LabelInstanceTypeStable // node.kubernetes.io/instance-type
	LabelZone         = corev1.LabelTopologyZone       // topology.kubernetes.io/zone
	LabelRegion       = corev1.LabelTopologyRegion     // topology.kubernetes.io/region
	LabelArch         = corev1.LabelArchStable         // kubernetes.io/arch
	LabelOS           = corev1.LabelOSStable           // kubernetes.io/os
	LabelHostname     = corev1.LabelHostname           // kubernetes.io/hostname
	LabelWindowsBuild = corev1.LabelWindowsBuild       // node.kubernetes.io/windows-build
)

// AWSGroup is the domain of the instance-shape labels, shared with Karpenter's AWS provider so
// that requirements on them in existing manifests keep their meaning.
const AWSGroup = "karpenter.k8s.aws"

// Instance-shape labels. Every instance type in the catalog defines them, so pods and NodePools
// may constrain them like any other well-known label.
const (
	LabelInstanceCategory         = AWSGroup + "/instance-category"
	LabelInstanceFamily           = AWSGroup + "/instance-family"
	LabelInstanceGeneration       = AWSGroup + "/instance-generation"
	LabelInstanceSize             = AWSGroup + "/instance-size"
	LabelInstanceCPU              = AWSGroup + "/instance-cpu"
	LabelInstanceCPUManufacturer  = AWSGroup + "/instance-cpu-manufacturer"
	LabelInstanceMemory           = AWSGroup + "/instance-memory"
	LabelInstanceGPUName          = AWSGroup + "/instance-gpu-name"
	LabelInstanceGPUCount         = AWSGroup + "/instance-gpu-count"
	LabelInstanceGPUManufacturer  = AWSGroup + "/instance-gpu-manufacturer"
	LabelInstanceGPUMemory        = AWSGroup + "/instance-gpu-memory"
	LabelInstanceNetworkBandwidth = AWSGroup + "/instance-network-bandwidth"
	LabelInstanceLocalNVME        = AWSGroup + "/instance-local-nvme"
	LabelInstanceHypervisor       = AWSGroup + "/instance-hypervisor"
	LabelInstanceEBSBandwidth     = AWSGroup + "/instance-ebs-bandwidth"
	LabelInstanceAcceleratorName  = AWSGroup + "/instance-accelerator-name"
	LabelInstanceAcceleratorCount = AWSGroup + "/instance-accelerator-count"
	LabelInstanceAcceleratorMfr   = AWSGroup + "/instance-accelerator-manufacturer"
	LabelCapacityReservationID    = AWSGroup + "/capacity-reservation-id"
	LabelTopologyZoneID           = "topology.k8s.aws/zone-id"
)

// Annotations tenon reads or writes.
const (
	DoNotDisruptAnnotationKey = Group + "/do-not-disrupt"
	NodePoolHashAnnotationKey = Group + "/nodepool-hash"
	// NodeClaimMinValuesRelaxedAnnotationKey is "true" on a NodeClaim whose requirements carry
	// a minValues lowered under the BestEffort min-values policy, "false" otherwise.
	NodeClaimMinValuesRelaxedAnnotationKey = Group + "/nodeclaim-min-values-relaxed"
	NodePoolHashVersionAnnotationKey       = Group + "/nodepool-hash-version"
	NodeClassHashAnnotationKey             = Group + "/nodeclass-hash"
	NodeTerminationTimestampAnnotationKey  = Group + "/node-termination-time"
	ManagedByAnnotationKey                 = Group + "/managed-by"
)

// TerminationFinalizer holds NodeClaims and Nodes until their instance is gone and their pods drained.
const TerminationFinalizer = Group + "/termination"

// Taint keys tenon places on nodes.
const (
	UnregisteredTaintKey = Group + "/unregistered"
	DisruptedTaintKey    = Group + "/disrupted"
)

// UnregisteredNoExecuteTaint is placed on a node at launch and removed once tenon has synced the
// NodeClaim's labels and taints onto it, so that nothing runs on a half-configured node.
var UnregisteredNoExecuteTaint = corev1.Taint{Key: UnregisteredTaintKey, Effect: corev1.TaintEffectNoExecute}

// DisruptedNoScheduleTaint keeps new pods off a node that is being disrupted.
var DisruptedNoScheduleTaint = corev1.Taint{Key: DisruptedTaintKey, Effect: corev1.TaintEffectNoSchedule}

// RestrictedLabelDomains are label domains that a NodePool may not set or require, because the
// kubelet refuses them or tenon owns them. Subdomains are restricted too, except for
// LabelDomainExceptions.
var RestrictedLabelDomains = []string{"kubernetes.io", "k8s.io", Group}

// LabelDomainExceptions are subdomains of restricted domains that may still be used.
var LabelDomainExceptions = []string{"kops.k8s.io", corev1.LabelNamespaceSuffixNode, corev1.LabelNamespaceNodeRestriction}

// WellKnownLabels are the labels tenon or the cloud provider sets on every node it launches, from
// the instance type and offering actually bought. NodePools and pods may constrain them (even
// those in restricted domains), a NodePool that leaves one unconstrained allows every value, and
// tenon never writes them from requirements itself.
var WellKnownLabels = []string{
	NodePoolLabelKey,
	LabelZone,
	LabelRegion,
	LabelInstanceType,
	LabelArch,
	LabelOS,
	CapacityTypeLabelKey,
	LabelWindowsBuild,
	LabelInstanceCategory,
	LabelInstanceFamily,
	LabelInstanceGeneration,
	LabelInstanceSize,
	LabelInstanceCPU,
	LabelInstanceCPUManufacturer,
	LabelInstanceMemory,
	LabelInstanceGPUName,
	LabelInstanceGPUCount,
	LabelInstanceGPUManufacturer,
	LabelInstanceGPUMemory,
	LabelInstanceNetworkBandwidth,
	LabelInstanceLocalNVME,
	LabelInstanceHypervisor,
	LabelInstanceEBSBandwidth,
	LabelInstanceAcceleratorName,
	LabelInstanceAcceleratorCount,
	LabelInstanceAcceleratorMfr,
	LabelCapacityReservationID,
	LabelTopologyZoneID,
}

// RestrictedLabels may never appear in a NodePool's requirements or template labels.
var RestrictedLabels = []string{LabelHostname}

// NormalizedLabels maps deprecated aliases to the label tenon uses; pod requirements on an alias
// are rewritten to the canonical key.
var NormalizedLabels = map[string]string{
	corev1.LabelFailureDomainBetaZone:   LabelZone,
	"beta.kubernetes.io/arch":           LabelArch,
	"beta.kubernetes.io/os":             LabelOS,
	corev1.LabelInstanceType:            LabelInstanceType,
	corev1.LabelFailureDomainBetaRegion: LabelRegion,
}

// IsWellKnownLabel reports whether key is one of WellKnownLabels.
func IsWellKnownLabel(key string) bool { return slices.Contains(WellKnownLabels, key) }

// LabelDomain returns the prefix of a qualified label key ("a.b/c" → "a.b"), or "" if it has none.
func LabelDomain(key string) string {
	if i := strings.IndexByte(key, '/'); i >= 0 {
		return key[:i]
	}
	return ""
}

// IsRestrictedNodeLabel reports whether tenon must not write key onto a node itself: well-known
// labels come from the instance or provider, and restricted domains belong to others.
func IsRestrictedNodeLabel(key string) bool {
	if IsWellKnownLabel(key) {
		return true
	}
	domain := LabelDomain(key)
	for _, d := range LabelDomainExceptions {
		if domain == d || strings.HasSuffix(domain, "."+d) {
			return false
		}
	}
	for _, d := range RestrictedLabelDomains {
		if domain == d || strings.HasSuffix(domain, "."+d) {
			return true
		}
	}
	return slices.Contains(RestrictedLabels, key)
}

// ValidateRequirementKey returns an error naming the key when a NodePool may not constrain it:
// a label in a restricted domain that is neither well known nor a deprecated alias of a
// well-known label (NormalizedLabels), or a restricted label. The CRD schema's CEL rules on
// requirement keys make the same decision; a test holds the two together.
func ValidateRequirementKey(key string) error {
	if IsWellKnownLabel(key) {
		return nil
	}
	if _, ok := NormalizedLabels[key]; ok {
		return nil
	}
	if IsRestrictedNodeLabel(key) {
		return fmt.Errorf("label %q is restricted: use a well-known label (%s) or a label outside the domains %s",
			key, strings.Join(WellKnownLabels, ", "), strings.Join(RestrictedLabelDomains, ", "))
	}
	return nil
}

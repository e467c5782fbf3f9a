package solver

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ReasonKind names the constraint that kept a pod off a NodePool or node.
type ReasonKind string

const (
	// ReasonNoNodePool: the snapshot has no NodePool at all.
	ReasonNoNodePool ReasonKind = "NoNodePool"
	// ReasonInvalidPod: the pod's scheduling constraints could not be read.
	ReasonInvalidPod ReasonKind = "InvalidPod"
	// ReasonRequirement: a pod requirement cannot hold on the pool (Key and Requirement say which).
	ReasonRequirement ReasonKind = "Requirement"
	// ReasonNoOffering: the pool's and pod's requirements together leave no instance type with an
	// offering to buy.
	ReasonNoOffering ReasonKind = "NoOffering"
	// ReasonTaint: the pod does not tolerate a taint of the pool.
	ReasonTaint ReasonKind = "Taint"
	// ReasonResources: no instance type of the pool is large enough for the pod.
	ReasonResources ReasonKind = "Resources"
	// ReasonLimits: the pool's limits leave no room.
	ReasonLimits ReasonKind = "Limits"
	// ReasonTopology: topology spread, pod affinity or anti-affinity leave no domain.
	ReasonTopology ReasonKind = "Topology"
	// ReasonHostPort: a host port is taken wherever the pod could go.
	ReasonHostPort ReasonKind = "HostPort"
	// ReasonUnsupported: the pod asks for something tenon cannot provide on any node (Detail
	// says what), such as dynamic resource claims.
	ReasonUnsupported ReasonKind = "Unsupported"
	// ReasonVolume: a volume of the pod cannot be used (Detail says which and why), such as a
	// PersistentVolumeClaim that does not exist.
	ReasonVolume ReasonKind = "Volume"
	// ReasonMinValues: with the pod, fewer distinct values of a key (Key) would be left among a
	// claim's instance types than a requirement's minValues asks for.
	ReasonMinValues ReasonKind = "MinValues"
	// ReasonDaemonSets: the DaemonSets that would run on the pool's nodes fit on none of its
	// instance types (Detail: their requests, and an example type).
	ReasonDaemonSets ReasonKind = "DaemonSets"
	// ReasonDevices: the pod's dynamic resource claims cannot be served (Detail says which
	// claim or request, and why: no instance type's devices satisfy it, or it cannot be read).
	ReasonDevices ReasonKind = "Devices"
	// ReasonExpendable: the pod's priority is below the expendable cutoff, so no capacity is
	// bought for it (Detail: its priority and the cutoff). Drivers set it; the solver does not.
	ReasonExpendable ReasonKind = "Expendable"
)

// Reason explains, as data, why a pod cannot go to a NodePool.
type Reason struct {
	Kind     ReasonKind `json:"kind"`
	NodePool string     `json:"nodePool,omitempty"`
	// Key and Requirement name the label constraint, for ReasonRequirement and ReasonNoOffering.
	Key         string `json:"key,omitempty"`
	Requirement string `json:"requirement,omitempty"`
	// Detail carries the rest (the taint, the resource, the topology term) in words.
	Detail string `json:"detail,omitempty"`
}

func (r Reason) String() string {
	pool := ""
	if r.NodePool != "" {
		pool = " of nodepool " + r.NodePool
	}
	switch r.Kind {
	case ReasonNoNodePool:
		return "no nodepool exists"
	case ReasonRequirement:
		if r.Detail != "" {
			return fmt.Sprintf("requirement %s is incompatible with %s%s", r.Requirement, r.Detail, pool)
		}
		return fmt.Sprintf("requirement %s is incompatible with the requirements%s", r.Requirement, pool)
	case ReasonNoOffering:
		if r.Requirement != "" {
			return fmt.Sprintf("requirement %s matches no offering%s", r.Requirement, pool)
		}
		return fmt.Sprintf("no instance type with an available offering%s matches the pod's requirements", pool)
	case ReasonTaint:
		return fmt.Sprintf("pod does not tolerate taint %s%s", r.Detail, pool)
	case ReasonResources:
		return fmt.Sprintf("no instance type%s has room for %s", pool, r.Detail)
	case ReasonLimits:
		return fmt.Sprintf("limits%s would be exceeded: %s", pool, r.Detail)
	case ReasonTopology:
		return fmt.Sprintf("%s%s", r.Detail, pool)
	case ReasonHostPort:
		return fmt.Sprintf("host port %s is taken%s", r.Detail, pool)
	case ReasonDaemonSets:
		return fmt.Sprintf("the daemonsets%s request %s", pool, r.Detail)
	case ReasonInvalidPod:
		return "invalid scheduling constraints: " + r.Detail
	case ReasonUnsupported, ReasonVolume:
		return r.Detail
	case ReasonDevices:
		return "dynamic resource claims: " + r.Detail
	case ReasonMinValues:
		return fmt.Sprintf("minValues of %s cannot be kept%s: %s", r.Key, pool, r.Detail)
	case ReasonExpendable:
		return "expendable: " + r.Detail + "; tenon buys no capacity for it (it runs in room other pods leave)"
	}
	return fmt.Sprintf("%s: %s%s", r.Kind, r.Detail, pool)
}

func formatReasons(rs []Reason) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, "; ")
}

// DynamicResourceClaimsDetail is the Detail of the ReasonDevices reason of a pod with dynamic
// resource claims the snapshot resolved no devices for.
const DynamicResourceClaimsDetail = "the claims were not resolved against the instance types' devices"

// deviceReason returns why the pod's dynamic resource claims keep it off every node, or nil:
// a pod with claims needs an entry in devices (see Snapshot.Devices) without a Reason.
func deviceReason(pod *corev1.Pod, devices map[*corev1.Pod]*DeviceNeed) *Reason {
	if len(pod.Spec.ResourceClaims) == 0 {
		return nil
	}
	need := devices[pod]
	switch {
	case need == nil:
		return &Reason{Kind: ReasonDevices, Detail: DynamicResourceClaimsDetail}
	case need.Reason != nil:
		return need.Reason
	}
	return nil
}

// unsupportedError marks a class whose pods ask for what no node can serve.
type unsupportedError struct{ reason Reason }

func (e *unsupportedError) Error() string { return e.reason.String() }

// invalidReason is the reason a class that cannot be placed at all gives.
func invalidReason(err error) Reason {
	if u, ok := err.(*unsupportedError); ok {
		return u.reason
	}
	return Reason{Kind: ReasonInvalidPod, Detail: err.Error()}
}

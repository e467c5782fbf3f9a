package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// Condition reasons of initialization: Initialized is Unknown with one of the Not* reasons
// until the Node is ready for pods.
const (
	ReasonInitialized            = "Initialized"
	ReasonNodeNotReady           = "NodeNotReady"
	ReasonStartupTaintsExist     = "StartupTaintsExist"
	ReasonEphemeralTaintsExist   = "EphemeralTaintsExist"
	ReasonResourcesNotRegistered = "ResourcesNotRegistered"
)

// EphemeralTaints are placed on a Node by Kubernetes itself while it comes up or when it is
// unhealthy; an initialized Node carries none of them. The unregistered taint is tenon's and
// is removed at registration.
var EphemeralTaints = []corev1.Taint{
	{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute},
	{Key: "node.cloudprovider.kubernetes.io/uninitialized", Effect: corev1.TaintEffectNoSchedule},
	apisv1.UnregisteredNoExecuteTaint,
}

// CheckInitialized says whether node, the Node of claim, is initialized: it returns "" when it
// is, and otherwise the reason (one of the Reason* constants) and a message naming what is
// missing. The checks, in order: the Ready condition is True; none of the claim's startup taints
// is left; no ephemeral taint is present; every extended resource the claim requests or
// expects (spec.resources.requests and status.allocatable, non-zero quantities) has a
// non-zero allocatable quantity on the Node.
func CheckInitialized(claim *apisv1.NodeClaim, node *corev1.Node) (reason, message string) {
	if !nodeReady(node) {
		return ReasonNodeNotReady, "the Node is not Ready"
	}
	if left := matching(node.Spec.Taints, claim.Spec.StartupTaints); len(left) > 0 {
		return ReasonStartupTaintsExist, "startup taints left: " + taintList(left)
	}
	if left := matching(node.Spec.Taints, EphemeralTaints); len(left) > 0 {
		return ReasonEphemeralTaintsExist, "ephemeral taints present: " + taintList(left)
	}
	if missing := missingResources(claim, node); len(missing) > 0 {
		return ReasonResourcesNotRegistered, "extended resources not registered yet: " + strings.Join(missing, ", ")
	}
	return "", ""
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// matching returns the taints of have that match (by key and effect) one of want.
func matching(have, want []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range have {
		if slices.ContainsFunc(want, func(w corev1.Taint) bool { return w.MatchTaint(&t) }) {
			out = append(out, t)
		}
	}
	return out
}

func taintList(taints []corev1.Taint) string {
	s := make([]string, len(taints))
	for i := range taints {
		s[i] = taints[i].ToString()
	}
	return strings.Join(s, ", ")
}

// missingResources names, sorted, the extended resources the claim asks for or expects that
// the Node does not offer yet.
func missingResources(claim *apisv1.NodeClaim, node *corev1.Node) []string {
	var missing []string
	seen := map[corev1.ResourceName]bool{}
	for _, list := range []corev1.ResourceList{claim.Spec.Resources.Requests, claim.Status.Allocatable} {
		for name, q := range list {
			if seen[name] || !IsExtendedResource(name) || q.IsZero() {
				continue
			}
			seen[name] = true
			if have, ok := node.Status.Allocatable[name]; !ok || have.IsZero() {
				missing = append(missing, string(name))
			}
		}
	}
	sort.Strings(missing)
	return missing
}

// IsExtendedResource reports whether name is an extended resource (a device plugin's, such as
// nvidia.com/gpu): a qualified name outside the kubernetes.io domains, which native resources
// (cpu, memory, hugepages-*, ...) and their prefixed forms use.
func IsExtendedResource(name corev1.ResourceName) bool {
	s := string(name)
	i := strings.IndexByte(s, '/')
	if i < 0 {
		return false
	}
	domain := s[:i]
	return domain != "kubernetes.io" && !strings.HasSuffix(domain, ".kubernetes.io") && !strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix)
}

// initialize marks the claim and its Node initialized once CheckInitialized passes.
func (c *Controller) initialize(ctx context.Context, claim *apisv1.NodeClaim) error {
	now := c.deps.Clock.Now()
	node := &corev1.Node{}
	if err := c.deps.Client.Get(ctx, types.NamespacedName{Name: claim.Status.NodeName}, node); err != nil {
		if client.IgnoreNotFound(err) != nil {
			return err
		}
		claim.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeInitialized, Status: metav1.ConditionUnknown,
			Reason: ReasonNodeNotFound, Message: fmt.Sprintf("Node %s not found", claim.Status.NodeName)}, now)
		return nil
	}
	if reason, msg := CheckInitialized(claim, node); reason != "" {
		claim.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeInitialized, Status: metav1.ConditionUnknown, Reason: reason, Message: msg}, now)
		return nil
	}
	if node.Labels[apisv1.NodeInitializedLabelKey] != "true" {
		orig := node.DeepCopy()
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		node.Labels[apisv1.NodeInitializedLabelKey] = "true"
		if err := c.deps.Client.Patch(ctx, node, client.MergeFrom(orig)); err != nil {
			return err
		}
	}
	claim.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeInitialized, Status: metav1.ConditionTrue, Reason: ReasonInitialized}, now)
	return nil
}

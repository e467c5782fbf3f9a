package snapshot

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// Requirements parses a NodePool's or NodeClaim's requirements, minValues included.
func Requirements(reqs []apisv1.NodeSelectorRequirementWithMinValues) (scheduling.Requirements, error) {
	var out scheduling.Requirements
	for i, r := range reqs {
		req, err := scheduling.NewRequirement(scheduling.NormalizeKey(r.Key), r.Operator, r.Values...)
		if err != nil {
			return scheduling.Requirements{}, fmt.Errorf("requirement %d: %w", i, err)
		}
		if r.MinValues != nil {
			req.MinValues = *r.MinValues
		}
		out = out.Add(req)
	}
	return out, nil
}

// Usage is what a NodePool's existing nodes and in-flight claims already hold against its limits.
type Usage struct {
	Capacity scheduling.Resources
	Nodes    int
}

// AnnotationZoneBalanceMaxSkew on a NodePool keeps its nodes balanced across its zones, within
// this many nodes (a positive integer), for pods that do not spread themselves
// (solver.NodePool.ZoneMaxSkew).
const AnnotationZoneBalanceMaxSkew = "tenon.sh/zone-balance-max-skew"

// NodePool converts a NodePool and the instance types its NodeClass may launch.
func NodePool(np *apisv1.NodePool, its []*catalog.InstanceType, usage Usage) (solver.NodePool, error) {
	reqs, err := Requirements(np.Spec.Template.Spec.Requirements)
	if err != nil {
		return solver.NodePool{}, fmt.Errorf("nodepool %s: %w", np.Name, err)
	}
	out := solver.NodePool{
		Name:          np.Name,
		Requirements:  reqs,
		Labels:        maps.Clone(np.Spec.Template.Labels),
		Taints:        np.Spec.Template.Spec.Taints,
		StartupTaints: np.Spec.Template.Spec.StartupTaints,
		InstanceTypes: its,
		NodeLimit:     -1,
		Usage:         usage.Capacity,
		Nodes:         usage.Nodes,
	}
	if np.Spec.Weight != nil {
		out.Weight = *np.Spec.Weight
	}
	if v, ok := np.Annotations[AnnotationZoneBalanceMaxSkew]; ok {
		skew, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || skew < 1 {
			return solver.NodePool{}, fmt.Errorf("nodepool %s: annotation %s=%q: want a whole number of nodes, at least 1", np.Name, AnnotationZoneBalanceMaxSkew, v)
		}
		out.ZoneMaxSkew = skew
	}
	for name, q := range np.Spec.Limits {
		if name == apisv1.ResourceNodes {
			n, _, err := scheduling.Amount(scheduling.Pods, q) // a count, as pods are
			if err != nil {
				return solver.NodePool{}, fmt.Errorf("nodepool %s: limits: %s: %w", np.Name, name, err)
			}
			out.NodeLimit = int(n)
			continue
		}
		i, err := scheduling.InternResource(name)
		if err != nil {
			return solver.NodePool{}, fmt.Errorf("nodepool %s: limits: %w", np.Name, err)
		}
		if out.Limits[i], _, err = scheduling.Amount(i, q); err != nil {
			return solver.NodePool{}, fmt.Errorf("nodepool %s: limits: %s: %w", np.Name, name, err)
		}
		out.HasLimit[i] = true
	}
	return out, nil
}

// Node converts a node and the pods bound to it. Nodes tenon launched count as initialized once
// labelled karpenter.sh/initialized; other nodes once Ready.
func Node(node *corev1.Node, pods []*corev1.Pod) (solver.Node, error) {
	alloc, err := scheduling.FromResourceList(node.Status.Allocatable)
	if err != nil {
		return solver.Node{}, fmt.Errorf("node %s: %w", node.Name, err)
	}
	out := solver.Node{
		Name:              node.Name,
		NodePool:          node.Labels[apisv1.NodePoolLabelKey],
		Labels:            node.Labels,
		Taints:            node.Spec.Taints,
		Allocatable:       alloc,
		Pods:              pods,
		MarkedForDeletion: node.DeletionTimestamp != nil,
	}
	if out.NodePool != "" {
		out.Initialized = node.Labels[apisv1.NodeInitializedLabelKey] == "true"
	} else {
		out.Initialized = nodeReady(node)
	}
	return out, nil
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// InFlight converts a NodeClaim whose node has not registered yet. Its labels are the claim's
// labels and the values its requirements pin; its allocatable is the status' when the instance
// is launched, else that of the cheapest instance type it allows (what it will most likely be).
func InFlight(nc *apisv1.NodeClaim, types func(name string) (*catalog.InstanceType, bool)) (solver.Node, error) {
	reqs, err := Requirements(nc.Spec.Requirements)
	if err != nil {
		return solver.Node{}, fmt.Errorf("nodeclaim %s: %w", nc.Name, err)
	}
	labels := maps.Clone(nc.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	for _, r := range reqs.Items() {
		if vs := r.Values(); !r.IsComplement() && len(vs) == 1 {
			if _, set := labels[r.Key]; !set {
				labels[r.Key] = vs[0]
			}
		}
	}
	out := solver.Node{
		Name:              nc.Name,
		NodePool:          nc.Labels[apisv1.NodePoolLabelKey],
		Labels:            labels,
		Taints:            nc.Spec.Taints,
		InFlight:          true,
		MarkedForDeletion: nc.DeletionTimestamp != nil,
	}
	if len(nc.Status.Allocatable) > 0 {
		if out.Allocatable, err = scheduling.FromResourceList(nc.Status.Allocatable); err != nil {
			return solver.Node{}, fmt.Errorf("nodeclaim %s: %w", nc.Name, err)
		}
		return out, nil
	}
	if r, ok := reqs.Get(apisv1.LabelInstanceType); ok && !r.IsComplement() && types != nil {
		best := -1.0
		for _, name := range r.Values() {
			it, ok := types(name)
			if !ok {
				continue
			}
			if o, ok := it.CheapestOffering(reqs); ok && (best < 0 || o.Price < best) {
				best = o.Price
				out.Allocatable = it.Allocatable()
				out.Price = o.Price
			}
		}
	}
	return out, nil
}

// NodeClaim writes a new claim of the plan as a NodeClaim of its NodePool: the template's labels,
// annotations, taints and settings, the claim's requirements (instance types pinned to its
// options), and its pods' requests plus DaemonSet overhead as resource requests. The name is
// generated by the API server from the NodePool's name.
func NodeClaim(c *solver.Claim, np *apisv1.NodePool) *apisv1.NodeClaim {
	tmpl := np.Spec.Template.DeepCopy()
	nc := tmpl.ToNodeClaim()
	nc.GenerateName = np.Name + "-"
	if nc.Labels == nil {
		nc.Labels = map[string]string{}
	}
	nc.Labels[apisv1.NodePoolLabelKey] = np.Name
	for k, v := range c.Requirements.Labels() {
		if _, set := nc.Labels[k]; !set {
			nc.Labels[k] = v
		}
	}
	if nc.Annotations == nil {
		nc.Annotations = map[string]string{}
	}
	nc.Annotations[apisv1.NodePoolHashAnnotationKey] = np.Hash()
	nc.Annotations[apisv1.NodePoolHashVersionAnnotationKey] = apisv1.NodePoolHashVersion
	nc.Annotations[apisv1.NodeClaimMinValuesRelaxedAnnotationKey] = strconv.FormatBool(c.MinValuesRelaxed)
	if groups := claimGangs(c); groups != "" {
		nc.Annotations[AnnotationPodGroups] = groups
	}
	nc.OwnerReferences = []metav1.OwnerReference{{
		APIVersion:         apisv1.SchemeGroupVersion.String(),
		Kind:               "NodePool",
		Name:               np.Name,
		UID:                np.UID,
		BlockOwnerDeletion: boolPtr(true),
	}}
	nc.Spec.Requirements = nil
	for _, r := range c.NodeClaimRequirements().Items() {
		for i, nsr := range r.NodeSelectorRequirements() {
			req := apisv1.NodeSelectorRequirementWithMinValues{Key: nsr.Key, Operator: nsr.Operator, Values: nsr.Values}
			// minValues goes with the key once, whatever operator writes it (Gt and Exists
			// carry it as In does).
			if r.MinValues > 0 && i == 0 {
				mv := r.MinValues
				req.MinValues = &mv
			}
			nc.Spec.Requirements = append(nc.Spec.Requirements, req)
		}
	}
	nc.Spec.Resources.Requests = c.Requests.Add(c.DaemonSetOverhead).ResourceList()
	return nc
}

// AnnotationPodGroups names, on a NodeClaim tenon creates, the PodGroups (namespace/name,
// comma-separated, sorted) that pods it was bought for name in spec.schedulingGroup: the gangs
// whose capacity it is.
const AnnotationPodGroups = "tenon.sh/podgroups"

// claimGangs is the sorted, comma-separated list of the gangs (PodGroups) of the claim's pods.
func claimGangs(c *solver.Claim) string {
	var groups []string
	for _, p := range c.Pods {
		if g := solver.GangOf(p); g != "" && !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	slices.Sort(groups)
	return strings.Join(groups, ",")
}

func boolPtr(b bool) *bool { return &b }

// PodKey names a pod as namespace/name.
func PodKey(p *corev1.Pod) string { return strings.Join([]string{p.Namespace, p.Name}, "/") }

// StaticClaim is the empty claim a static NodePool launches: its template's requirements
// (pinned to the pool) and those of its instance types with an offering they allow, cheapest
// first, at most solver.MaxInstanceTypes. It is nil when no instance type has one.
func StaticClaim(np *apisv1.NodePool, its []*catalog.InstanceType) (*solver.Claim, error) {
	reqs, err := Requirements(np.Spec.Template.Spec.Requirements)
	if err != nil {
		return nil, fmt.Errorf("nodepool %s: %w", np.Name, err)
	}
	reqs = reqs.Add(scheduling.In(apisv1.NodePoolLabelKey, np.Name))
	ranked := catalog.Rank(its, reqs)
	if len(ranked) == 0 {
		return nil, nil
	}
	ranked = ranked[:min(len(ranked), solver.MaxInstanceTypes)]
	cl := &solver.Claim{NodePool: np.Name, Requirements: reqs, InstanceType: ranked[0].Type,
		Offering: ranked[0].Type.Offerings[ranked[0].Offering], Price: ranked[0].Price}
	for _, r := range ranked {
		cl.InstanceTypes = append(cl.InstanceTypes, r.Type)
	}
	return cl, nil
}

// Gang returns the solver's gang of a PodGroup (scheduling.k8s.io/v1beta1, as Kubernetes 1.37
// serves it) with a gang scheduling policy, and false for a PodGroup with another policy (its
// pods are scheduled one by one).
func Gang(pg *schedulingv1beta1.PodGroup) (solver.Gang, bool) {
	gang := pg.Spec.SchedulingPolicy.Gang
	if gang == nil {
		return solver.Gang{}, false
	}
	g := solver.Gang{Namespace: pg.Namespace, Name: pg.Name, MinCount: int(gang.MinCount)}
	if c := pg.Spec.SchedulingConstraints; c != nil && len(c.Topology) > 0 {
		g.TopologyKey = c.Topology[0].Key
	}
	return g, true
}

// DisruptedWhole reports whether a PodGroup's disruption mode is All: its pods' nodes are
// disrupted together or not at all. Unset means Single.
func DisruptedWhole(pg *schedulingv1beta1.PodGroup) bool {
	return pg.Spec.DisruptionMode != nil && pg.Spec.DisruptionMode.All != nil
}

package metrics

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/metrics"
)

func sortStrings(s []string) { slices.Sort(s) }

// Label names of the node and pod series, as Karpenter spells them.
const (
	nodeNameLabel = "node_name"
	phaseLabel    = "phase"
	managedLabel  = "managed"

	podNameLabel      = "name"
	podNamespaceLabel = "namespace"
	podOwnerLabel     = "owner"
	podNodeLabel      = "node"
	podScheduledLabel = "scheduled"
	podZoneLabel      = "zone"
	podArchLabel      = "arch"
	podReadyLabel     = "ready"
)

// wellKnown maps each well-known node label to its metric label name: the part after the
// slash, lower case, dashes as underscores (karpenter.sh/capacity-type → capacity_type).
var wellKnown = func() map[string]string {
	out := map[string]string{}
	for _, k := range apisv1.WellKnownLabels {
		if _, name, ok := strings.Cut(k, "/"); ok {
			out[k] = strings.ReplaceAll(strings.ToLower(name), "-", "_")
		}
	}
	return out
}()

func nodeLabelNames(extra ...string) []string {
	names := []string{nodeNameLabel, phaseLabel, managedLabel}
	seen := map[string]bool{}
	for _, k := range apisv1.WellKnownLabels {
		if n, ok := wellKnown[k]; ok && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	return append(names, extra...)
}

// The gauges, under Karpenter's names and labels.
var (
	NodesAllocatable = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "karpenter_nodes_allocatable",
		Help: "Allocatable resources of each node (CPU in cores, others in their unit), labeled by the node, its phase, whether tenon manages it, its well-known labels and the resource type.",
	}, nodeLabelNames(metrics.ResourceTypeLabel))
	PodsState = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "karpenter_pods_state",
		Help: "1 for every pod, labeled by its name, namespace, owner, node, whether it is scheduled, its node's nodepool, zone, architecture, capacity type and instance type, its phase, whether it is ready, and whether its node is managed.",
	}, []string{podNameLabel, podNamespaceLabel, podOwnerLabel, podNodeLabel, podScheduledLabel, metrics.NodePoolLabel, podZoneLabel,
		podArchLabel, metrics.CapacityTypeLabel, metrics.InstanceTypeLabel, phaseLabel, podReadyLabel, managedLabel})
	PodsStartupDuration = prometheus.NewSummary(prometheus.SummaryOpts{
		Name:       "karpenter_pods_startup_duration_seconds",
		Help:       "Time from a pod's creation until it is ready, for the pods seen pending.",
		Objectives: metrics.SummaryObjectives(),
	})
	NodePoolsUsage = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "karpenter_nodepools_usage",
		Help: "Resources a NodePool's nodes have (its status.resources), by nodepool and resource type.",
	}, []string{metrics.ResourceTypeLabel, metrics.NodePoolLabel})
	NodePoolsLimit = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "karpenter_nodepools_limit",
		Help: "A NodePool's spec.limits, by nodepool and resource type.",
	}, []string{metrics.ResourceTypeLabel, metrics.NodePoolLabel})
	ClusterStateNodeCount = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "karpenter_cluster_state_node_count",
		Help: "Nodes in tenon's mirror of the cluster.",
	})
	ClusterStateSynced = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "karpenter_cluster_state_synced",
		Help: "1 when tenon's mirror of the cluster has synced with the API server (its Node, NodeClaim, Pod and NodePool informers have listed everything), 0 otherwise.",
	})
)

func init() {
	metrics.MustRegister(NodesAllocatable, PodsState, PodsStartupDuration, NodePoolsUsage, NodePoolsLimit, ClusterStateNodeCount, ClusterStateSynced)
}

// quantity is a resource amount as Karpenter reports it: CPU in cores, the rest in units.
func quantity(name corev1.ResourceName, q resource.Quantity) float64 {
	if name == corev1.ResourceCPU {
		return float64(q.MilliValue()) / 1000
	}
	return float64(q.Value())
}

func nodeLabels(n *corev1.Node) prometheus.Labels {
	l := prometheus.Labels{
		nodeNameLabel: n.Name,
		phaseLabel:    string(n.Status.Phase),
		managedLabel:  strconv.FormatBool(n.Labels[apisv1.NodePoolLabelKey] != ""),
	}
	for k, name := range wellKnown {
		l[name] = n.Labels[k]
	}
	return l
}

func podLabels(p *corev1.Pod, node *corev1.Node) prometheus.Labels {
	owner := ""
	if len(p.OwnerReferences) > 0 {
		o := p.OwnerReferences[0]
		owner = fmt.Sprintf("/apis/%s/namespaces/%s/%ss/%s", o.APIVersion, p.Namespace, strings.ToLower(o.Kind), o.Name)
	}
	var nl map[string]string
	if node != nil {
		nl = node.Labels
	}
	return prometheus.Labels{
		podNameLabel:              p.Name,
		podNamespaceLabel:         p.Namespace,
		podOwnerLabel:             owner,
		podNodeLabel:              p.Spec.NodeName,
		podScheduledLabel:         strconv.FormatBool(p.Spec.NodeName != ""),
		metrics.NodePoolLabel:     nl[apisv1.NodePoolLabelKey],
		podZoneLabel:              nl[apisv1.LabelZone],
		podArchLabel:              nl[apisv1.LabelArch],
		metrics.CapacityTypeLabel: nl[apisv1.CapacityTypeLabelKey],
		metrics.InstanceTypeLabel: nl[apisv1.LabelInstanceType],
		phaseLabel:                string(p.Status.Phase),
		podReadyLabel:             strconv.FormatBool(ready(p) != nil),
		managedLabel:              strconv.FormatBool(nl[apisv1.NodePoolLabelKey] != ""),
	}
}

// ready returns the pod's Ready condition when it is True.
func ready(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if c := &p.Status.Conditions[i]; c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

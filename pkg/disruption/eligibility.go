package disruption

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// candidate is a node with what a pass needs about it.
type candidate struct {
	*Node
	pool *apisv1.NodePool
	// pods are the node's pods that would be evicted (reschedulable); all are its pods;
	// place are the pods of pods that need a place elsewhere: all but the expendable ones
	// (priority below Options.ExpendablePriorityCutoff), which are evicted without one.
	pods, all, place []*corev1.Pod
	// disruptionCost weighs evicting the pods (one per pod, more for higher priority).
	disruptionCost float64
	// idle is the part of the node's price its pods leave unused: price × (1 − the larger of
	// its CPU and memory requests over allocatable).
	idle float64
	// unit, when set, holds the nodes that must be disrupted together with this one
	// (wholegroups.go).
	unit *unit
}

// blocked says why a node may not be disrupted gracefully at all, or "" when it may: its own
// state, or that of a node it must go with.
func (d *decider) blocked(c *candidate) (SkipReason, string) {
	if r, msg := d.blockedAlone(c); r != "" {
		return r, msg
	}
	return d.unitBlocked(c)
}

// blockedAlone says why the node itself may not be disrupted gracefully, or "".
func (d *decider) blockedAlone(c *candidate) (SkipReason, string) {
	switch {
	case c.pool == nil:
		return SkipNoNodePool, fmt.Sprintf("nodepool %q does not exist", c.NodePool)
	case c.Deleting:
		return SkipDeleting, "already being deleted"
	case !c.Initialized:
		return SkipNotInitialized, "not initialized"
	case c.Nominated:
		return SkipNominated, "recently nominated for pending pods"
	case c.DoNotDisrupt:
		return SkipDoNotDisruptNode, "the node is annotated " + apisv1.DoNotDisruptAnnotationKey
	}
	for _, p := range c.pods {
		if dnd := apisv1.PodDoNotDisrupt(p, d.snap.Now); dnd.Active {
			return SkipDoNotDisruptPod, doNotDisruptMessage(p, dnd)
		}
	}
	if pdb := d.pdbs.blocking(c.pods); pdb != "" {
		return SkipPDB, "evicting its pods would violate PodDisruptionBudget " + pdb
	}
	return "", ""
}

// doNotDisruptMessage says which pod's do-not-disrupt annotation holds a node, and until when.
func doNotDisruptMessage(p *corev1.Pod, dnd apisv1.DoNotDisrupt) string {
	msg := fmt.Sprintf("pod %s/%s is annotated %s=%s", p.Namespace, p.Name, apisv1.DoNotDisruptAnnotationKey, p.Annotations[apisv1.DoNotDisruptAnnotationKey])
	if !dnd.Until.IsZero() {
		msg += " until " + dnd.Until.UTC().Format(time.RFC3339)
	}
	return msg
}

// pdbState tracks how many more evictions each PodDisruptionBudget allows as a pass commits
// commands.
type pdbState struct {
	pdbs    []*policyv1.PodDisruptionBudget
	sel     []labels.Selector
	allowed []int32
}

func newPDBState(pdbs []*policyv1.PodDisruptionBudget) *pdbState {
	s := &pdbState{}
	for _, p := range pdbs {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err != nil || p.Spec.Selector == nil {
			continue
		}
		s.pdbs = append(s.pdbs, p)
		s.sel = append(s.sel, sel)
		s.allowed = append(s.allowed, p.Status.DisruptionsAllowed)
	}
	return s
}

// counts returns, per PDB, how many of pods it covers.
func (s *pdbState) counts(pods []*corev1.Pod) []int32 {
	out := make([]int32, len(s.pdbs))
	for _, p := range pods {
		for i, pdb := range s.pdbs {
			if pdb.Namespace == p.Namespace && s.sel[i].Matches(labels.Set(p.Labels)) {
				out[i]++
			}
		}
	}
	return out
}

// blocking names a PDB covering some of pods that allows no eviction now (its status allows
// none, or the pass's earlier commands used its allowance up), or "". A PDB that allows fewer
// evictions than it covers pods does not block: the drain evicts through the Eviction API, one
// pod at a time, each once the PDB allows it, so a node holding two pods of a PDB with
// maxUnavailable 1 is drained without ever violating it.
func (s *pdbState) blocking(pods []*corev1.Pod) string {
	for i, n := range s.counts(pods) {
		if n > 0 && s.allowed[i] < 1 {
			return s.pdbs[i].Namespace + "/" + s.pdbs[i].Name
		}
	}
	return ""
}

// take records the evictions of a committed command.
func (s *pdbState) take(pods []*corev1.Pod) {
	for i, n := range s.counts(pods) {
		s.allowed[i] -= n
	}
}

// disruptionCost weighs evicting pods: one per pod, scaled by priority within [0.1, 10].
func disruptionCost(pods []*corev1.Pod) float64 {
	var cost float64
	for _, p := range pods {
		w := 1.0
		if p.Spec.Priority != nil {
			w += float64(*p.Spec.Priority) / (1 << 25)
		}
		cost += min(max(w, 0.1), 10)
	}
	return cost
}

// needingPlace returns the pods that are not expendable.
func needingPlace(pods []*corev1.Pod, cutoff int32) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if !scheduling.Expendable(p, cutoff) {
			out = append(out, p)
		}
	}
	return out
}

func reschedulable(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if solver.Reschedulable(p) {
			out = append(out, p)
		}
	}
	return out
}

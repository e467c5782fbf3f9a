package manifest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	tenonv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/tenon/v1alpha1"
	karpv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// readGroups are the API groups tenon reads objects of. In these groups a kind that does not
// exist is a mistake (apps/v1 Deploymnet, karpenter.sh/v1 Nodepool) and an error, not an
// object to keep aside: dropping it would plan as if the workload were not there. Kinds of other
// groups (a Service mesh's, a provider's) are kept in Set.Other.
var readGroups = map[string]bool{
	"": true, "apps": true, "batch": true, "policy": true, "scheduling.k8s.io": true,
	"storage.k8s.io": true, "node.k8s.io": true, "resource.k8s.io": true,
	karpv1.Group: true, karpv1.AWSGroup: true, simv1alpha1.Group: true, tenonv1alpha1.Group: true,
}

// crdKinds are the kinds, by version, of the custom-resource groups tenon reads that have no
// CRD embedded in pkg/apis/crds, and the providers' and Karpenter's kinds read from Set.Other.
var crdKinds = map[schema.GroupKind][]string{
	{Group: karpv1.Group, Kind: "NodeOverlay"}:       {"v1alpha1"},
	{Group: karpv1.AWSGroup, Kind: "EC2NodeClass"}:   {"v1", "v1beta1"},
	{Group: simv1alpha1.Group, Kind: "SimNodeClass"}: {"v1alpha1"},
	{Group: simv1alpha1.Group, Kind: "SimInstance"}:  {"v1alpha1"},
}

// groupKinds returns the kinds of each read group, by group: the Kubernetes kinds client-go
// knows, the modelled ones and those of crdKinds. List kinds are left out.
var groupKinds = sync.OnceValue(func() map[string]map[string][]string {
	out := map[string]map[string][]string{}
	add := func(gvk schema.GroupVersionKind) {
		if !readGroups[gvk.Group] || strings.HasSuffix(gvk.Kind, "List") {
			return
		}
		if out[gvk.Group] == nil {
			out[gvk.Group] = map[string][]string{}
		}
		if !slices.Contains(out[gvk.Group][gvk.Kind], gvk.Version) {
			out[gvk.Group][gvk.Kind] = append(out[gvk.Group][gvk.Kind], gvk.Version)
		}
	}
	for gvk := range clientgoscheme.Scheme.AllKnownTypes() {
		add(gvk)
	}
	for gvk := range kinds {
		add(gvk)
	}
	for gk, versions := range crdKinds {
		for _, v := range versions {
			add(gk.WithVersion(v))
		}
	}
	add(nodePoolKind)
	add(commitmentKind)
	add(karpv1.SchemeGroupVersion.WithKind("NodeClaim"))
	return out
})

// checkReadKind returns an error for a kind of a read group that is not one of the group's
// kinds in its version, naming the kind field and, when one is close, the kind meant.
func checkReadKind(gvk schema.GroupVersionKind, apiVersion string) error {
	if !readGroups[gvk.Group] {
		return nil
	}
	byKind := groupKinds()[gvk.Group]
	versions, ok := byKind[gvk.Kind]
	switch {
	case ok && slices.Contains(versions, gvk.Version):
		return nil
	case ok:
		return field.Invalid(field.NewPath("kind"), gvk.Kind, fmt.Sprintf("no matches for kind %q in version %q", gvk.Kind, apiVersion))
	}
	msg := fmt.Sprintf("no kind %q in %s", gvk.Kind, apiVersion)
	if m := closestKind(gvk.Kind, byKind); m != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", m)
	}
	return field.Invalid(field.NewPath("kind"), gvk.Kind, msg)
}

// closestKind returns the kind of byKind nearest to kind: the same but for case, or at most two
// edits away; "" when none is.
func closestKind(kind string, byKind map[string][]string) string {
	best, bestDist := "", 3
	for _, k := range slices.Sorted(maps.Keys(byKind)) {
		if strings.EqualFold(k, kind) {
			return k
		}
		if d := editDistance(strings.ToLower(k), strings.ToLower(kind)); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// editDistance is the Damerau–Levenshtein distance (adjacent transpositions count as one edit).
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// KindCount is how many objects of one kind a Set holds.
type KindCount struct {
	schema.GroupKind
	// APIVersion is that of the first object of the kind.
	APIVersion string
	Count      int
	// First is where the first object of the kind was read.
	First Source
}

// Kinds returns the kinds of the Set's objects, in the order each was first read.
func (s *Set) Kinds() []KindCount {
	var out []KindCount
	index := map[schema.GroupKind]int{}
	for _, o := range s.Objects {
		gvk := o.Object.GetObjectKind().GroupVersionKind()
		gk := gvk.GroupKind()
		i, ok := index[gk]
		if !ok {
			i = len(out)
			index[gk] = i
			out = append(out, KindCount{GroupKind: gk, APIVersion: gvk.GroupVersion().String(), First: o.Source})
		}
		out[i].Count++
	}
	return out
}

// Ignored returns the kinds of Kinds that are not among read: what a tool reading only those
// kinds leaves aside, for it to say so.
func (s *Set) Ignored(read ...schema.GroupKind) []KindCount {
	var out []KindCount
	for _, k := range s.Kinds() {
		if !slices.Contains(read, k.GroupKind) {
			out = append(out, k)
		}
	}
	return out
}

// Describe returns "Service (v1): 2 objects, the first at web.yaml:12".
func (k KindCount) Describe() string {
	what := "object"
	if k.Count > 1 {
		what = "objects"
	}
	at := k.First.File
	if k.First.Line > 0 {
		at = fmt.Sprintf("%s:%d", at, k.First.Line)
	}
	return fmt.Sprintf("%s (%s): %d %s, the first at %s", k.Kind, k.APIVersion, k.Count, what, at)
}

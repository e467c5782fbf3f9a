package overlay

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tenon-sh/tenon/pkg/apis/v1alpha1"
	"github.com/tenon-sh/tenon/pkg/manifest"
)

// FromSet returns the NodeOverlays among a set's objects (validated and defaulted against the
// embedded CRD when read), for tenon plan and tenon simulate.
func FromSet(set *manifest.Set) ([]*v1alpha1.NodeOverlay, error) {
	var out []*v1alpha1.NodeOverlay
	for _, u := range set.Other {
		if u.GroupVersionKind().GroupKind() != v1alpha1.NodeOverlayGroupKind {
			continue
		}
		o := &v1alpha1.NodeOverlay{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, o); err != nil {
			return nil, fmt.Errorf("NodeOverlay %s: %w", u.GetName(), err)
		}
		out = append(out, o)
	}
	return out, nil
}

// Problems describes, one line each in name order, the overlays the evaluation does not apply
// and why.
func (e *Evaluation) Problems() []string {
	var out []string
	for _, name := range sortedNames(e.Invalid) {
		out = append(out, fmt.Sprintf("nodeoverlay %s is not applied: %v", name, e.Invalid[name]))
	}
	for _, name := range sortedNames(e.Conflicts) {
		out = append(out, fmt.Sprintf("nodeoverlay %s is not applied: it %s", name, e.Conflicts[name]))
	}
	return out
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

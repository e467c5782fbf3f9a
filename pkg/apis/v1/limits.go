package v1

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Limits cap the total resources of a NodePool's nodes. The resource name "nodes" caps their
// number.
type Limits corev1.ResourceList

// ResourceNodes is the Limits key that caps the number of nodes.
const ResourceNodes corev1.ResourceName = "nodes"

// ExceededBy returns an error naming the first resource (in name order) whose usage is above
// its limit, or nil when usage fits. Resources without a limit are not limited.
func (l Limits) ExceededBy(usage corev1.ResourceList) error {
	for _, name := range sortedNames(usage) {
		limit, ok := l[name]
		if !ok {
			continue
		}
		if used := usage[name]; used.Cmp(limit) > 0 {
			return fmt.Errorf("%s usage %s exceeds the limit %s", name, used.String(), limit.String())
		}
	}
	return nil
}

func sortedNames(list corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(list))
	for name := range list {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
